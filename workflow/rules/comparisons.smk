# Paired model comparisons: every two models of a dataset, split and seed on MRR, Hits@10 and AMRI, with paired
# bootstrap intervals over test triples (the resamples of tables/metrics.tsv), sign-flip tests per test triple and
# Holm's correction; one figure per dataset. Over seeds: every two models with two or more seeds each, with two-stage
# intervals (seeds, then test triples) and the exact permutation test of the seed labels.


rule table_model_comparisons:
    input:
        ranks=run_paths(
            R("ranks/{dataset}/{model}/{seed}/{split}.parquet"),
            runs(),
            split=config["ranking"]["splits"],
        ),
    output:
        table=report(
            R("tables/model_comparisons.tsv"),
            caption="../report/model_comparisons.rst",
            category="Foundation",
            labels={"table": "paired model comparisons"},
        ),
    log:
        R("logs/table_model_comparisons/table_model_comparisons.log"),
    conda:
        CONDA_ENV
    threads: 1
    resources:
        mem_mb=4000,
        runtime=30,
    params:
        uncertainty=config["uncertainty"],
        comparisons=config["comparisons"],
    script:
        "../../scripts/lp/table_model_comparisons.py"


rule table_model_comparisons_over_seeds:
    input:
        ranks=run_paths(
            R("ranks/{dataset}/{model}/{seed}/{split}.parquet"),
            runs(),
            split=config["ranking"]["splits"],
        ),
    output:
        table=report(
            R("tables/model_comparisons_over_seeds.tsv"),
            caption="../report/model_comparisons_over_seeds.rst",
            category="Foundation",
            labels={"table": "model comparisons over seeds"},
        ),
    log:
        R("logs/table_model_comparisons_over_seeds/table_model_comparisons_over_seeds.log"),
    conda:
        CONDA_ENV
    threads: 1
    resources:
        mem_mb=4000,
        runtime=30,
    params:
        uncertainty=config["uncertainty"],
        comparisons=config["comparisons"],
    script:
        "../../scripts/lp/table_model_comparisons_over_seeds.py"


rule plot_model_comparisons_each:
    input:
        table=R("tables/model_comparisons.tsv"),
    output:
        pdf=report(
            R("figures/model_comparisons/{dataset}.pdf"),
            caption="../report/model_comparisons_figure.rst",
            category="Foundation",
            subcategory="{dataset}",
            labels={"figure": "paired model comparisons", "format": "pdf"},
        ),
        png=report(
            R("figures/model_comparisons/{dataset}.png"),
            caption="../report/model_comparisons_figure.rst",
            category="Foundation",
            subcategory="{dataset}",
            labels={"figure": "paired model comparisons", "format": "png"},
        ),
    log:
        R("logs/plot_model_comparisons/{dataset}.log"),
    conda:
        CONDA_ENV
    threads: 1
    resources:
        mem_mb=1000,
        runtime=5,
    script:
        "../../scripts/lp/plot_model_comparisons.py"


rule plot_model_comparisons:
    input:
        expand(
            R("figures/model_comparisons/{dataset}.{ext}"),
            dataset=full_datasets(config),
            ext=["pdf", "png"],
        ),


# The evaluation of every configured model and nothing else (no EA run, no study): ranks, metrics, expectations, the
# metrics by relation and category, the paired comparisons and their figures; docs/byo.md.
rule evaluate:
    input:
        evaluate_targets(),
