# S4 (paper 003, Zhou et al. 2022): label sparsity - sparse vs pooled labels, micro vs macro metrics.
# Every figure and table has its own rule; `snakemake study_s4` builds them all, per studied dataset and seed.


rule build_s4_labels_each:
    input:
        unpack(s4_label_inputs),
        data=dataset_files,
    output:
        triples=R("s4/{dataset}/{seed}/labels/triples.tsv"),
        judgments=R("s4/{dataset}/{seed}/labels/judgments.tsv"),
        meta=R("s4/{dataset}/{seed}/labels/meta.json"),
        levels=report(
            R("s4/{dataset}/{seed}/labels/levels.tsv"),
            caption="../report/s4_labels.rst",
            category="S4 label sparsity",
            subcategory="{dataset}",
            labels={"table": "label levels", "seed": "{seed}"},
        ),
    log:
        R("logs/build_s4_labels/{dataset}/{seed}.log"),
    conda:
        CONDA_ENV
    threads: 1
    resources:
        mem_mb=4000,
        runtime=20,
    params:
        dataset_spec=dataset_spec,
        data_dir=config["data_dir"],
        released=S4["released"],
        pool_systems=s4_pool_systems,
        hide_fraction=S4["simulation"]["hide_fraction"],
        simulation_seed=S4["simulation"]["seed"],
        max_depth=S4_MAX_DEPTH,
    script:
        "../../scripts/s4/build_labels.py"


rule compute_s4_categories_each:
    input:
        data=dataset_files,
    output:
        categories=report(
            R("s4/{dataset}/categories.tsv"),
            caption="../report/s4_categories.rst",
            category="S4 label sparsity",
            subcategory="{dataset}",
            labels={"table": "relation categories"},
        ),
    log:
        R("logs/compute_s4_categories/{dataset}.log"),
    conda:
        CONDA_ENV
    threads: 1
    resources:
        mem_mb=4000,
        runtime=10,
    params:
        dataset_spec=dataset_spec,
        data_dir=config["data_dir"],
        threshold=S4["category_threshold"],
        released=S4["released"],
    script:
        "../../scripts/s4/compute_categories.py"


rule compute_s4_ranks:
    input:
        data=dataset_files,
        model=R("models/{dataset}/{model}/{seed}/model.pt"),
        triples=R("s4/{dataset}/{seed}/labels/triples.tsv"),
    output:
        ranks=R("s4/{dataset}/{seed}/ranks/{model}.parquet"),
        timing=R("s4/{dataset}/{seed}/ranks/{model}.json"),
    log:
        R("logs/compute_s4_ranks/{dataset}/{seed}/{model}.log"),
    conda:
        CONDA_ENV
    threads: 1
    resources:
        mem_mb=8000,
        runtime=120,
        gpu=0,
    params:
        dataset_spec=dataset_spec,
        data_dir=config["data_dir"],
        memory_budget_mb=config["ranking"]["memory_budget_mb"],
    script:
        "../../scripts/s4/compute_ranks.py"


rule evaluate_s4_levels_each:
    input:
        triples=R("s4/{dataset}/{seed}/labels/triples.tsv"),
        judgments=R("s4/{dataset}/{seed}/labels/judgments.tsv"),
        ranks=s4_ranks,
    output:
        answers=R("s4/{dataset}/{seed}/answers.parquet"),
        questions=R("s4/{dataset}/{seed}/questions.parquet"),
        metrics=report(
            R("s4/{dataset}/{seed}/metrics.tsv"),
            caption="../report/s4_metrics.rst",
            category="S4 label sparsity",
            subcategory="{dataset}",
            labels={"table": "micro and macro metrics per level", "seed": "{seed}"},
        ),
    log:
        R("logs/evaluate_s4_levels/{dataset}/{seed}.log"),
    conda:
        CONDA_ENV
    threads: 1
    resources:
        mem_mb=8000,
        runtime=30,
    params:
        systems=s4_label_set_systems,
        max_depth=S4_MAX_DEPTH,
        rank_type=S4["rank_type"],
        hits_at=S4["hits_at"],
        ir_cutoff=S4["ir_cutoff"],
    script:
        "../../scripts/s4/evaluate_levels.py"


rule table_s4_tau_depth_each:
    input:
        metrics=R("s4/{dataset}/{seed}/metrics.tsv"),
    output:
        table=report(
            R("s4/{dataset}/{seed}/tables/tau_depth.tsv"),
            caption="../report/s4_tau_depth.rst",
            category="S4 label sparsity",
            subcategory="{dataset}",
            labels={"table": "tau against pooling depth", "seed": "{seed}"},
        ),
    log:
        R("logs/table_s4_tau_depth/{dataset}/{seed}.log"),
    conda:
        CONDA_ENV
    threads: 1
    resources:
        mem_mb=1000,
        runtime=5,
    script:
        "../../scripts/s4/table_tau_depth.py"


rule table_s4_categories_each:
    input:
        answers=R("s4/{dataset}/{seed}/answers.parquet"),
        categories=R("s4/{dataset}/categories.tsv"),
    output:
        table=report(
            R("s4/{dataset}/{seed}/tables/table3_categories.tsv"),
            caption="../report/s4_table3.rst",
            category="S4 label sparsity",
            subcategory="{dataset}",
            labels={"table": "Table 3: tau per relation category", "seed": "{seed}"},
        ),
    log:
        R("logs/table_s4_categories/{dataset}/{seed}.log"),
    conda:
        CONDA_ENV
    threads: 1
    resources:
        mem_mb=2000,
        runtime=5,
    params:
        level=S4["analysis_level"],
        max_depth=S4_MAX_DEPTH,
        hits_at=S4["hits_at"],
    script:
        "../../scripts/s4/table_categories.py"


rule table_s4_reweighted_each:
    input:
        answers=R("s4/{dataset}/{seed}/answers.parquet"),
    output:
        table=report(
            R("s4/{dataset}/{seed}/tables/table4_reweighted.tsv"),
            caption="../report/s4_table4.rst",
            category="S4 label sparsity",
            subcategory="{dataset}",
            labels={"table": "Table 4: relation re-weighting", "seed": "{seed}"},
        ),
    log:
        R("logs/table_s4_reweighted/{dataset}/{seed}.log"),
    conda:
        CONDA_ENV
    threads: 1
    resources:
        mem_mb=2000,
        runtime=5,
    params:
        level=S4["analysis_level"],
        max_depth=S4_MAX_DEPTH,
        hits_at=S4["hits_at"],
    script:
        "../../scripts/s4/table_reweighted.py"


rule table_s4_stability_each:
    input:
        answers=R("s4/{dataset}/{seed}/answers.parquet"),
        questions=R("s4/{dataset}/{seed}/questions.parquet"),
    output:
        table=report(
            R("s4/{dataset}/{seed}/tables/stability.tsv"),
            caption="../report/s4_stability.rst",
            category="S4 label sparsity",
            subcategory="{dataset}",
            labels={"table": "stability to the test data", "seed": "{seed}"},
        ),
    log:
        R("logs/table_s4_stability/{dataset}/{seed}.log"),
    conda:
        CONDA_ENV
    threads: 1
    resources:
        mem_mb=4000,
        runtime=10,
    params:
        levels=S4["stability"]["levels"],
        max_depth=S4_MAX_DEPTH,
        fractions=S4["stability"]["fractions"],
        repeats=S4["stability"]["repeats"],
        seed=S4["stability"]["seed"],
        hits_at=S4["hits_at"],
        ir_cutoff=S4["ir_cutoff"],
    script:
        "../../scripts/s4/table_stability.py"


rule table_s4_discriminative_each:
    input:
        answers=R("s4/{dataset}/{seed}/answers.parquet"),
        questions=R("s4/{dataset}/{seed}/questions.parquet"),
    output:
        table=report(
            R("s4/{dataset}/{seed}/tables/discriminative.tsv"),
            caption="../report/s4_discriminative.rst",
            category="S4 label sparsity",
            subcategory="{dataset}",
            labels={"table": "discriminative power", "seed": "{seed}"},
        ),
    log:
        R("logs/table_s4_discriminative/{dataset}/{seed}.log"),
    conda:
        CONDA_ENV
    threads: 1
    resources:
        mem_mb=4000,
        runtime=10,
    params:
        levels=S4["discriminative"]["levels"],
        max_depth=S4_MAX_DEPTH,
        hits_at=S4["hits_at"],
        ir_cutoff=S4["ir_cutoff"],
        permutations=config["uncertainty"]["permutations"],
        # the label set's stream of sign vectors (the job combines it with level, family and metric)
        seed=s4_discriminative_seed,
    script:
        "../../scripts/s4/table_discriminative.py"


rule plot_s4_system_ranking_each:
    input:
        metrics=R("s4/{dataset}/{seed}/metrics.tsv"),
    output:
        pdf=report(
            R("s4/{dataset}/{seed}/figures/fig3_system_ranking.pdf"),
            caption="../report/s4_fig3.rst",
            category="S4 label sparsity",
            subcategory="{dataset}",
            labels={
                "figure": "Fig. 3 system ranking",
                "seed": "{seed}",
                "format": "pdf",
            },
        ),
        png=report(
            R("s4/{dataset}/{seed}/figures/fig3_system_ranking.png"),
            caption="../report/s4_fig3.rst",
            category="S4 label sparsity",
            subcategory="{dataset}",
            labels={
                "figure": "Fig. 3 system ranking",
                "seed": "{seed}",
                "format": "png",
            },
        ),
    log:
        R("logs/plot_s4_system_ranking/{dataset}/{seed}.log"),
    conda:
        CONDA_ENV
    threads: 1
    resources:
        mem_mb=1000,
        runtime=5,
    params:
        pooled=s4_pooled_labels,
        dataset=s4_dataset_key,
    script:
        "../../scripts/s4/plot_system_ranking.py"


rule plot_s4_tau_depth_each:
    input:
        table=R("s4/{dataset}/{seed}/tables/tau_depth.tsv"),
    output:
        pdf=report(
            R("s4/{dataset}/{seed}/figures/fig4_tau_depth.pdf"),
            caption="../report/s4_fig4.rst",
            category="S4 label sparsity",
            subcategory="{dataset}",
            labels={
                "figure": "Fig. 4 tau vs pooling depth",
                "seed": "{seed}",
                "format": "pdf",
            },
        ),
        png=report(
            R("s4/{dataset}/{seed}/figures/fig4_tau_depth.png"),
            caption="../report/s4_fig4.rst",
            category="S4 label sparsity",
            subcategory="{dataset}",
            labels={
                "figure": "Fig. 4 tau vs pooling depth",
                "seed": "{seed}",
                "format": "png",
            },
        ),
    log:
        R("logs/plot_s4_tau_depth/{dataset}/{seed}.log"),
    conda:
        CONDA_ENV
    threads: 1
    resources:
        mem_mb=1000,
        runtime=5,
    params:
        pooled=s4_pooled_labels,
        dataset=s4_dataset_key,
    script:
        "../../scripts/s4/plot_tau_depth.py"


rule plot_s4_micro_macro_each:
    input:
        table=R("s4/{dataset}/{seed}/tables/tau_depth.tsv"),
    output:
        pdf=report(
            R("s4/{dataset}/{seed}/figures/fig5_micro_macro.pdf"),
            caption="../report/s4_fig5.rst",
            category="S4 label sparsity",
            subcategory="{dataset}",
            labels={
                "figure": "Fig. 5 micro vs macro",
                "seed": "{seed}",
                "format": "pdf",
            },
        ),
        png=report(
            R("s4/{dataset}/{seed}/figures/fig5_micro_macro.png"),
            caption="../report/s4_fig5.rst",
            category="S4 label sparsity",
            subcategory="{dataset}",
            labels={
                "figure": "Fig. 5 micro vs macro",
                "seed": "{seed}",
                "format": "png",
            },
        ),
    log:
        R("logs/plot_s4_micro_macro/{dataset}/{seed}.log"),
    conda:
        CONDA_ENV
    threads: 1
    resources:
        mem_mb=1000,
        runtime=5,
    params:
        pooled=s4_pooled_labels,
        dataset=s4_dataset_key,
        hits_at=max(S4["hits_at"]),
    script:
        "../../scripts/s4/plot_micro_macro.py"


rule plot_s4_relation_mrr_each:
    input:
        answers=R("s4/{dataset}/{seed}/answers.parquet"),
        metrics=R("s4/{dataset}/{seed}/metrics.tsv"),
    output:
        pdf=report(
            R("s4/{dataset}/{seed}/figures/fig6_relation_mrr.pdf"),
            caption="../report/s4_fig6.rst",
            category="S4 label sparsity",
            subcategory="{dataset}",
            labels={
                "figure": "Fig. 6 MRR per relation",
                "seed": "{seed}",
                "format": "pdf",
            },
        ),
        png=report(
            R("s4/{dataset}/{seed}/figures/fig6_relation_mrr.png"),
            caption="../report/s4_fig6.rst",
            category="S4 label sparsity",
            subcategory="{dataset}",
            labels={
                "figure": "Fig. 6 MRR per relation",
                "seed": "{seed}",
                "format": "png",
            },
        ),
    log:
        R("logs/plot_s4_relation_mrr/{dataset}/{seed}.log"),
    conda:
        CONDA_ENV
    threads: 1
    resources:
        mem_mb=2000,
        runtime=5,
    params:
        pooled=s4_pooled_labels,
        system=S4["relation_system"],
    script:
        "../../scripts/s4/plot_relation_mrr.py"


rule plot_s4_stability_each:
    input:
        table=R("s4/{dataset}/{seed}/tables/stability.tsv"),
    output:
        pdf=report(
            R("s4/{dataset}/{seed}/figures/fig7_stability.pdf"),
            caption="../report/s4_fig7.rst",
            category="S4 label sparsity",
            subcategory="{dataset}",
            labels={"figure": "Fig. 7 stability", "seed": "{seed}", "format": "pdf"},
        ),
        png=report(
            R("s4/{dataset}/{seed}/figures/fig7_stability.png"),
            caption="../report/s4_fig7.rst",
            category="S4 label sparsity",
            subcategory="{dataset}",
            labels={"figure": "Fig. 7 stability", "seed": "{seed}", "format": "png"},
        ),
    log:
        R("logs/plot_s4_stability/{dataset}/{seed}.log"),
    conda:
        CONDA_ENV
    threads: 1
    resources:
        mem_mb=1000,
        runtime=5,
    params:
        pooled=s4_pooled_labels,
    script:
        "../../scripts/s4/plot_stability.py"


rule plot_s4_discriminative_each:
    input:
        table=R("s4/{dataset}/{seed}/tables/discriminative.tsv"),
    output:
        pdf=report(
            R("s4/{dataset}/{seed}/figures/fig8_discriminative.pdf"),
            caption="../report/s4_fig8.rst",
            category="S4 label sparsity",
            subcategory="{dataset}",
            labels={
                "figure": "Fig. 8 discriminative power",
                "seed": "{seed}",
                "format": "pdf",
            },
        ),
        png=report(
            R("s4/{dataset}/{seed}/figures/fig8_discriminative.png"),
            caption="../report/s4_fig8.rst",
            category="S4 label sparsity",
            subcategory="{dataset}",
            labels={
                "figure": "Fig. 8 discriminative power",
                "seed": "{seed}",
                "format": "png",
            },
        ),
    log:
        R("logs/plot_s4_discriminative/{dataset}/{seed}.log"),
    conda:
        CONDA_ENV
    threads: 1
    resources:
        mem_mb=1000,
        runtime=5,
    params:
        pooled=s4_pooled_labels,
    script:
        "../../scripts/s4/plot_discriminative.py"


# S4's Sec. 4.2 and 5.2 claims (paper 003, Figs. 3-5, 7-8, Tables 3-4) on this tier's systems, one set per dataset
# and seed
rule table_s4_claims:
    input:
        taus=expand(
            R("s4/{dataset}/{seed}/tables/tau_depth.tsv"),
            dataset=S4_DATASETS,
            seed=seeds(),
        ),
        answers=expand(
            R("s4/{dataset}/{seed}/answers.parquet"),
            dataset=S4_DATASETS,
            seed=seeds(),
        ),
        questions=expand(
            R("s4/{dataset}/{seed}/questions.parquet"),
            dataset=S4_DATASETS,
            seed=seeds(),
        ),
        stability=expand(
            R("s4/{dataset}/{seed}/tables/stability.tsv"),
            dataset=S4_DATASETS,
            seed=seeds(),
        ),
        discriminative=expand(
            R("s4/{dataset}/{seed}/tables/discriminative.tsv"),
            dataset=S4_DATASETS,
            seed=seeds(),
        ),
        # one entry per (dataset, seed), as the label sets: the categories of the dataset's relations (Tables 3-4)
        categories=expand(
            R("s4/{dataset}/categories.tsv"),
            dataset=S4_DATASETS,
            seed=seeds(),
        ),
    output:
        table=report(
            R("claims/s4.tsv"),
            caption="../report/claims_s4.rst",
            category="Claims",
            labels={"table": "S4 claims"},
        ),
    log:
        R("logs/table_s4_claims/table_s4_claims.log"),
    conda:
        CONDA_ENV
    threads: 1
    resources:
        mem_mb=4000,
        runtime=15,
    params:
        labels=[f"{dataset}_{seed}" for dataset in S4_DATASETS for seed in seeds()],
        # label sets whose pooled labels are simulated (not released): the claims' basis names the stand-in
        simulated=[
            f"{dataset}_{seed}"
            for dataset in S4_DATASETS
            for seed in seeds()
            if dataset not in S4["released"]
        ],
        hits_at=S4["hits_at"],
        ir_cutoff=S4["ir_cutoff"],
        uncertainty=config["uncertainty"],
    script:
        "../../scripts/s4/table_claims.py"


rule study_s4:
    input:
        unless_skipped("s4"),
        R("claims/s4.tsv"),
        expand(
            [R(f"s4/{{dataset}}/{{seed}}/{name}") for name in S4_TARGETS.values()],
            dataset=S4_DATASETS,
            seed=seeds(),
        ),


# Wildcard-free targets: `snakemake <name>` builds that figure or table for every studied dataset and seed.
for _name in S4_TARGETS:

    rule:
        name:
            _name
        input:
            unless_skipped("s4"),
            outputs_of(
                getattr(rules, f"{_name}_each"), dataset=S4_DATASETS, seed=seeds()
            ),
        localrule: True


rule compute_s4_categories:
    input:
        unless_skipped("s4"),
        outputs_of(rules.compute_s4_categories_each, dataset=S4_DATASETS),
    localrule: True
