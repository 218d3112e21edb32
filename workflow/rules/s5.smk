# S5 (paper 004): calibration functions fitted on validation, assessed on test, and timed against rank evaluation.


rule assess_calibration:
    input:
        data=dataset_files,
        model=R("models/{dataset}/{model}/{seed}/model.pt"),
    output:
        calibrators=R("s5/{dataset}/{model}/{seed}/calibrators.tsv"),
        assessment=R("s5/{dataset}/{model}/{seed}/assessment.tsv"),
        summary=R("s5/{dataset}/{model}/{seed}/summary.tsv"),
        positives=R("s5/{dataset}/{model}/{seed}/positives.parquet"),
        triple_sums=R("s5/{dataset}/{model}/{seed}/triple_sums.parquet"),
    log:
        R("logs/assess_calibration/{dataset}/{model}/{seed}.log"),
    conda:
        CONDA_ENV
    threads: 1
    resources:
        mem_mb=4000,
        runtime=120,
        gpu=0,
    params:
        dataset_spec=dataset_spec,
        data_dir=config["data_dir"],
        settings=config["studies"]["s5"],
        memory_budget_mb=config["ranking"]["memory_budget_mb"],
    script:
        "../../scripts/s5/assess_calibration.py"


rule collate_s5:
    input:
        assessment=expand("{run}/assessment.tsv", run=S5_RUNS),
        summary=expand("{run}/summary.tsv", run=S5_RUNS),
        calibrators=expand("{run}/calibrators.tsv", run=S5_RUNS),
    output:
        assessment=report(
            R("s5/tables/assessment.tsv"),
            caption="../report/s5_assessment.rst",
            category="S5 calibration",
        ),
        summary=R("s5/tables/summary.tsv"),
        calibrators=report(
            R("s5/tables/calibrators.tsv"),
            caption="../report/s5_calibrators.rst",
            category="S5 calibration",
        ),
    log:
        R("logs/collate_s5/collate_s5.log"),
    conda:
        CONDA_ENV
    threads: 1
    resources:
        mem_mb=2000,
        runtime=10,
    params:
        model_classes={key: spec["model"] for key, spec in config["models"].items()},
    script:
        "../../scripts/s5/collate.py"


rule table_s5_timing:
    input:
        summary=R("s5/tables/summary.tsv"),
    output:
        table=report(
            R("s5/tables/table1_timing.tsv"),
            caption="../report/s5_table1.rst",
            category="S5 calibration",
        ),
        paper=report(
            R("s5/tables/table1_timing_paper.tsv"),
            caption="../report/s5_table1.rst",
            category="S5 calibration",
        ),
    log:
        R("logs/table_s5_timing/table_s5_timing.log"),
    conda:
        CONDA_ENV
    threads: 1
    resources:
        mem_mb=1000,
        runtime=10,
    params:
        unavailable=config["studies"]["s5"].get("unavailable_models", []),
    script:
        "../../scripts/s5/table_timing.py"


rule table_s5_comparison:
    input:
        summary=R("s5/tables/summary.tsv"),
        assessment=R("s5/tables/assessment.tsv"),
        ranks=ranks_files("test", datasets=S5_DATASETS, models=S5_MODELS),
        positives=[f"{run}/positives.parquet" for run in S5_RUNS],
        triple_sums=[f"{run}/triple_sums.parquet" for run in S5_RUNS],
    output:
        comparison=report(
            R("s5/tables/table2_comparison.tsv"),
            caption="../report/s5_table2.rst",
            category="S5 calibration",
        ),
        overlap=report(
            R("s5/tables/table2_overlap.tsv"),
            caption="../report/s5_table2.rst",
            category="S5 calibration",
        ),
        paper=report(
            R("s5/tables/table2_overlap_paper.tsv"),
            caption="../report/s5_table2.rst",
            category="S5 calibration",
        ),
    log:
        R("logs/table_s5_comparison/table_s5_comparison.log"),
    conda:
        CONDA_ENV
    threads: 1
    resources:
        mem_mb=1000,
        runtime=10,
    params:
        uncertainty=config["uncertainty"],
        unavailable=config["studies"]["s5"].get("unavailable_models", []),
        rank_type=config["studies"]["s5"]["rank_type"],
    script:
        "../../scripts/s5/table_comparison.py"


rule plot_s5_calibration:
    input:
        assessment=R("s5/tables/assessment.tsv"),
    output:
        pdf=report(
            R("s5/figures/fig1_calibration.pdf"),
            caption="../report/s5_fig1.rst",
            category="S5 calibration",
        ),
        png=report(
            R("s5/figures/fig1_calibration.png"),
            caption="../report/s5_fig1.rst",
            category="S5 calibration",
        ),
    log:
        R("logs/plot_s5_calibration/plot_s5_calibration.log"),
    conda:
        CONDA_ENV
    threads: 1
    resources:
        mem_mb=1000,
        runtime=10,
    params:
        figure="calibration",
    script:
        "../../scripts/s5/plot_figure.py"


rule plot_s5_strategies:
    input:
        assessment=R("s5/tables/assessment.tsv"),
    output:
        pdf=report(
            R("s5/figures/fig2_strategies.pdf"),
            caption="../report/s5_fig2.rst",
            category="S5 calibration",
        ),
        png=report(
            R("s5/figures/fig2_strategies.png"),
            caption="../report/s5_fig2.rst",
            category="S5 calibration",
        ),
    log:
        R("logs/plot_s5_strategies/plot_s5_strategies.log"),
    conda:
        CONDA_ENV
    threads: 1
    resources:
        mem_mb=1000,
        runtime=10,
    params:
        figure="strategies",
    script:
        "../../scripts/s5/plot_figure.py"


rule plot_s5_platt:
    input:
        assessment=R("s5/tables/assessment.tsv"),
    output:
        pdf=report(
            R("s5/figures/fig3_platt.pdf"),
            caption="../report/s5_fig3.rst",
            category="S5 calibration",
        ),
        png=report(
            R("s5/figures/fig3_platt.png"),
            caption="../report/s5_fig3.rst",
            category="S5 calibration",
        ),
    log:
        R("logs/plot_s5_platt/plot_s5_platt.log"),
    conda:
        CONDA_ENV
    threads: 1
    resources:
        mem_mb=1000,
        runtime=10,
    params:
        figure="platt",
    script:
        "../../scripts/s5/plot_figure.py"


rule plot_s5_platt_spread:
    input:
        calibrators=R("s5/tables/calibrators.tsv"),
    output:
        table=report(
            R("s5/figures/fig3_platt_spread.tsv"),
            caption="../report/s5_fig3_spread.rst",
            category="S5 calibration",
        ),
        pdf=report(
            R("s5/figures/fig3_platt_spread.pdf"),
            caption="../report/s5_fig3_spread.rst",
            category="S5 calibration",
        ),
        png=report(
            R("s5/figures/fig3_platt_spread.png"),
            caption="../report/s5_fig3_spread.rst",
            category="S5 calibration",
        ),
    log:
        R("logs/plot_s5_platt_spread/plot_s5_platt_spread.log"),
    conda:
        CONDA_ENV
    threads: 1
    resources:
        mem_mb=1000,
        runtime=10,
    script:
        "../../scripts/s5/plot_platt_spread.py"


rule plot_s5_timing:
    input:
        timing=R("s5/tables/table1_timing.tsv"),
    output:
        table=report(
            R("s5/figures/fig4_timing.tsv"),
            caption="../report/s5_fig4.rst",
            category="S5 calibration",
        ),
        pdf=report(
            R("s5/figures/fig4_timing.pdf"),
            caption="../report/s5_fig4.rst",
            category="S5 calibration",
        ),
        png=report(
            R("s5/figures/fig4_timing.png"),
            caption="../report/s5_fig4.rst",
            category="S5 calibration",
        ),
    log:
        R("logs/plot_s5_timing/plot_s5_timing.log"),
    conda:
        CONDA_ENV
    threads: 1
    resources:
        mem_mb=1000,
        runtime=10,
    script:
        "../../scripts/s5/plot_timing.py"


rule table_s5_claims:
    input:
        calibrators=R("s5/tables/calibrators.tsv"),
        assessment=R("s5/tables/assessment.tsv"),
        timing=R("s5/tables/table1_timing.tsv"),
        overlap=R("s5/tables/table2_overlap.tsv"),
        positives=[f"{run}/positives.parquet" for run in S5_RUNS],
        triple_sums=[f"{run}/triple_sums.parquet" for run in S5_RUNS],
    output:
        table=report(
            R("claims/s5.tsv"),
            caption="../report/claims_s5.rst",
            category="Claims",
            labels={"table": "S5 claims"},
        ),
    log:
        R("logs/table_s5_claims/table_s5_claims.log"),
    conda:
        CONDA_ENV
    threads: 1
    resources:
        mem_mb=1000,
        runtime=5,
    params:
        uncertainty=config["uncertainty"],
    script:
        "../../scripts/s5/table_claims.py"


rule study_s5:
    input:
        unless_skipped("s5"),
        R("s5/tables/assessment.tsv"),
        R("s5/tables/calibrators.tsv"),
        R("s5/tables/table1_timing.tsv"),
        R("s5/tables/table1_timing_paper.tsv"),
        R("s5/tables/table2_comparison.tsv"),
        R("s5/tables/table2_overlap.tsv"),
        R("s5/tables/table2_overlap_paper.tsv"),
        R("s5/figures/fig1_calibration.pdf"),
        R("s5/figures/fig1_calibration.png"),
        R("s5/figures/fig2_strategies.pdf"),
        R("s5/figures/fig2_strategies.png"),
        R("s5/figures/fig3_platt.pdf"),
        R("s5/figures/fig3_platt.png"),
        R("s5/figures/fig3_platt_spread.tsv"),
        R("s5/figures/fig3_platt_spread.pdf"),
        R("s5/figures/fig3_platt_spread.png"),
        R("s5/figures/fig4_timing.tsv"),
        R("s5/figures/fig4_timing.pdf"),
        R("s5/figures/fig4_timing.png"),
        R("claims/s5.tsv"),
