# S4 (paper 003, Zhou et al. 2022): label sparsity - sparse vs pooled labels, micro vs macro metrics.
# Every figure and table has its own rule; `snakemake study_s4` builds them all, per studied dataset and seed.


# --- settings and input functions of the S4 rules (s4_released.smk, included after this file, reads S4 too) ---

from kgeval.studies.s4.jobs import resolve_level
from kgeval.studies.s4.labels import RELEASE_FILES as S4_RELEASE_FILES
from kgeval.uncertainty.resampling import stream_seed

S4 = config["studies"]["s4"]
S4_DATASETS = (
    list(config["datasets"]) if S4["datasets"] is None else list(S4["datasets"])
)
S4_SYSTEMS = list(config["models"]) if S4["systems"] is None else list(S4["systems"])
# the pool reads each system's top-k candidates: a model given as a ranks file has none (it is evaluated, not pooled)
S4_POOL = (
    [m for m in S4_SYSTEMS if m not in models_of_source(config, ["ranks"])]
    if S4["pool"]["systems"] is None
    else list(S4["pool"]["systems"])
)
S4_MAX_DEPTH = S4["pool"]["max_depth"]


def s4_systems(dataset, seed):
    """The systems of one label set: those with a run on the dataset and seed; a released label set re-ranks each
    system on its own universe, so it takes the systems with a model only."""
    systems = [model for _, model, _ in runs([dataset], S4_SYSTEMS, [seed])]
    if dataset in S4["released"]:
        systems = scored_models(config, systems)[0]
    return systems


def s4_pool(dataset, seed):
    """The pooled systems of a simulated label set (those with a run on the dataset and seed)."""
    return [model for _, model, _ in runs([dataset], S4_POOL, [seed])]


def s4_check():
    """Check the S4 section against the rest of the config; raise a clear error naming the key."""
    for key, names, known in (
        ("datasets", S4_DATASETS, config["datasets"]),
        ("systems", S4_SYSTEMS, config["models"]),
        ("pool.systems", S4_POOL, S4_SYSTEMS),
        ("released", list(S4["released"]), config["datasets"]),
    ):
        missing = [name for name in names if name not in known]
        if missing:
            raise ValueError(
                f"config key studies.s4.{key}: {missing} not among {sorted(known)}; add them there (models: see "
                "the notes under studies.s4.paper_systems) or drop them from studies.s4"
            )
    ranks_only = [m for m in S4_POOL if m in models_of_source(config, ["ranks"])]
    if ranks_only:
        raise ValueError(
            f"config key studies.s4.pool.systems: {ranks_only} are given as ranks files (source: ranks) and have no "
            "top-k candidates to pool; leave them out of the pool (they are still evaluated as systems)"
        )
    for name, spec in S4["paper_systems"].items():
        if spec["model"] not in S4_SYSTEMS:
            raise ValueError(
                f"config key studies.s4.paper_systems.{name}.model: {spec['model']!r} is not one of studies.s4.systems"
            )
    if S4_MAX_DEPTH > config["ranking"]["top_k"] and set(S4_DATASETS) - set(
        S4["released"]
    ):
        raise ValueError(
            f"config key studies.s4.pool.max_depth ({S4_MAX_DEPTH}) exceeds ranking.top_k "
            f"({config['ranking']['top_k']}): the simulated pool reads the top-k lists"
        )
    for name in (
        [S4["analysis_level"]]
        + S4["stability"]["levels"]
        + S4["discriminative"]["levels"]
    ):
        resolve_level(name, S4_MAX_DEPTH)


def s4_too_few():
    """Why a label set cannot be studied (fewer than 3 systems, or no pool), or None."""
    for dataset in S4_DATASETS:
        for seed in seeds():
            systems = s4_systems(dataset, seed)
            if len(systems) < 3:
                return (
                    f"Kendall's tau between system rankings needs at least 3 systems; dataset {dataset} (seed "
                    f"{seed}) has {len(systems)} (studies.s4.systems, default: every model under models; a model "
                    "trained elsewhere counts on its own dataset and seed only)"
                )
            if dataset not in S4["released"] and not s4_pool(dataset, seed):
                return f"dataset {dataset} (seed {seed}) has no system with top-k lists to pool (studies.s4.pool)"
    return None


if enabled("s4"):
    s4_check()
    leave_out(
        "S4's pool",
        [m for m in S4_SYSTEMS if m not in S4_POOL and m in models_of_source(config, ["ranks"])],
        "pooling reads each system's top-k candidates, which a ranks file lacks (it is still evaluated)",
    )
    leave_out(
        "S4's released label sets",
        [
            m
            for m in S4_SYSTEMS
            if m in models_of_source(config, ["ranks"])
            and config["models"][m]["dataset"] in set(S4_DATASETS) & set(S4["released"])
        ],
        "they re-rank each system on the release's own universe, which needs the model's scores",
    )
    _s4_reason = s4_too_few()
    if _s4_reason:
        skip("s4", _s4_reason)


def s4_release_files(dataset):
    """The S4 release files read for a released label set (under data_dir; nothing to declare when downloaded)."""
    if config["data_dir"] is None:
        return []
    folder = os.path.join(config["data_dir"], S4["released"][dataset])
    return [os.path.join(folder, name) for name in S4_RELEASE_FILES]


def s4_label_inputs(wildcards):
    """Simulated labels read the test ranks (the universe) and the pool's top-k lists; released ones their files."""
    if wildcards.dataset in S4["released"]:
        return {"release": s4_release_files(wildcards.dataset)}
    pool = s4_pool(wildcards.dataset, wildcards.seed)
    return {
        "test_ranks": R(
            f"ranks/{wildcards.dataset}/{pool[0]}/{wildcards.seed}/test.parquet"
        ),
        "topk": expand(
            R("ranks/{dataset}/{model}/{seed}/topk.parquet"),
            dataset=wildcards.dataset,
            model=pool,
            seed=wildcards.seed,
        ),
    }


def s4_ranks(wildcards):
    """Per system, the ranks of the label set's universe: the test ranks, or for released labels their own ranks."""
    if wildcards.dataset in S4["released"]:
        pattern = R("s4/{dataset}/{seed}/ranks/{model}.parquet")
    else:
        pattern = R("ranks/{dataset}/{model}/{seed}/test.parquet")
    return expand(
        pattern,
        dataset=wildcards.dataset,
        model=s4_systems(wildcards.dataset, wildcards.seed),
        seed=wildcards.seed,
    )


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
        pool_systems=lambda wildcards: s4_pool(wildcards.dataset, wildcards.seed),
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
        systems=lambda wildcards: s4_systems(wildcards.dataset, wildcards.seed),
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
        seed=lambda wildcards: stream_seed(
            config["uncertainty"]["seed"], "s4", "discriminative", wildcards.dataset, wildcards.seed
        ),
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
        dataset=lambda wildcards: wildcards.dataset,
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
        dataset=lambda wildcards: wildcards.dataset,
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
        dataset=lambda wildcards: wildcards.dataset,
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
    script:
        "../../scripts/s4/plot_discriminative.py"


# S4's Sec. 4.2 claims (paper 003, Figs. 3-5) on this tier's systems, one set per dataset and seed
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


#: each wildcard-free target (rule <name>_each per dataset and seed) -> its file that study_s4 asks for
S4_TARGETS = {
    "build_s4_labels": "labels/levels.tsv",
    "evaluate_s4_levels": "metrics.tsv",
    "table_s4_tau_depth": "tables/tau_depth.tsv",
    "table_s4_categories": "tables/table3_categories.tsv",
    "table_s4_reweighted": "tables/table4_reweighted.tsv",
    "table_s4_stability": "tables/stability.tsv",
    "table_s4_discriminative": "tables/discriminative.tsv",
    "plot_s4_system_ranking": "figures/fig3_system_ranking.png",
    "plot_s4_tau_depth": "figures/fig4_tau_depth.png",
    "plot_s4_micro_macro": "figures/fig5_micro_macro.png",
    "plot_s4_relation_mrr": "figures/fig6_relation_mrr.png",
    "plot_s4_stability": "figures/fig7_stability.png",
    "plot_s4_discriminative": "figures/fig8_discriminative.png",
}


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
