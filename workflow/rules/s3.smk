# S3 (paper 002, Zhang et al.): entity alignment under industrial conditions. Name- and attribute-based splits of
# the reference alignments, biased seed mappings, six EA methods, Tables 2-4 with AMRI and ZMRR per split, Fig. 1
# and a heatmap figure per dataset, and the claims table. `snakemake study_s3` builds them all.


wildcard_constraints:
    s3_dataset="|".join(S3_DATASETS),
    s3_model="|".join(S3["models"]),


rule compute_s3_features:
    input:
        data=s3_source_files,
    output:
        features=R("s3/{s3_dataset}/features.tsv"),
        sizes=R("s3/{s3_dataset}/split_sizes.tsv"),
    log:
        R("logs/compute_s3_features/{s3_dataset}.log"),
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
        features=R("s3/{s3_dataset}/features.tsv"),
    output:
        seeds=R("s3/{s3_dataset}/seeds/{seed}/seeds.tsv"),
        status=R("s3/{s3_dataset}/seeds/{seed}/status.tsv"),
        bias=R("s3/{s3_dataset}/seeds/{seed}/bias_check.tsv"),
    log:
        R("logs/sample_s3_seeds/{s3_dataset}/{seed}.log"),
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
        data=s3_source_files,
        features=R("s3/{s3_dataset}/features.tsv"),
        seeds=R("s3/{s3_dataset}/seeds/{seed}/seeds.tsv"),
        seed_status=R("s3/{s3_dataset}/seeds/{seed}/status.tsv"),
    output:
        ranks=s3_setting_files("ranks.parquet"),
        metrics=s3_setting_files("split_metrics.tsv"),
        status=s3_setting_files("status.json"),
        # written by the job (kgeval.runtime.usage), as train_model's
        usage=R("benchmarks/evaluate_s3_model/{s3_dataset}/{s3_model}/{seed}.tsv"),
    log:
        R("logs/evaluate_s3_model/{s3_dataset}/{s3_model}/{seed}.log"),
    conda:
        CONDA_ENV
    # scheduling only: after the LP trainings (train_model), before the short jobs (see train_model)
    priority: 10
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
        only_settings=s3_method_settings,
    script:
        "../../scripts/s3/evaluate_model.py"


rule collate_s3_runs:
    input:
        metrics=s3_run_files("split_metrics.tsv"),
        status=s3_run_files("status.json"),
    output:
        metrics=R("s3/tables/split_metrics.tsv"),
        runs=R("s3/tables/runs.tsv"),
    log:
        R("logs/collate_s3_runs/collate_s3_runs.log"),
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
        sizes=expand(R("s3/{s3_dataset}/split_sizes.tsv"), s3_dataset=S3_DATASETS),
    output:
        table=report(
            R("s3/tables/split_sizes.tsv"),
            caption="../report/s3_split_sizes.rst",
            category="S3 industrial EA",
            labels={"table": "split sizes"},
        ),
    log:
        R("logs/table_s3_split_sizes/table_s3_split_sizes.log"),
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
            R("s3/{s3_dataset}/seeds/{seed}/bias_check.tsv"),
            s3_dataset=S3_DATASETS,
            seed=S3_SEEDS,
        ),
    output:
        table=report(
            R("s3/tables/bias_check.tsv"),
            caption="../report/s3_bias_check.rst",
            category="S3 industrial EA",
            labels={"table": "bias check of the seed mappings"},
        ),
    log:
        R("logs/table_s3_bias_check/table_s3_bias_check.log"),
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
        metrics=R("s3/tables/split_metrics.tsv"),
        runs=R("s3/tables/runs.tsv"),
    output:
        table=report(
            R("s3/tables/table2.tsv"),
            caption="../report/s3_table2.rst",
            category="S3 industrial EA",
            labels={"table": "Table 2: ideal vs industrial"},
        ),
    log:
        R("logs/table_s3_overall/table_s3_overall.log"),
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
        metrics=R("s3/tables/split_metrics.tsv"),
        runs=R("s3/tables/runs.tsv"),
    output:
        table=report(
            R("s3/tables/table3.tsv"),
            caption="../report/s3_table3.rst",
            category="S3 industrial EA",
            labels={"table": "Table 3: size, name bias, attribute bias"},
        ),
    log:
        R("logs/table_s3_ablations/table_s3_ablations.log"),
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


rule plot_s3_splits_each:
    input:
        metrics=R("s3/tables/split_metrics.tsv"),
    output:
        pdf=report(
            R("s3/figures/{s3_dataset}_splits.pdf"),
            caption="../report/s3_splits.rst",
            category="S3 industrial EA",
            labels={"figure": "Hits@1 and AMRI per split", "dataset": "{s3_dataset}"},
        ),
        png=R("s3/figures/{s3_dataset}_splits.png"),
    log:
        R("logs/plot_s3_splits/{s3_dataset}.log"),
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


# Fig. 1: every reference mapping by name similarity and attribute count, the seeds of the industrial context (first
# sampling seed) highlighted; the table behind it beside the figure
rule plot_s3_mappings_each:
    input:
        features=R("s3/{s3_dataset}/features.tsv"),
        seeds=R(f"s3/{{s3_dataset}}/seeds/{S3_SEEDS[0]}/seeds.tsv"),
    output:
        pdf=report(
            R("s3/figures/{s3_dataset}_mappings.pdf"),
            caption="../report/s3_mappings.rst",
            category="S3 industrial EA",
            labels={
                "figure": "Fig. 1: mappings and seed mappings",
                "dataset": "{s3_dataset}",
            },
        ),
        png=R("s3/figures/{s3_dataset}_mappings.png"),
        table=R("s3/figures/{s3_dataset}_mappings.tsv"),
    log:
        R("logs/plot_s3_mappings/{s3_dataset}.log"),
    conda:
        CONDA_ENV
    threads: 1
    resources:
        mem_mb=2000,
        runtime=10,
    params:
        bias=S3["industrial"]["bias"],
        train_ratio=S3["industrial"]["train_ratio"],
    script:
        "../../scripts/s3/plot_mappings.py"


# Table 4: the seed-free conventional row (a lexical matcher standing in for PARIS, which is not run)
rule table_s3_conventional:
    input:
        data=s3_all_source_files,
        features=expand(R("s3/{s3_dataset}/features.tsv"), s3_dataset=S3_DATASETS),
    output:
        table=report(
            R("s3/tables/table4.tsv"),
            caption="../report/s3_table4.rst",
            category="S3 industrial EA",
            labels={"table": "Table 4: conventional seed-free matcher"},
        ),
    log:
        R("logs/table_s3_conventional/table_s3_conventional.log"),
    conda:
        CONDA_ENV
    threads: 1
    resources:
        mem_mb=8000,
        runtime=60,
    params:
        datasets=S3_DATASETS,
        specs=s3_all_source_specs(),
        settings=S3["datasets"],
        data_dir=config["data_dir"],
        threshold=S3["conventional"]["threshold"],
    script:
        "../../scripts/s3/table_conventional.py"


rule evaluate_s3_strength:
    input:
        data=s3_strength_source_files,
    output:
        rows=R("s3/strength/{s3_model}.tsv"),
        # written by the job (kgeval.runtime.usage), as evaluate_s3_model's
        usage=R("benchmarks/evaluate_s3_strength/{s3_model}.tsv"),
    log:
        R("logs/evaluate_s3_strength/{s3_model}.log"),
    conda:
        CONDA_ENV
    priority: 10
    threads: 1
    resources:
        mem_mb=8000,
        runtime=120,
        gpu=0,
    params:
        pair=S3_STRENGTH["pair"],
        spec=s3_strength_source_spec,
        pair_settings=S3["datasets"].get(S3_STRENGTH["pair"]),
        data_dir=config["data_dir"],
        model_spec=s3_model_spec,
        strength=S3_STRENGTH,
        seed=S3_SEEDS[0],
    script:
        "../../scripts/s3/evaluate_strength.py"


rule table_s3_strength:
    input:
        rows=expand(R("s3/strength/{s3_model}.tsv"), s3_model=S3["models"]),
    output:
        table=report(
            R("s3/tables/strength.tsv"),
            caption="../report/s3_strength.rst",
            category="S3 industrial EA",
            labels={"table": "strength check: Hits@1 in each method's published protocol"},
        ),
    log:
        R("logs/table_s3_strength/table_s3_strength.log"),
    conda:
        CONDA_ENV
    threads: 1
    resources:
        mem_mb=1000,
        runtime=5,
    script:
        "../../scripts/s3/table_strength.py"


rule table_s3_claims:
    input:
        table=R("s3/tables/table3.tsv"),
        ranks=s3_run_files("ranks.parquet"),
        features=expand(R("s3/{s3_dataset}/features.tsv"), s3_dataset=S3_DATASETS),
        strength=R("s3/tables/strength.tsv") if S3_STRENGTH["enabled"] else [],
    output:
        table=report(
            R("claims/s3.tsv"),
            caption="../report/claims_s3.rst",
            category="Claims",
            labels={"table": "S3 claims"},
        ),
    log:
        R("logs/table_s3_claims/table_s3_claims.log"),
    conda:
        CONDA_ENV
    threads: 1
    resources:
        mem_mb=1000,
        runtime=5,
    params:
        ideal=S3["ideal"],
        industrial=S3["industrial"],
        models=S3["models"],
        datasets=S3_DATASETS,
        uncertainty=config["uncertainty"],
        # the strength table the claims read (an input above), or None: the fixed list (default tier)
        strength=R("s3/tables/strength.tsv") if S3_STRENGTH["enabled"] else None,
    script:
        "../../scripts/s3/table_claims.py"


rule study_s3:
    input:
        unless_skipped("s3"),
        R("s3/tables/split_sizes.tsv"),
        R("s3/tables/bias_check.tsv"),
        R("s3/tables/table2.tsv"),
        R("s3/tables/table3.tsv"),
        R("s3/tables/table4.tsv"),
        R("claims/s3.tsv"),
        R("s3/tables/strength.tsv") if S3_STRENGTH["enabled"] else [],
        expand(R("s3/figures/{s3_dataset}_splits.pdf"), s3_dataset=S3_DATASETS),
        expand(R("s3/figures/{s3_dataset}_splits.png"), s3_dataset=S3_DATASETS),
        expand(R("s3/figures/{s3_dataset}_mappings.pdf"), s3_dataset=S3_DATASETS),
        expand(R("s3/figures/{s3_dataset}_mappings.png"), s3_dataset=S3_DATASETS),
        expand(R("s3/figures/{s3_dataset}_mappings.tsv"), s3_dataset=S3_DATASETS),


# Wildcard-free targets: `snakemake <name>` builds that figure or table for every S3 pair.
for _name in ("plot_s3_splits", "plot_s3_mappings"):

    rule:
        name:
            _name
        input:
            unless_skipped("s3"),
            outputs_of(getattr(rules, f"{_name}_each"), s3_dataset=S3_DATASETS),
        localrule: True
