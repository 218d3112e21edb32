# S1 part A (paper 000, Sec. 2.1 and 3.1): the four rank definitions, two reference scorers that expose the tie
# problem, and the non-deterministic rank under permuted entity IDs. `snakemake study_s1_ranks` builds them all.


rule table_s1_rank_types:
    input:
        metrics=R("tables/metrics.tsv"),
    output:
        table=report(
            R("s1/ranks/tables/rank_types.tsv"),
            caption="../report/s1_ranks_rank_types_table.rst",
            category="S1 rank definitions",
            labels={"table": "metrics under the four rank types"},
        ),
    log:
        R("logs/table_s1_rank_types/table_s1_rank_types.log"),
    conda:
        CONDA_ENV
    threads: 1
    resources:
        mem_mb=2000,
        runtime=10,
    params:
        datasets=S1R["datasets"],
        models=S1R["models"],
    script:
        "../../scripts/s1/table_rank_types.py"


rule table_s1_reference_scorers:
    input:
        data=s1_ranks_dataset_files(),
        summaries=expand(R("datasets/{dataset}/summary.tsv"), dataset=S1R["datasets"]),
    output:
        table=report(
            R("s1/ranks/tables/reference_scorers.tsv"),
            caption="../report/s1_ranks_reference_scorers.rst",
            category="S1 rank definitions",
            labels={"table": "constant and random reference scorers"},
        ),
    log:
        R("logs/table_s1_reference_scorers/table_s1_reference_scorers.log"),
    conda:
        CONDA_ENV
    threads: 1
    resources:
        mem_mb=4000,
        runtime=60,
    params:
        dataset_specs=S1R_DATASET_SPECS,
        data_dir=config["data_dir"],
        split=S1R["split"],
        metrics=S1R["reference_metrics"],
        random_seed=S1R["random_seed"],
        memory_budget_mb=config["ranking"]["memory_budget_mb"],
    script:
        "../../scripts/s1/table_reference_scorers.py"


rule table_s1_permutations:
    input:
        data=s1_ranks_dataset_files(),
        models=model_files("model.pt", datasets=S1R["datasets"], models=S1R_SCORED),
    output:
        table=report(
            R("s1/ranks/tables/permutations.tsv"),
            caption="../report/s1_ranks_permutations_table.rst",
            category="S1 rank definitions",
            labels={"table": "metrics under permuted entity IDs"},
        ),
    log:
        R("logs/table_s1_permutations/table_s1_permutations.log"),
    conda:
        CONDA_ENV
    # it re-ranks every model's test split under each order, and the ranking engine uses every thread it is given;
    # it waits on every S1 model, so it tends to run last
    threads: 2
    resources:
        mem_mb=8000,
        runtime=120,
    params:
        dataset_specs=S1R_DATASET_SPECS,
        data_dir=config["data_dir"],
        split=S1R["split"],
        permutation_seeds=S1R["permutation_seeds"],
        metrics=S1R["permutation_metrics"],
        random_seed=S1R["random_seed"],
        memory_budget_mb=config["ranking"]["memory_budget_mb"],
    script:
        "../../scripts/s1/table_permutations.py"


rule plot_s1_rank_types:
    input:
        rank_types=R("s1/ranks/tables/rank_types.tsv"),
        reference=R("s1/ranks/tables/reference_scorers.tsv"),
    output:
        pdf=report(
            R("s1/ranks/figures/rank_types.pdf"),
            caption="../report/s1_ranks_rank_types_figure.rst",
            category="S1 rank definitions",
            labels={"figure": "metrics under the four rank types", "format": "pdf"},
        ),
        png=report(
            R("s1/ranks/figures/rank_types.png"),
            caption="../report/s1_ranks_rank_types_figure.rst",
            category="S1 rank definitions",
            labels={"figure": "metrics under the four rank types", "format": "png"},
        ),
    log:
        R("logs/plot_s1_rank_types/plot_s1_rank_types.log"),
    conda:
        CONDA_ENV
    threads: 1
    resources:
        mem_mb=2000,
        runtime=10,
    params:
        split=S1R["split"],
        side=S1R["side"],
        metrics=S1R["figure_metrics"],
    script:
        "../../scripts/s1/plot_rank_types.py"


rule plot_s1_permutations:
    input:
        table=R("s1/ranks/tables/permutations.tsv"),
    output:
        pdf=report(
            R("s1/ranks/figures/permutations.pdf"),
            caption="../report/s1_ranks_permutations_figure.rst",
            category="S1 rank definitions",
            labels={
                "figure": "non-deterministic rank under permuted IDs",
                "format": "pdf",
            },
        ),
        png=report(
            R("s1/ranks/figures/permutations.png"),
            caption="../report/s1_ranks_permutations_figure.rst",
            category="S1 rank definitions",
            labels={
                "figure": "non-deterministic rank under permuted IDs",
                "format": "png",
            },
        ),
    log:
        R("logs/plot_s1_permutations/plot_s1_permutations.log"),
    conda:
        CONDA_ENV
    threads: 1
    resources:
        mem_mb=2000,
        runtime=10,
    params:
        split=S1R["split"],
        side=S1R["side"],
        metrics=S1R["permutation_metrics"],
    script:
        "../../scripts/s1/plot_permutations.py"


rule study_s1_ranks:
    input:
        unless_skipped("s1"),
        R("s1/ranks/tables/rank_types.tsv"),
        R("s1/ranks/tables/reference_scorers.tsv"),
        R("s1/ranks/tables/permutations.tsv"),
        R("s1/ranks/figures/rank_types.pdf"),
        R("s1/ranks/figures/rank_types.png"),
        R("s1/ranks/figures/permutations.pdf"),
        R("s1/ranks/figures/permutations.png"),
