# S3 (paper 002, Zhang et al.): entity alignment under industrial conditions. Name- and attribute-based splits of
# the reference alignments, biased seed mappings, three EA methods, Tables 2 and 3 with AMRI and ZMRR per split,
# and a heatmap figure per dataset. `snakemake study_s3` builds them all.


wildcard_constraints:
    s3_dataset="|".join(S3_DATASETS),
    s3_model="|".join(S3["models"]),


rule compute_s3_features:
    output:
        features="results/s3/{s3_dataset}/features.tsv",
        sizes="results/s3/{s3_dataset}/split_sizes.tsv",
    log:
        "results/logs/compute_s3_features/{s3_dataset}.log",
    conda:
        CONDA_ENV
    threads: 1
    resources:
        mem_mb=4000,
        runtime=30,
    params:
        spec=s3_source_spec,
        settings=s3_settings,
        data_dir=config["data_dir"],
    script:
        "../../scripts/s3/compute_features.py"


rule sample_s3_seeds:
    input:
        features="results/s3/{s3_dataset}/features.tsv",
    output:
        seeds="results/s3/{s3_dataset}/seeds/{seed}/seeds.tsv",
        status="results/s3/{s3_dataset}/seeds/{seed}/status.tsv",
        bias="results/s3/{s3_dataset}/seeds/{seed}/bias_check.tsv",
    log:
        "results/logs/sample_s3_seeds/{s3_dataset}/{seed}.log",
    conda:
        CONDA_ENV
    threads: 1
    resources:
        mem_mb=2000,
        runtime=10,
    params:
        biases=S3["biases"],
        train_ratios=S3["train_ratios"],
        valid_fraction=S3["valid_fraction"],
    script:
        "../../scripts/s3/sample_seeds.py"


# one job per (pair, method, seed) trains and evaluates every setting (bias x training ratio): the pair is loaded
# and the libraries imported once
rule evaluate_s3_model:
    input:
        features="results/s3/{s3_dataset}/features.tsv",
        seeds="results/s3/{s3_dataset}/seeds/{seed}/seeds.tsv",
        seed_status="results/s3/{s3_dataset}/seeds/{seed}/status.tsv",
    output:
        ranks=s3_setting_files("ranks.parquet"),
        metrics=s3_setting_files("split_metrics.tsv"),
        status=s3_setting_files("status.json"),
    log:
        "results/logs/evaluate_s3_model/{s3_dataset}/{s3_model}/{seed}.log",
    benchmark:
        "results/benchmarks/evaluate_s3_model/{s3_dataset}/{s3_model}/{seed}.tsv"
    conda:
        CONDA_ENV
    threads: 1
    resources:
        mem_mb=8000,
        runtime=720,
        gpu=0,
    params:
        spec=s3_source_spec,
        settings=s3_settings,
        data_dir=config["data_dir"],
        model_spec=s3_model_spec,
        candidates=S3["candidates"],
        side=S3["side"],
        memory_budget_mb=config["ranking"]["memory_budget_mb"],
    script:
        "../../scripts/s3/evaluate_model.py"


rule collate_s3_runs:
    input:
        metrics=s3_run_files("split_metrics.tsv"),
        status=s3_run_files("status.json"),
    output:
        metrics="results/s3/tables/split_metrics.tsv",
        runs="results/s3/tables/runs.tsv",
    log:
        "results/logs/collate_s3_runs/collate_s3_runs.log",
    conda:
        CONDA_ENV
    threads: 1
    resources:
        mem_mb=2000,
        runtime=10,
    script:
        "../../scripts/s3/collate_runs.py"


rule table_s3_split_sizes:
    input:
        sizes=expand("results/s3/{s3_dataset}/split_sizes.tsv", s3_dataset=S3_DATASETS),
    output:
        table=report(
            "results/s3/tables/split_sizes.tsv",
            caption="../report/s3_split_sizes.rst",
            category="S3 industrial EA",
            labels={"table": "split sizes"},
        ),
    log:
        "results/logs/table_s3_split_sizes/table_s3_split_sizes.log",
    conda:
        CONDA_ENV
    threads: 1
    resources:
        mem_mb=1000,
        runtime=5,
    script:
        "../../scripts/s3/table_split_sizes.py"


rule table_s3_bias_check:
    input:
        bias=expand(
            "results/s3/{s3_dataset}/seeds/{seed}/bias_check.tsv",
            s3_dataset=S3_DATASETS,
            seed=S3_SEEDS,
        ),
    output:
        table=report(
            "results/s3/tables/bias_check.tsv",
            caption="../report/s3_bias_check.rst",
            category="S3 industrial EA",
            labels={"table": "bias check of the seed mappings"},
        ),
    log:
        "results/logs/table_s3_bias_check/table_s3_bias_check.log",
    conda:
        CONDA_ENV
    threads: 1
    resources:
        mem_mb=1000,
        runtime=5,
    script:
        "../../scripts/s3/table_bias_check.py"


rule table_s3_overall:
    input:
        metrics="results/s3/tables/split_metrics.tsv",
        runs="results/s3/tables/runs.tsv",
    output:
        table=report(
            "results/s3/tables/table2.tsv",
            caption="../report/s3_table2.rst",
            category="S3 industrial EA",
            labels={"table": "Table 2: ideal vs industrial"},
        ),
    log:
        "results/logs/table_s3_overall/table_s3_overall.log",
    conda:
        CONDA_ENV
    threads: 1
    resources:
        mem_mb=1000,
        runtime=5,
    params:
        which="table2",
        ideal=S3["ideal"],
        industrial=S3["industrial"],
        models=S3["models"],
        side=S3["side"],
        rank_type=S3["rank_type"],
    script:
        "../../scripts/s3/table_results.py"


rule table_s3_ablations:
    input:
        metrics="results/s3/tables/split_metrics.tsv",
        runs="results/s3/tables/runs.tsv",
    output:
        table=report(
            "results/s3/tables/table3.tsv",
            caption="../report/s3_table3.rst",
            category="S3 industrial EA",
            labels={"table": "Table 3: size, name bias, attribute bias"},
        ),
    log:
        "results/logs/table_s3_ablations/table_s3_ablations.log",
    conda:
        CONDA_ENV
    threads: 1
    resources:
        mem_mb=1000,
        runtime=5,
    params:
        which="table3",
        ideal=S3["ideal"],
        industrial=S3["industrial"],
        models=S3["models"],
        side=S3["side"],
        rank_type=S3["rank_type"],
    script:
        "../../scripts/s3/table_results.py"


rule plot_s3_splits:
    input:
        metrics="results/s3/tables/split_metrics.tsv",
    output:
        pdf=report(
            "results/s3/figures/{s3_dataset}_splits.pdf",
            caption="../report/s3_splits.rst",
            category="S3 industrial EA",
            labels={"figure": "Hits@1 and AMRI per split", "dataset": "{s3_dataset}"},
        ),
        png="results/s3/figures/{s3_dataset}_splits.png",
    log:
        "results/logs/plot_s3_splits/{s3_dataset}.log",
    conda:
        CONDA_ENV
    threads: 1
    resources:
        mem_mb=2000,
        runtime=10,
    params:
        models=S3["models"],
        side=S3["side"],
        rank_type=S3["rank_type"],
    script:
        "../../scripts/s3/plot_splits.py"


rule study_s3:
    input:
        "results/s3/tables/split_sizes.tsv",
        "results/s3/tables/bias_check.tsv",
        "results/s3/tables/table2.tsv",
        "results/s3/tables/table3.tsv",
        expand("results/s3/figures/{s3_dataset}_splits.pdf", s3_dataset=S3_DATASETS),
        expand("results/s3/figures/{s3_dataset}_splits.png", s3_dataset=S3_DATASETS),
