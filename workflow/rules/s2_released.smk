# S2 (paper 001) at paper scale without training: the authors' released base metrics (ComplEx, RotatE, TransE, TuckER
# on Nations, Kinships, FB15k-237, WN18RR) adjusted with kgeval's expectations from the datasets' candidate counts.
# `snakemake study_s2_released` builds Fig. 1's families, the published-vs-kgeval table and results/claims/s2_released.tsv.


rule table_s2_released_metrics:
    input:
        expectations=R("tables/expectations.tsv"),
        release=s2r_release_files,
    output:
        table=report(
            R("s2/released/tables/metrics.tsv"),
            caption="../report/s2_released_metrics.rst",
            category="S2 released results",
            labels={"table": "released base metrics with kgeval's adjustments"},
        ),
    log:
        R("logs/table_s2_released_metrics/table_s2_released_metrics.log"),
    conda:
        CONDA_ENV
    threads: 1
    resources:
        mem_mb=1000,
        runtime=5,
    params:
        data_dir=config["data_dir"],
        folder=S2R["folder"],
        datasets=S2R_DATASETS,
        split=S2["split"],
        side=S2["side"],
    script:
        "../../scripts/s2/table_released_metrics.py"


rule table_s2_released_comparison:
    input:
        metrics=R("s2/released/tables/metrics.tsv"),
        release=s2r_release_files,
    output:
        table=report(
            R("s2/released/tables/published_vs_kgeval.tsv"),
            caption="../report/s2_released_comparison.rst",
            category="S2 released results",
            labels={"table": "published adjusted values vs kgeval's"},
        ),
    log:
        R("logs/table_s2_released_comparison/table_s2_released_comparison.log"),
    conda:
        CONDA_ENV
    threads: 1
    resources:
        mem_mb=1000,
        runtime=5,
    params:
        data_dir=config["data_dir"],
        folder=S2R["folder"],
        datasets=S2R_DATASETS,
    script:
        "../../scripts/s2/table_released_comparison.py"


rule table_s2_released_expectation_check:
    input:
        release=s2r_release_files,
        data=s2r_dataset_files,
    output:
        table=report(
            R("s2/released/tables/expectation_check.tsv"),
            caption="../report/s2_released_expectation_check.rst",
            category="S2 released results",
            labels={"table": "expectations behind the published values"},
        ),
    log:
        R(
            "logs/table_s2_released_expectation_check/table_s2_released_expectation_check.log"
        ),
    conda:
        CONDA_ENV
    threads: 1
    resources:
        mem_mb=4000,
        runtime=20,
    params:
        data_dir=config["data_dir"],
        folder=S2R["folder"],
        dataset_specs=s2r_dataset_specs,
        datasets=S2R_DATASETS,
        split=S2["split"],
        num_samples=S2R["monte_carlo"]["num_samples"],
        seed=S2R["monte_carlo"]["seed"],
    script:
        "../../scripts/s2/table_released_expectation_check.py"


rule table_s2_released_grid:
    input:
        metrics=R("s2/released/tables/metrics.tsv"),
        expectations=R("tables/expectations.tsv"),
        summaries=expand(R("datasets/{dataset}/summary.tsv"), dataset=S2R_KEYS),
    output:
        table=report(
            R("s2/released/tables/grid.tsv"),
            caption="../report/s2_grid.rst",
            category="S2 released results",
            labels={"table": "models x datasets grid (released)"},
        ),
    log:
        R("logs/table_s2_released_grid/table_s2_released_grid.log"),
    conda:
        CONDA_ENV
    threads: 1
    resources:
        mem_mb=1000,
        runtime=5,
    params:
        families=S2["families"],
        split=S2["split"],
        side=S2["side"],
        datasets=S2R_KEYS,
        models=None,  # every model of the released metrics
    script:
        "../../scripts/s2/table_grid.py"


rule table_s2_released_size_correlation:
    input:
        grid=R("s2/released/tables/grid.tsv"),
    output:
        table=report(
            R("s2/released/tables/size_correlation.tsv"),
            caption="../report/s2_size_correlation.rst",
            category="S2 released results",
            labels={"table": "Spearman correlation with dataset size (released)"},
        ),
    log:
        R(
            "logs/table_s2_released_size_correlation/table_s2_released_size_correlation.log"
        ),
    conda:
        CONDA_ENV
    threads: 1
    resources:
        mem_mb=1000,
        runtime=5,
    params:
        size_measure=S2["size_measure"],
    script:
        "../../scripts/s2/table_size_correlation.py"


# one figure per metric family (Fig. 1 is family_mrr); {family} is the family's file-name slug (hits_at_10, ...)
rule plot_s2_released_family_each:
    input:
        grid=R("s2/released/tables/grid.tsv"),
    output:
        pdf=report(
            R("s2/released/figures/family_{family}.pdf"),
            caption="../report/s2_released_family.rst",
            category="S2 released results",
            labels={"figure": "family {family}", "format": "pdf"},
        ),
        png=report(
            R("s2/released/figures/family_{family}.png"),
            caption="../report/s2_released_family.rst",
            category="S2 released results",
            labels={"figure": "family {family}", "format": "png"},
        ),
    log:
        R("logs/plot_s2_released_family/{family}.log"),
    wildcard_constraints:
        family="|".join(S2_FAMILIES),
    conda:
        CONDA_ENV
    threads: 1
    resources:
        mem_mb=1000,
        runtime=5,
    params:
        family=s2r_family_base,
    script:
        "../../scripts/s2/plot_family.py"


# Wildcard-free target: `snakemake plot_s2_released_family` draws every family.
rule plot_s2_released_family:
    input:
        outputs_of(rules.plot_s2_released_family_each, family=S2_FAMILIES),
    localrule: True


rule table_s2_released_claims:
    input:
        grid=R("s2/released/tables/grid.tsv"),
        published=R("s2/released/tables/published_vs_kgeval.tsv"),
        check=R("s2/released/tables/expectation_check.tsv"),
        summaries=expand(R("datasets/{dataset}/summary.tsv"), dataset=S2R_KEYS),
    output:
        table=report(
            R("claims/s2_released.tsv"),
            caption="../report/claims_s2_released.rst",
            category="Claims",
            labels={"table": "S2 claims (released results)"},
        ),
    log:
        R("logs/table_s2_released_claims/table_s2_released_claims.log"),
    conda:
        CONDA_ENV
    threads: 1
    resources:
        mem_mb=1000,
        runtime=5,
    params:
        datasets=S2R_DATASETS,
        uncertainty=config["uncertainty"],
    script:
        "../../scripts/s2/table_released_claims.py"


rule study_s2_released:
    input:
        R("tables/expectations.tsv"),
        R("s2/released/tables/metrics.tsv"),
        R("s2/released/tables/published_vs_kgeval.tsv"),
        R("s2/released/tables/expectation_check.tsv"),
        R("s2/released/tables/grid.tsv"),
        R("s2/released/tables/size_correlation.tsv"),
        expand(
            R("s2/released/figures/family_{family}.{ext}"),
            family=S2_FAMILIES,
            ext=["pdf", "png"],
        ),
        R("claims/s2_released.tsv"),
