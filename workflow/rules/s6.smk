# S6 (Cornell et al. 2025; Krichene and Rendle 2020): sampled evaluation against the full filtered ranking.
# One evaluation job per (dataset, seed) draws the samples once and scores every studied model on them; the tables,
# figures and claims read its outputs. `snakemake study_s6` builds them all.


rule evaluate_s6:
    input:
        unpack(s6_model_files),
        data=dataset_files,
    output:
        full=R("s6/{dataset}/{seed}/full.parquet"),
        sampled=R("s6/{dataset}/{seed}/sampled.parquet"),
        timing=R("s6/{dataset}/{seed}/timing.tsv"),
    log:
        R("logs/evaluate_s6/{dataset}/{seed}.log"),
    conda:
        CONDA_ENV
    threads: 1
    resources:
        mem_mb=6000,
        runtime=60,
        gpu=0,
    params:
        models=S6_MODELS,
        dataset_spec=dataset_spec,
        data_dir=config["data_dir"],
        settings=S6,
        memory_budget_mb=config["ranking"]["memory_budget_mb"],
    script:
        "../../scripts/s6/evaluate.py"


rule table_s6_estimates:
    input:
        full=s6_group_files("full.parquet"),
        sampled=s6_group_files("sampled.parquet"),
    output:
        estimates=report(
            R("s6/tables/estimates.tsv"),
            caption="../report/s6_estimates.rst",
            category="S6 sampled evaluation",
        ),
        replicates=R("s6/tables/replicates.parquet"),
        sizes=R("s6/tables/sizes.tsv"),
    log:
        R("logs/table_s6_estimates/table_s6_estimates.log"),
    conda:
        CONDA_ENV
    threads: 1
    resources:
        mem_mb=6000,
        runtime=30,
    params:
        settings=S6,
        uncertainty=config["uncertainty"],
        memory_budget_mb=config["ranking"]["memory_budget_mb"],
    script:
        "../../scripts/s6/table_estimates.py"


rule table_s6_ordering:
    input:
        estimates=R("s6/tables/estimates.tsv"),
        replicates=R("s6/tables/replicates.parquet"),
    output:
        table=report(
            R("s6/tables/ordering.tsv"),
            caption="../report/s6_ordering.rst",
            category="S6 sampled evaluation",
        ),
    log:
        R("logs/table_s6_ordering/table_s6_ordering.log"),
    conda:
        CONDA_ENV
    threads: 1
    resources:
        mem_mb=2000,
        runtime=10,
    params:
        level=config["uncertainty"]["level"],
    script:
        "../../scripts/s6/table_ordering.py"


rule table_s6_timing:
    input:
        timing=s6_group_files("timing.tsv"),
    output:
        table=report(
            R("s6/tables/timing.tsv"),
            caption="../report/s6_timing.rst",
            category="S6 sampled evaluation",
        ),
    log:
        R("logs/table_s6_timing/table_s6_timing.log"),
    conda:
        CONDA_ENV
    threads: 1
    resources:
        mem_mb=1000,
        runtime=5,
    script:
        "../../scripts/s6/table_timing.py"


rule plot_s6_estimates:
    input:
        estimates=R("s6/tables/estimates.tsv"),
    output:
        pdf=report(
            R("s6/figures/estimates.pdf"),
            caption="../report/s6_fig_estimates.rst",
            category="S6 sampled evaluation",
        ),
        png=report(
            R("s6/figures/estimates.png"),
            caption="../report/s6_fig_estimates.rst",
            category="S6 sampled evaluation",
        ),
    log:
        R("logs/plot_s6_estimates/plot_s6_estimates.log"),
    conda:
        CONDA_ENV
    threads: 1
    resources:
        mem_mb=1000,
        runtime=5,
    script:
        "../../scripts/s6/plot_estimates.py"


rule plot_s6_tau:
    input:
        ordering=R("s6/tables/ordering.tsv"),
    output:
        pdf=report(
            R("s6/figures/tau.pdf"),
            caption="../report/s6_fig_tau.rst",
            category="S6 sampled evaluation",
        ),
        png=report(
            R("s6/figures/tau.png"),
            caption="../report/s6_fig_tau.rst",
            category="S6 sampled evaluation",
        ),
    log:
        R("logs/plot_s6_tau/plot_s6_tau.log"),
    conda:
        CONDA_ENV
    threads: 1
    resources:
        mem_mb=1000,
        runtime=5,
    script:
        "../../scripts/s6/plot_tau.py"


rule table_s6_claims:
    input:
        replicates=R("s6/tables/replicates.parquet"),
        ordering=R("s6/tables/ordering.tsv"),
        sizes=R("s6/tables/sizes.tsv"),
    output:
        claims=report(
            R("claims/s6.tsv"),
            caption="../report/claims_s6.rst",
            category="S6 sampled evaluation",
        ),
    log:
        R("logs/table_s6_claims/table_s6_claims.log"),
    conda:
        CONDA_ENV
    threads: 1
    resources:
        mem_mb=2000,
        runtime=10,
    params:
        tolerance=S6["guided_tolerance"],
        level=config["uncertainty"]["level"],
    script:
        "../../scripts/s6/table_claims.py"


rule study_s6:
    input:
        unless_skipped("s6"),
        R("s6/tables/estimates.tsv"),
        R("s6/tables/ordering.tsv"),
        R("s6/tables/timing.tsv"),
        R("s6/figures/estimates.pdf"),
        R("s6/figures/estimates.png"),
        R("s6/figures/tau.pdf"),
        R("s6/figures/tau.png"),
        R("claims/s6.tsv"),
