# Metrics: every rank metric per model, side and rank type, with its bootstrap interval over test triples; one collated table; the per-dataset expectations under
# random ranking (workflow/rules/data.smk), collated.


# One job per trained model, for all its splits (as compute_ranks): imports cost more than a small split's metrics.
rule compute_metrics:
    input:
        ranks=expand(
            R("ranks/{{dataset}}/{{model}}/{{seed}}/{split}.parquet"),
            split=config["ranking"]["splits"],
        ),
    output:
        metrics=expand(
            R("metrics/{{dataset}}/{{model}}/{{seed}}/{split}.tsv"),
            split=config["ranking"]["splits"],
        ),
    log:
        R("logs/compute_metrics/{dataset}/{model}/{seed}.log"),
    conda:
        CONDA_ENV
    threads: 1
    resources:
        mem_mb=3000,
        runtime=20,
    params:
        splits=config["ranking"]["splits"],
        uncertainty=config["uncertainty"],
    script:
        "../../scripts/lp/compute_metrics.py"


rule collate_metrics:
    input:
        metrics=metrics_files(),
    output:
        table=report(
            R("tables/metrics.tsv"),
            caption="../report/metrics.rst",
            category="Foundation",
        ),
    log:
        R("logs/collate_metrics/collate_metrics.log"),
    conda:
        CONDA_ENV
    threads: 1
    resources:
        mem_mb=2000,
        runtime=10,
    script:
        "../../scripts/lp/collate_metrics.py"


rule tabulate_expectations:
    input:
        tables=expand(
            R("datasets/{dataset}/expectations.tsv"),
            dataset=list(config["datasets"]),
        ),
    output:
        table=report(
            R("tables/expectations.tsv"),
            caption="../report/expectations.rst",
            category="Foundation",
        ),
    log:
        R("logs/tabulate_expectations/tabulate_expectations.log"),
    conda:
        CONDA_ENV
    threads: 1
    resources:
        mem_mb=2000,
        runtime=10,
    script:
        "../../scripts/lp/tabulate_expectations.py"


rule table_metrics_by_relation:
    input:
        data=evaluated_dataset_files(),
        ranks=run_paths(
            R("ranks/{dataset}/{model}/{seed}/{split}.parquet"),
            runs(),
            split=config["ranking"]["splits"],
        ),
    output:
        table=report(
            R("tables/metrics_by_relation.tsv"),
            caption="../report/metrics_by_relation.rst",
            category="Foundation",
            labels={"table": "metrics by relation"},
        ),
    log:
        R("logs/table_metrics_by_relation/table_metrics_by_relation.log"),
    conda:
        CONDA_ENV
    threads: 1
    resources:
        mem_mb=4000,
        runtime=60,
    params:
        datasets=evaluated_dataset_specs(),
        data_dir=config["data_dir"],
        uncertainty=config["uncertainty"],
    script:
        "../../scripts/lp/table_metrics_by_relation.py"


rule plot_metrics_by_relation:
    input:
        table=R("tables/metrics_by_relation.tsv"),
    output:
        pdf=report(
            R("figures/metrics_by_relation.pdf"),
            caption="../report/metrics_by_relation_figure.rst",
            category="Foundation",
            labels={"figure": "MRR by relation category", "format": "pdf"},
        ),
        png=report(
            R("figures/metrics_by_relation.png"),
            caption="../report/metrics_by_relation_figure.rst",
            category="Foundation",
            labels={"figure": "MRR by relation category", "format": "png"},
        ),
    log:
        R("logs/plot_metrics_by_relation/plot_metrics_by_relation.log"),
    conda:
        CONDA_ENV
    threads: 1
    resources:
        mem_mb=1000,
        runtime=5,
    script:
        "../../scripts/lp/plot_metrics_by_relation.py"


# A dataset evaluated with sampled candidates (ranking.candidates): one job per model for all its splits, the
# per-query counts and the estimates of the full metrics with intervals, collated into tables/metrics_sampled.tsv.
rule evaluate_sampled:
    wildcard_constraints:
        dataset=dataset_pattern(sampled=True),
        model=model_pattern("train", "checkpoint"),
    input:
        data=dataset_files,
        model=R("models/{dataset}/{model}/{seed}/model.pt"),
    output:
        counts=expand(
            R("sampled/{{dataset}}/{{model}}/{{seed}}/{split}.parquet"),
            split=config["ranking"]["splits"],
        ),
        metrics=expand(
            R("sampled/{{dataset}}/{{model}}/{{seed}}/{split}.tsv"),
            split=config["ranking"]["splits"],
        ),
    log:
        R("logs/evaluate_sampled/{dataset}/{model}/{seed}.log"),
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
        splits=config["ranking"]["splits"],
        candidates=sampled_entry,
        uncertainty=config["uncertainty"],
    script:
        "../../scripts/lp/evaluate_sampled.py"


rule collate_sampled_metrics:
    input:
        metrics=sampled_files("tsv"),
    output:
        table=report(
            R("tables/metrics_sampled.tsv"),
            caption="../report/metrics_sampled.rst",
            category="Foundation",
        ),
    log:
        R("logs/collate_sampled_metrics/collate_sampled_metrics.log"),
    conda:
        CONDA_ENV
    threads: 1
    resources:
        mem_mb=2000,
        runtime=10,
    script:
        "../../scripts/lp/collate_sampled_metrics.py"
