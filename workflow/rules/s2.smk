# S2 (paper 001, Hoyt et al. 2022): adjusted indices and z-scores compared across datasets of different sizes.
# Every figure and table has its own rule; `snakemake study_s2` builds them all.


rule table_s2_grid:
    input:
        metrics=R("tables/metrics.tsv"),
        expectations=R("tables/expectations.tsv"),
        summaries=expand(R("datasets/{dataset}/summary.tsv"), dataset=S2_DATASETS),
    output:
        table=report(
            R("s2/tables/grid.tsv"),
            caption="../report/s2_grid.rst",
            category="S2 adjusted metrics",
            labels={"table": "models x datasets grid"},
        ),
    log:
        R("logs/table_s2_grid/table_s2_grid.log"),
    conda:
        CONDA_ENV
    threads: 1
    resources:
        mem_mb=2000,
        runtime=10,
    params:
        families=S2["families"],
        split=S2["split"],
        side=S2["side"],
        datasets=S2["datasets"],
        models=S2["models"],
    script:
        "../../scripts/s2/table_grid.py"


rule table_s2_size_correlation:
    input:
        grid=R("s2/tables/grid.tsv"),
    output:
        table=report(
            R("s2/tables/size_correlation.tsv"),
            caption="../report/s2_size_correlation.rst",
            category="S2 adjusted metrics",
            labels={"table": "Spearman correlation with dataset size"},
        ),
    log:
        R("logs/table_s2_size_correlation/table_s2_size_correlation.log"),
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


# one figure (and one rule, named after the family) per metric family: plot_s2_mrr, plot_s2_mr, plot_s2_hits_at_10, ...
for _family, _slug in zip(S2["families"], S2_FAMILIES):

    rule:
        name:
            f"plot_s2_{_slug}"
        input:
            grid=R("s2/tables/grid.tsv"),
        output:
            pdf=report(
                R(f"s2/figures/family_{_slug}.pdf"),
                caption="../report/s2_family.rst",
                category="S2 adjusted metrics",
                labels={
                    "figure": f"{_family['base']} / {_family['adjusted']} / {_family['z']}",
                    "format": "pdf",
                },
            ),
            png=report(
                R(f"s2/figures/family_{_slug}.png"),
                caption="../report/s2_family.rst",
                category="S2 adjusted metrics",
                labels={
                    "figure": f"{_family['base']} / {_family['adjusted']} / {_family['z']}",
                    "format": "png",
                },
            ),
        log:
            R(f"logs/plot_s2_{_slug}/plot_s2_{_slug}.log"),
        conda:
            CONDA_ENV
        threads: 1
        resources:
            mem_mb=1000,
            runtime=5,
        params:
            family=_family["base"],
        script:
            "../../scripts/s2/plot_family.py"


rule table_s2_expectation_curves:
    output:
        table=report(
            R("s2/tables/expectation_curves.tsv"),
            caption="../report/s2_expectation_curves.rst",
            category="S2 adjusted metrics",
            labels={
                "table": "expectation and variance against the number of candidates"
            },
        ),
    log:
        R("logs/table_s2_expectation_curves/table_s2_expectation_curves.log"),
    conda:
        CONDA_ENV
    threads: 1
    resources:
        mem_mb=2000,
        runtime=30,
    params:
        settings=S2["expectation_curves"],
    script:
        "../../scripts/s2/table_expectation_curves.py"


rule plot_s2_expectation_curves:
    input:
        table=R("s2/tables/expectation_curves.tsv"),
    output:
        pdf=report(
            R("s2/figures/expectation_curves.pdf"),
            caption="../report/s2_expectation_curves.rst",
            category="S2 adjusted metrics",
            labels={"figure": "expectation curves", "format": "pdf"},
        ),
        png=report(
            R("s2/figures/expectation_curves.png"),
            caption="../report/s2_expectation_curves.rst",
            category="S2 adjusted metrics",
            labels={"figure": "expectation curves", "format": "png"},
        ),
    log:
        R("logs/plot_s2_expectation_curves/plot_s2_expectation_curves.log"),
    conda:
        CONDA_ENV
    threads: 1
    resources:
        mem_mb=1000,
        runtime=5,
    script:
        "../../scripts/s2/plot_expectation_curves.py"


rule table_s2_desiderata:
    output:
        table=report(
            R("s2/tables/desiderata.tsv"),
            caption="../report/s2_desiderata.rst",
            category="S2 adjusted metrics",
            labels={"table": "desiderata (paper Table 1)"},
        ),
        evidence=R("s2/tables/desiderata_evidence.tsv"),
    log:
        R("logs/table_s2_desiderata/table_s2_desiderata.log"),
    conda:
        CONDA_ENV
    threads: 1
    resources:
        mem_mb=2000,
        runtime=15,
    params:
        settings=S2["desiderata"],
    script:
        "../../scripts/s2/table_desiderata.py"


# S2's size claims (paper 001, Sec. 4.3, Fig. 1) on this tier's trained grid
rule table_s2_claims:
    input:
        grid=R("s2/tables/grid.tsv"),
    output:
        table=report(
            R("claims/s2.tsv"),
            caption="../report/claims_s2.rst",
            category="Claims",
            labels={"table": "S2 claims"},
        ),
    log:
        R("logs/table_s2_claims/table_s2_claims.log"),
    conda:
        CONDA_ENV
    threads: 1
    resources:
        mem_mb=1000,
        runtime=5,
    params:
        uncertainty=config["uncertainty"],
    script:
        "../../scripts/s2/table_claims.py"


rule study_s2:
    input:
        unless_skipped("s2"),
        R("claims/s2.tsv"),
        R("s2/tables/grid.tsv"),
        R("s2/tables/size_correlation.tsv"),
        expand(
            R("s2/figures/family_{slug}.{ext}"),
            slug=S2_FAMILIES,
            ext=["pdf", "png"],
        ),
        R("s2/tables/expectation_curves.tsv"),
        R("s2/figures/expectation_curves.pdf"),
        R("s2/figures/expectation_curves.png"),
        R("s2/tables/desiderata.tsv"),
