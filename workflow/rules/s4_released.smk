# S4 (paper 003) at paper scale without training: the authors' released results of their 13 systems (FB-Test-O,
# FB-Test-S, FB-Test-S-C per pooling depth, WN18RR) and label files. `snakemake study_s4_released` builds Figs. 2-6 and
# 8, Tables 1-4 and results/claims/s4_released.tsv.


rule table_s4_released_metrics:
    input:
        results=s4r_result_files,
    output:
        metrics=report(
            R("s4/released/tables/metrics.tsv"),
            caption="../report/s4_released_metrics.rst",
            category="S4 released results",
            labels={"table": "micro and macro metrics per level"},
        ),
        evaluation=R("s4/released/tables/evaluation.tsv"),
    log:
        R("logs/table_s4_released_metrics/table_s4_released_metrics.log"),
    conda:
        CONDA_ENV
    threads: 1
    resources:
        mem_mb=1000,
        runtime=5,
    params:
        data_dir=config["data_dir"],
        folder=S4R["folder"],
        hits_at=S4["hits_at"],
        ir_cutoff=S4["ir_cutoff"],
    script:
        "../../scripts/s4/table_released_metrics.py"


rule table_s4_released_tau_depth:
    input:
        metrics=R("s4/released/tables/metrics.tsv"),
    output:
        table=report(
            R("s4/released/tables/tau_depth.tsv"),
            caption="../report/s4_released_tau_depth.rst",
            category="S4 released results",
            labels={"table": "tau against pooling depth"},
        ),
    log:
        R("logs/table_s4_released_tau_depth/table_s4_released_tau_depth.log"),
    conda:
        CONDA_ENV
    threads: 1
    resources:
        mem_mb=1000,
        runtime=5,
    script:
        "../../scripts/s4/table_tau_depth.py"


rule plot_s4_released_system_ranking:
    input:
        metrics=R("s4/released/tables/metrics.tsv"),
    output:
        pdf=report(
            R("s4/released/figures/fig3_system_ranking.pdf"),
            caption="../report/s4_released_fig3.rst",
            category="S4 released results",
            labels={"figure": "Fig. 3 system ranking", "format": "pdf"},
        ),
        png=report(
            R("s4/released/figures/fig3_system_ranking.png"),
            caption="../report/s4_released_fig3.rst",
            category="S4 released results",
            labels={"figure": "Fig. 3 system ranking", "format": "png"},
        ),
    log:
        R("logs/plot_s4_released_system_ranking/plot_s4_released_system_ranking.log"),
    conda:
        CONDA_ENV
    threads: 1
    resources:
        mem_mb=1000,
        runtime=5,
    params:
        dataset=S4R_TITLE,
        pooled="released pooled labels",
    script:
        "../../scripts/s4/plot_system_ranking.py"


rule plot_s4_released_tau_depth:
    input:
        table=R("s4/released/tables/tau_depth.tsv"),
    output:
        pdf=report(
            R("s4/released/figures/fig4_tau_depth.pdf"),
            caption="../report/s4_released_fig4.rst",
            category="S4 released results",
            labels={"figure": "Fig. 4 tau vs pooling depth", "format": "pdf"},
        ),
        png=report(
            R("s4/released/figures/fig4_tau_depth.png"),
            caption="../report/s4_released_fig4.rst",
            category="S4 released results",
            labels={"figure": "Fig. 4 tau vs pooling depth", "format": "png"},
        ),
    log:
        R("logs/plot_s4_released_tau_depth/plot_s4_released_tau_depth.log"),
    conda:
        CONDA_ENV
    threads: 1
    resources:
        mem_mb=1000,
        runtime=5,
    params:
        dataset=S4R_TITLE,
        pooled="released pooled labels",
    script:
        "../../scripts/s4/plot_tau_depth.py"


rule plot_s4_released_micro_macro:
    input:
        table=R("s4/released/tables/tau_depth.tsv"),
    output:
        pdf=report(
            R("s4/released/figures/fig5_micro_macro.pdf"),
            caption="../report/s4_released_fig5.rst",
            category="S4 released results",
            labels={"figure": "Fig. 5 micro vs macro", "format": "pdf"},
        ),
        png=report(
            R("s4/released/figures/fig5_micro_macro.png"),
            caption="../report/s4_released_fig5.rst",
            category="S4 released results",
            labels={"figure": "Fig. 5 micro vs macro", "format": "png"},
        ),
    log:
        R("logs/plot_s4_released_micro_macro/plot_s4_released_micro_macro.log"),
    conda:
        CONDA_ENV
    threads: 1
    resources:
        mem_mb=1000,
        runtime=5,
    params:
        dataset=S4R_TITLE,
        pooled="released pooled labels",
        hits_at=max(S4["hits_at"]),
    script:
        "../../scripts/s4/plot_micro_macro.py"


rule table_s4_released_categories:
    input:
        results=s4r_result_files,
    output:
        table=report(
            R("s4/released/tables/table3_categories.tsv"),
            caption="../report/s4_released_table3.rst",
            category="S4 released results",
            labels={"table": "Table 3: tau per relation category"},
        ),
    log:
        R("logs/table_s4_released_categories/table_s4_released_categories.log"),
    conda:
        CONDA_ENV
    threads: 1
    resources:
        mem_mb=1000,
        runtime=5,
    params:
        data_dir=config["data_dir"],
        folder=S4R["folder"],
        hits_at=S4["hits_at"],
    script:
        "../../scripts/s4/table_released_categories.py"


rule table_s4_released_reweighted:
    input:
        results=s4r_result_files,
    output:
        table=report(
            R("s4/released/tables/table4_reweighted.tsv"),
            caption="../report/s4_released_table4.rst",
            category="S4 released results",
            labels={"table": "Table 4: relation re-weighting"},
        ),
    log:
        R("logs/table_s4_released_reweighted/table_s4_released_reweighted.log"),
    conda:
        CONDA_ENV
    threads: 1
    resources:
        mem_mb=1000,
        runtime=5,
    params:
        data_dir=config["data_dir"],
        folder=S4R["folder"],
        hits_at=S4["hits_at"],
    script:
        "../../scripts/s4/table_released_reweighted.py"


rule table_s4_released_discriminative:
    input:
        results=s4r_result_files,
    output:
        pairs=R("s4/released/tables/discriminative_pairs.tsv"),
        summary=report(
            R("s4/released/tables/discriminative_summary.tsv"),
            caption="../report/s4_released_discriminative.rst",
            category="S4 released results",
            labels={"table": "discriminative power per metric"},
        ),
    log:
        R("logs/table_s4_released_discriminative/table_s4_released_discriminative.log"),
    conda:
        CONDA_ENV
    threads: 1
    resources:
        mem_mb=1000,
        runtime=5,
    params:
        data_dir=config["data_dir"],
        folder=S4R["folder"],
        hits_at=S4["hits_at"],
        ir_cutoff=S4["ir_cutoff"],
    script:
        "../../scripts/s4/table_released_discriminative.py"


rule plot_s4_released_discriminative:
    input:
        pairs=R("s4/released/tables/discriminative_pairs.tsv"),
    output:
        pdf=report(
            R("s4/released/figures/fig8_discriminative.pdf"),
            caption="../report/s4_released_fig8.rst",
            category="S4 released results",
            labels={"figure": "Fig. 8 discriminative power", "format": "pdf"},
        ),
        png=report(
            R("s4/released/figures/fig8_discriminative.png"),
            caption="../report/s4_released_fig8.rst",
            category="S4 released results",
            labels={"figure": "Fig. 8 discriminative power", "format": "png"},
        ),
    log:
        R("logs/plot_s4_released_discriminative/plot_s4_released_discriminative.log"),
    conda:
        CONDA_ENV
    threads: 1
    resources:
        mem_mb=1000,
        runtime=5,
    params:
        hits_at=max(S4["hits_at"]),
        ir_cutoff=S4["ir_cutoff"],
    script:
        "../../scripts/s4/plot_released_discriminative.py"


rule table_s4_released_label_sets:
    input:
        labels=s4r_label_files,
        data=s4r_dataset_files,
    output:
        table1=report(
            R("s4/released/tables/table1_label_sets.tsv"),
            caption="../report/s4_released_table1.rst",
            category="S4 released results",
            labels={"table": "Table 1: label sets"},
        ),
        pool=report(
            R("s4/released/tables/pool_statistics.tsv"),
            caption="../report/s4_released_pool.rst",
            category="S4 released results",
            labels={"table": "pool statistics"},
        ),
    log:
        R("logs/table_s4_released_label_sets/table_s4_released_label_sets.log"),
    conda:
        CONDA_ENV
    threads: 1
    resources:
        mem_mb=4000,
        runtime=10,
    params:
        data_dir=config["data_dir"],
        labels=S4R["labels"],
        dataset_key=S4R["dataset"],
        dataset_spec=s4r_dataset_spec,
    script:
        "../../scripts/s4/table_released_label_sets.py"


rule table_s4_released_relation_distribution:
    input:
        labels=s4r_label_files,
        data=s4r_dataset_files,
    output:
        distribution=R("s4/released/tables/relation_distribution.tsv"),
        kl=report(
            R("s4/released/tables/kl_divergence.tsv"),
            caption="../report/s4_released_kl.rst",
            category="S4 released results",
            labels={"table": "KL divergences of the relation distributions"},
        ),
    log:
        R(
            "logs/table_s4_released_relation_distribution/table_s4_released_relation_distribution.log"
        ),
    conda:
        CONDA_ENV
    threads: 1
    resources:
        mem_mb=4000,
        runtime=10,
    params:
        data_dir=config["data_dir"],
        labels=S4R["labels"],
        dataset_key=S4R["dataset"],
        dataset_spec=s4r_dataset_spec,
    script:
        "../../scripts/s4/table_released_relation_distribution.py"


rule plot_s4_released_relation_distribution:
    input:
        distribution=R("s4/released/tables/relation_distribution.tsv"),
        kl=R("s4/released/tables/kl_divergence.tsv"),
    output:
        pdf=report(
            R("s4/released/figures/fig2_relation_distribution.pdf"),
            caption="../report/s4_released_fig2.rst",
            category="S4 released results",
            labels={"figure": "Fig. 2 relation distributions", "format": "pdf"},
        ),
        png=report(
            R("s4/released/figures/fig2_relation_distribution.png"),
            caption="../report/s4_released_fig2.rst",
            category="S4 released results",
            labels={"figure": "Fig. 2 relation distributions", "format": "png"},
        ),
    log:
        R(
            "logs/plot_s4_released_relation_distribution/plot_s4_released_relation_distribution.log"
        ),
    conda:
        CONDA_ENV
    threads: 1
    resources:
        mem_mb=1000,
        runtime=5,
    script:
        "../../scripts/s4/plot_released_relation_distribution.py"


rule table_s4_released_examples:
    input:
        labels=s4r_label_files,
    output:
        table=report(
            R("s4/released/tables/table2_examples.tsv"),
            caption="../report/s4_released_table2.rst",
            category="S4 released results",
            labels={"table": "Table 2: annotated examples"},
        ),
    log:
        R("logs/table_s4_released_examples/table_s4_released_examples.log"),
    conda:
        CONDA_ENV
    threads: 1
    resources:
        mem_mb=1000,
        runtime=5,
    params:
        data_dir=config["data_dir"],
        labels=S4R["labels"],
        questions=S4R["examples"],
    script:
        "../../scripts/s4/table_released_examples.py"


rule table_s4_released_relation_mrr:
    input:
        results=s4r_result_files,
    output:
        table=R("s4/released/tables/relation_mrr.tsv"),
    log:
        R("logs/table_s4_released_relation_mrr/table_s4_released_relation_mrr.log"),
    conda:
        CONDA_ENV
    threads: 1
    resources:
        mem_mb=1000,
        runtime=5,
    params:
        data_dir=config["data_dir"],
        folder=S4R["folder"],
        system=S4R["relation_system"],
    script:
        "../../scripts/s4/table_released_relation_mrr.py"


rule plot_s4_released_relation_mrr:
    input:
        table=R("s4/released/tables/relation_mrr.tsv"),
    output:
        pdf=report(
            R("s4/released/figures/fig6_relation_mrr.pdf"),
            caption="../report/s4_released_fig6.rst",
            category="S4 released results",
            labels={"figure": "Fig. 6 MRR per relation", "format": "pdf"},
        ),
        png=report(
            R("s4/released/figures/fig6_relation_mrr.png"),
            caption="../report/s4_released_fig6.rst",
            category="S4 released results",
            labels={"figure": "Fig. 6 MRR per relation", "format": "png"},
        ),
    log:
        R("logs/plot_s4_released_relation_mrr/plot_s4_released_relation_mrr.log"),
    conda:
        CONDA_ENV
    threads: 1
    resources:
        mem_mb=1000,
        runtime=5,
    params:
        system=S4R["relation_system"],
    script:
        "../../scripts/s4/plot_released_relation_mrr.py"


rule table_s4_released_claims:
    input:
        metrics=R("s4/released/tables/metrics.tsv"),
        tau=R("s4/released/tables/tau_depth.tsv"),
        evaluation=R("s4/released/tables/evaluation.tsv"),
        table1=R("s4/released/tables/table1_label_sets.tsv"),
        pool=R("s4/released/tables/pool_statistics.tsv"),
        kl=R("s4/released/tables/kl_divergence.tsv"),
        examples=R("s4/released/tables/table2_examples.tsv"),
        table3=R("s4/released/tables/table3_categories.tsv"),
        table4=R("s4/released/tables/table4_reweighted.tsv"),
        discriminative=R("s4/released/tables/discriminative_summary.tsv"),
        relation_mrr=R("s4/released/tables/relation_mrr.tsv"),
    output:
        table=report(
            R("claims/s4_released.tsv"),
            caption="../report/claims_s4_released.rst",
            category="Claims",
            labels={"table": "S4 claims (released results)"},
        ),
    log:
        R("logs/table_s4_released_claims/table_s4_released_claims.log"),
    conda:
        CONDA_ENV
    threads: 1
    resources:
        mem_mb=1000,
        runtime=5,
    script:
        "../../scripts/s4/table_released_claims.py"


rule study_s4_released:
    input:
        R("s4/released/tables/metrics.tsv"),
        R("s4/released/tables/evaluation.tsv"),
        R("s4/released/tables/tau_depth.tsv"),
        R("s4/released/tables/table1_label_sets.tsv"),
        R("s4/released/tables/pool_statistics.tsv"),
        R("s4/released/tables/relation_distribution.tsv"),
        R("s4/released/tables/kl_divergence.tsv"),
        R("s4/released/tables/table2_examples.tsv"),
        R("s4/released/tables/table3_categories.tsv"),
        R("s4/released/tables/table4_reweighted.tsv"),
        R("s4/released/tables/discriminative_pairs.tsv"),
        R("s4/released/tables/discriminative_summary.tsv"),
        R("s4/released/tables/relation_mrr.tsv"),
        expand(
            R("s4/released/figures/{figure}.{ext}"),
            figure=[
                "fig2_relation_distribution",
                "fig3_system_ranking",
                "fig4_tau_depth",
                "fig5_micro_macro",
                "fig6_relation_mrr",
                "fig8_discriminative",
            ],
            ext=["pdf", "png"],
        ),
        R("claims/s4_released.tsv"),
