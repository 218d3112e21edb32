# Config validation, the study registry, and every helper of the rule files (the functions, and the settings and
# checks computed from the config, that the rules read), first those of the core rule files (data, train, ranks,
# metrics) and of more than one study, then one section per study ("# --- S4 (s4.smk): ..."), in the order the
# Snakefile includes the study rule files. The other .smk files hold rules only (tests/test_layout.py checks it).
import os
import sys
from pathlib import Path
from types import SimpleNamespace

from snakemake.exceptions import WorkflowError

# The kgeval library is imported from src/ whether or not it is pip-installed, here and in every job (e.g. in a
# --use-conda environment, which only holds the third-party packages).
SRC = os.path.join(workflow.basedir, "src")
sys.path.insert(0, SRC)

from kgeval.config import (
    ConfigError,
    check_input_files,
    full_datasets,
    model_spec_for,
    prepend_pythonpath,
    resolve_data_dir,
    sampled_datasets,
    validate_config,
)
from kgeval.ea.data import source_files as ea_source_files
from kgeval.lp.datasets import source_files as lp_source_files
from kgeval.lp.source_checks import check_source_files
from kgeval.lp.sources import (
    model_runs,
    models_of_source,
    scored_models,
    source_files as model_source_files,
)
from kgeval.studies import STUDIES
from kgeval.studies.s1.rank_types import study_settings
from kgeval.studies.s2.grid import family_slug
from kgeval.studies.s3.grid import claim_settings
from kgeval.studies.s4.jobs import resolve_level
from kgeval.studies.s4.labels import RELEASE_FILES as S4_RELEASE_FILES
from kgeval.studies.s4.release_files import LABEL_FILES as S4R_LABEL_FILES
from kgeval.studies.s4.release_files import RESULT_FILES as S4R_RESULT_FILES
from kgeval.uncertainty.resampling import stream_seed

prepend_pythonpath(SRC)

# `--config data_dir=null` arrives as the string "null": it means no local folder, as null does in a config file; a
# data_dir folder that does not exist (a clone without ../shared/data) means the same: the loaders download instead
_data_dir_message = resolve_data_dir(config)
if _data_dir_message:
    print(_data_dir_message, file=sys.stderr)


def config_checked(check, *args, **kwargs):
    """Run a check of the config; a ConfigError ends the run with its message as the first line of the console (no
    traceback: the message names the key, the file and the fix)."""
    try:
        return check(*args, **kwargs)
    except ConfigError as error:
        print(f"{error}\n(config error, found before any job; kgeval check-config CONFIG checks a config file)",
              file=sys.stderr)
        raise SystemExit(1) from None


config_checked(validate_config, config)

#: every output of this config lies under results_dir (one folder per config, so tiers never overwrite each other)
RESULTS = config["results_dir"].rstrip("/")


def R(path):
    """``path`` under this config's results folder (``results_dir``)."""
    return f"{RESULTS}/{path}"


#: the conda environment every job runs in, named by each rule
CONDA_ENV = "../../envs/kgeval.yaml"

#: the target rule of each study (rule all collects its inputs)
STUDY_TARGETS = {study: [f"study_{study}"] for study in STUDIES}


def study_rule_files():
    """The rule files of each study of kgeval.studies.STUDIES (the one list of the studies), in its order:
    ``<study>.smk`` and ``<study>_<part>.smk``, sorted, as paths from the workflow's base folder.
    """
    folder = Path(workflow.basedir, "workflow", "rules")
    return [
        os.path.join("workflow", "rules", name)
        for study in STUDIES
        for name in sorted(
            path.name
            for pattern in (f"{study}.smk", f"{study}_*.smk")
            for path in folder.glob(pattern)
        )
    ]


#: studies this config cannot run, with the reason; rule all leaves them out and their targets fail with the reason
SKIPPED = {}


def enabled(study):
    """Whether studies.<study>.enabled is true (the default)."""
    return config["studies"].get(study, {}).get("enabled", True)


def skip(study, reason):
    """Leave ``study`` out of rule all, saying why once on the console."""
    if study not in SKIPPED:
        SKIPPED[study] = reason
        print(f"kgeval: skipping {study.upper()}: {reason}", file=sys.stderr)


def unless_skipped(study):
    """An input function for a study's targets: nothing, or the reason as an error when the study is skipped."""

    def check(wildcards):
        if study in SKIPPED:
            raise WorkflowError(
                f"{study.upper()} cannot run with this config: {SKIPPED[study]}"
            )
        if not enabled(study):
            raise WorkflowError(
                f"{study.upper()} is disabled in this config (studies.{study}.enabled: false); enable it to build it"
            )
        return []

    return check


#: the released-results target of a study, switched by studies.<study>.released_results.enabled (not by .enabled)
RELEASED_TARGETS = {"s2": "study_s2_released", "s4": "study_s4_released"}
assert set(RELEASED_TARGETS) <= set(STUDIES), RELEASED_TARGETS


def released_enabled(study):
    """Whether rule all builds the study's released-results targets."""
    return bool(
        config["studies"][study].get("released_results", {}).get("enabled", False)
    )


def study_targets(rules):
    """Inputs of the target rules of every enabled study that this config can run (rule all collects them)."""
    defined = {rule.name for rule in workflow.rules}
    targets = []
    for study, names in STUDY_TARGETS.items():
        if not enabled(study) or study in SKIPPED:
            continue
        for name in names:
            if name in defined:
                targets.extend(getattr(rules, name).input)
    for study, name in RELEASED_TARGETS.items():
        if released_enabled(study) and name in defined:
            targets.extend(getattr(rules, name).input)
    return targets


def core_targets():
    """The core tables that rule all collects (the expectations, which need no model, and the collated metrics and
    the paired model comparisons, per seed with one figure per dataset and over seeds, when models are trained).
    """
    targets = [R("tables/expectations.tsv")]
    if config["train_models"]:
        targets.append(R("tables/metrics.tsv"))
        targets.append(R("tables/model_comparisons.tsv"))
        targets.append(R("tables/model_comparisons_over_seeds.tsv"))
        targets += expand(
            R("figures/model_comparisons/{dataset}.{ext}"),
            dataset=full_datasets(config),
            ext=["pdf", "png"],
        )
        targets += sampled_targets()
    return targets


def sampled_targets():
    """tables/metrics_sampled.tsv when some dataset is evaluated with sampled candidates (ranking.candidates)."""
    return [R("tables/metrics_sampled.tsv")] if SAMPLED_DATASETS else []


def evaluate_targets():
    """What the evaluate target builds for every configured model, and nothing of an EA run or a study: the
    expectations, the collated metrics, the metrics by relation and category with their figure, and the paired
    model comparisons (per seed with one figure per dataset, and over seeds)."""
    return [
        R("tables/expectations.tsv"),
        R("tables/metrics.tsv"),
        R("tables/metrics_by_relation.tsv"),
        R("figures/metrics_by_relation.pdf"),
        R("figures/metrics_by_relation.png"),
        R("tables/model_comparisons.tsv"),
        R("tables/model_comparisons_over_seeds.tsv"),
    ] + sampled_targets() + expand(
        R("figures/model_comparisons/{dataset}.{ext}"),
        dataset=full_datasets(config),
        ext=["pdf", "png"],
    )


def comparable_groups():
    """The (dataset, seed) pairs with two or more models' ranks: the groups tables/model_comparisons.tsv compares."""
    models = {}
    for dataset, model, seed in runs():
        models.setdefault((dataset, seed), set()).add(model)
    return sorted(key for key, names in models.items() if len(names) >= 2)


def evaluated_datasets():
    """The dataset keys that have a ranks table (a run of some model), in config order."""
    keys = {dataset for dataset, _, _ in runs()}
    return [key for key in config["datasets"] if key in keys]


def evaluated_dataset_specs():
    """The config entries of the datasets that have a ranks table."""
    return {key: config["datasets"][key] for key in evaluated_datasets()}


def evaluated_dataset_files():
    """The local files of the datasets that have a ranks table (their training triples give the categories)."""
    return [
        path
        for key in evaluated_datasets()
        for _, path in lp_source_files(key, config["datasets"][key], config["data_dir"])
    ]


def outputs_of(rule, **values):
    """Every output of a rule with wildcards, expanded over the given wildcard values (for wildcard-free targets)."""
    return expand([str(path) for path in rule.output], **values)


def seeds():
    """The configured seeds, as strings for expand()."""
    return [str(s) for s in config["seeds"]]


# --- models and their runs: a trained model runs on every dataset with every seed, a model trained elsewhere
# (source checkpoint or ranks, kgeval.lp.sources) on its own dataset under its own seed ---


def runs(datasets=None, models=None, seeds=None):
    """(dataset, model, seed) of every run that has ranks tables, restricted to the given keys (None: all)."""
    return model_runs(config, datasets=datasets, models=models, seeds=seeds)


def run_paths(pattern, runs_, **values):
    """``pattern`` filled in for each (dataset, model, seed) run and each combination of the further values."""
    return [
        path
        for dataset, model, seed in runs_
        for path in expand(pattern, dataset=dataset, model=model, seed=seed, **values)
    ]


def model_pattern(*sources):
    """A wildcard constraint matching the model keys of the given sources (and nothing when there are none)."""
    return "|".join(models_of_source(config, sources)) or "(?!x)x"


#: studies that need a model's scores leave out ranks-only models, with one console line each (see skip)
LEFT_OUT = {}


def leave_out(study, models, reason):
    """Say once on the console that ``study`` leaves out the ranks-only ``models``, and why."""
    if models and study not in LEFT_OUT:
        LEFT_OUT[study] = models
        print(
            f"kgeval: leaving {', '.join(models)} (source: ranks) out of {study}: {reason}",
            file=sys.stderr,
        )


def with_scores(study, models, reason):
    """The models among ``models`` that have a model scoring triples; the ranks-only ones are left out, saying so."""
    scored, ranks_only = scored_models(config, models)
    leave_out(study, ranks_only, reason)
    return scored


def model_files(name, datasets=None, models=None):
    """results/models/{dataset}/{model}/{seed}/<name> for every run of a model that scores (trained or
    checkpoint)."""
    scored, _ = scored_models(config, models)
    return run_paths(
        R(f"models/{{dataset}}/{{model}}/{{seed}}/{name}"),
        runs(datasets=datasets, models=scored),
    )


def ranks_files(split, datasets=None, models=None, seeds=None):
    """results/ranks/{dataset}/{model}/{seed}/<split>.parquet for every run."""
    return run_paths(
        R("ranks/{dataset}/{model}/{seed}/{split}.parquet"),
        runs(datasets=datasets, models=models, seeds=seeds),
        split=[split],
    )


def metrics_files():
    """Every per-model metrics table."""
    return run_paths(
        R("metrics/{dataset}/{model}/{seed}/{split}.tsv"),
        runs(),
        split=config["ranking"]["splits"],
    )


# --- datasets evaluated with sampled candidates (ranking.candidates; kgeval.lp.sampled): no ranks tables, no study,
# estimates of the full metrics with intervals in tables/metrics_sampled.tsv ---

#: the dataset keys evaluated with sampled candidates, in config order
SAMPLED_DATASETS = sampled_datasets(config)


def sampled_runs():
    """(dataset, model, seed) of every model that scores candidates on a dataset evaluated with sampled candidates;
    a ranks-only model has no scores to sample, and is left out, saying so."""
    if not SAMPLED_DATASETS:
        return []
    scored = with_scores(
        "sampled evaluation",
        [m for m in config["models"] if model_runs(config, datasets=SAMPLED_DATASETS, models=[m])],
        "a sample needs the model's score of each sampled candidate, which a ranks file lacks",
    )
    return model_runs(config, datasets=SAMPLED_DATASETS, models=scored)


def sampled_files(ext):
    """results/sampled/{dataset}/{model}/{seed}/<split>.<ext> of every sampled run and split."""
    return run_paths(
        R(f"sampled/{{dataset}}/{{model}}/{{seed}}/{{split}}.{ext}"),
        sampled_runs(),
        split=config["ranking"]["splits"],
    )


def sampled_entry(wildcards):
    """The ranking.candidates entry of a dataset evaluated with sampled candidates."""
    return config["ranking"]["candidates"][wildcards.dataset]


def dataset_pattern(sampled):
    """A wildcard constraint matching the dataset keys evaluated with sampled candidates (or the others)."""
    keys = SAMPLED_DATASETS if sampled else full_datasets(config)
    return "|".join(keys) or "(?!x)x"


def dataset_spec(wildcards):
    """The config entry of a dataset."""
    return config["datasets"][wildcards.dataset]


def dataset_files(wildcards):
    """The local files a dataset reads (its triples files, or its copies under data_dir): inputs of its jobs."""
    spec = config["datasets"][wildcards.dataset]
    return [
        path for _, path in lp_source_files(wildcards.dataset, spec, config["data_dir"])
    ]


def model_spec(wildcards):
    """The settings of a model for a dataset (per-dataset overrides merged in)."""
    return model_spec_for(config, wildcards.model, wildcards.dataset)


def model_entry(wildcards):
    """The config entry of a model trained elsewhere (source, path, dataset, model)."""
    return config["models"][wildcards.model]


def model_source_inputs(wildcards):
    """The files a model trained elsewhere is read from (its checkpoint or ranks file)."""
    return model_source_files(config, wildcards.model)


# --- every local input file exists (checked before any job, naming its config key) ---


def used_ea_datasets():
    """EA pairs that an enabled study reads."""
    used = set()
    if enabled("s1"):
        used.update(config["studies"]["s1"]["testsize"]["ea_datasets"])
    if enabled("s3"):
        used.update(
            k for k in config["studies"]["s3"]["datasets"] if k in config["ea_datasets"]
        )
    return sorted(k for k in used if k in config["ea_datasets"])


config_checked(
    check_input_files,
    [
        entry
        for key, spec in config["datasets"].items()
        for entry in lp_source_files(key, spec, config["data_dir"])
    ]
    + [
        entry
        for key in used_ea_datasets()
        for entry in ea_source_files(
            key, config["ea_datasets"][key], config["data_dir"]
        )
    ],
    config["data_dir"],
)
# the files of models trained elsewhere: present everywhere, and read in full (dataset, labels, ranks) once, by the
# main process, so that a bad checkpoint or ranks file stops the run before any job (cluster jobs skip the reading)
config_checked(check_source_files, config, deep=workflow.is_main_process)

# one model per dataset and seed: the paired comparisons have nothing to compare, said once
if workflow.is_main_process and not comparable_groups():
    print(
        "kgeval: tables/model_comparisons.tsv will hold its header only: no dataset and seed has the ranks of two "
        "models to compare (add a model, or a model trained elsewhere on the same dataset and seed)",
        file=sys.stderr,
    )


# --- released results (S2: s2_released.smk, S4: s4_released.smk): checks and file paths shared by both ---


def check_released_datasets(study, keys, where):
    """With the study's released results enabled, every dataset key they map to must be configured (``where`` is
    the config key naming them)."""
    missing = [k for k in keys if k not in config["datasets"]]
    if released_enabled(study) and missing:
        raise ValueError(
            f"config key {where}: {missing} not among the configured datasets {sorted(config['datasets'])}; add "
            "them under datasets (e.g. fb15k237: {source: pykeen, name: FB15k237, local: fb15k237})"
        )


def released_paths(folder, names):
    """The release files read from ``folder`` (under data_dir, or absolute): rule inputs, so editing one reruns what
    reads it; nothing to declare when they are downloaded (folder null, or data_dir null and folder relative).
    """
    if folder is None or (config["data_dir"] is None and not os.path.isabs(folder)):
        return []
    base = folder if os.path.isabs(folder) else os.path.join(config["data_dir"], folder)
    return [os.path.join(base, name) for name in names]


def check_released_files(study, key, paths):
    """With the study's released results enabled, every release file under data_dir must exist (``key``: the config
    key of its folder)."""
    if released_enabled(study):
        check_input_files([(key, path) for path in paths], config["data_dir"])


# --- S1 part A (s1_ranks.smk): the datasets and models of the rank definitions and permutations ---

# S1 switched off: its section is not checked (and names no datasets or models)
S1R = (
    study_settings(config)
    if enabled("s1")
    else {**config["studies"]["s1"]["ranks"], "datasets": [], "models": []}
)
S1R_DATASET_SPECS = {key: config["datasets"][key] for key in S1R["datasets"]}
# the permutation experiment re-scores every model under permuted entity IDs: models given as ranks files have no
# scores (the rank-types table, from tables/metrics.tsv, keeps them)
S1R_SCORED = (
    with_scores(
        "S1's permutations",
        S1R["models"],
        "re-ranking under permuted entity IDs needs the model's scores",
    )
    if enabled("s1")
    else []
)


def s1_ranks_dataset_files():
    """The local files of every dataset that S1 part A reads."""
    return [
        path
        for key in S1R["datasets"]
        for _, path in lp_source_files(key, config["datasets"][key], config["data_dir"])
    ]


# --- S1 part C (s1_testsize.smk): the EA pairs and the files of the test-size sweep ---


def ea_dataset_files(wildcards):
    """The local files an EA pair reads (DBP15k/SRPRS under data_dir): inputs of its jobs."""
    spec = config["ea_datasets"][wildcards.ea_dataset]
    return [
        path
        for _, path in ea_source_files(wildcards.ea_dataset, spec, config["data_dir"])
    ]


def ea_dataset_spec(wildcards):
    """The config entry of an EA pair."""
    return config["ea_datasets"][wildcards.ea_dataset]


def testsize_settings():
    """studies.s1.testsize, with its EA pairs checked against ea_datasets."""
    settings = config["studies"]["s1"]["testsize"]
    if not config["studies"]["s1"].get("enabled", True):
        # S1 is switched off: its EA pairs need not be defined
        return {**settings, "ea_datasets": []}
    unknown = [k for k in settings["ea_datasets"] if k not in config["ea_datasets"]]
    if unknown:
        raise ValueError(
            f"studies.s1.testsize.ea_datasets names {unknown}, which ea_datasets does not define "
            f"(defined: {sorted(config['ea_datasets'])}); add them to ea_datasets or remove them"
        )
    return settings


def testsize_metrics_files(wildcards):
    """Per-model sweep metrics of one EA pair: every #train and split seed."""
    settings = testsize_settings()
    return expand(
        R("s1/testsize/{ea_dataset}/{num_train}/{seed}/metrics.tsv"),
        ea_dataset=[wildcards.ea_dataset],
        num_train=settings["num_train"],
        seed=settings["seeds"],
    )


def testsize_ranks_files():
    """Every sweep's ranks: each swept EA pair, #train and split seed."""
    settings = testsize_settings()
    return expand(
        R("s1/testsize/{ea_dataset}/{num_train}/{seed}/ranks.parquet"),
        ea_dataset=settings["ea_datasets"],
        num_train=settings["num_train"],
        seed=settings["seeds"],
    )


def testsize_setup():
    """What the sweeps run with, for the S1 claims' basis (kgeval.studies.s1.claims.SweepSetup)."""
    settings = testsize_settings()
    return {
        "datasets": {k: config["ea_datasets"][k] for k in settings["ea_datasets"]},
        "model": config["ea_models"].get("gcn_align", {}),
        "seeds": len(settings["seeds"]),
    }


def testsize_outputs(name):
    """results/s1/testsize/{ea_dataset}/<name> for every swept EA pair."""
    return expand(
        R(f"s1/testsize/{{ea_dataset}}/{name}"),
        ea_dataset=testsize_settings()["ea_datasets"],
    )


# --- S2 (s2.smk): the studied datasets and metric families ---

S2 = config["studies"]["s2"]
S2_FAMILIES = [family_slug(f["base"]) for f in S2["families"]]
# every configured dataset unless studies.s2.datasets names some
S2_DATASETS = (
    full_datasets(config) if S2["datasets"] is None else list(S2["datasets"])
)
if enabled("s2") and len(S2_DATASETS) < 3:
    skip(
        "s2",
        f"it correlates metrics with dataset size, which needs at least 3 datasets; this config has "
        f"{len(S2_DATASETS)} (studies.s2.datasets, default: every dataset under datasets)",
    )


# --- S2 released results (s2_released.smk) ---

S2R = config["studies"]["s2"]["released_results"]
#: the release's dataset names -> config dataset keys
S2R_DATASETS = dict(S2R["datasets"])
S2R_KEYS = sorted(set(S2R_DATASETS.values()))
check_released_datasets("s2", S2R_KEYS, "studies.s2.released_results.datasets")

S2R_FILES = released_paths(S2R["folder"], ["collated.tsv"])
check_released_files("s2", "studies.s2.released_results.folder", S2R_FILES)


def s2r_release_files(wildcards):
    """The S2 release file (collated.tsv) under data_dir, or nothing when it is downloaded."""
    return S2R_FILES


def s2r_dataset_files(wildcards):
    """The local files of the datasets the S2 release maps to."""
    return [
        path
        for key in S2R_KEYS
        if key in config["datasets"]
        for _, path in lp_source_files(key, config["datasets"][key], config["data_dir"])
    ]


def s2r_dataset_specs(wildcards):
    """The config entries of the datasets the S2 release maps to."""
    return {
        key: config["datasets"][key] for key in S2R_KEYS if key in config["datasets"]
    }


def s2r_family_base(wildcards):
    """The base metric of the family whose file-name slug is {family} (hits_at_10 -> hits@10)."""
    bases = {
        f["base"].replace("@", "_at_"): f["base"]
        for f in config["studies"]["s2"]["families"]
    }
    return bases[wildcards.family]


# --- S3 (s3.smk): settings, checks and input functions ---

S3 = config["studies"]["s3"]
S3_DATASETS = list(S3["datasets"])
S3_SEEDS = [str(seed) for seed in S3["seeds"]]
S3_RATIOS = [str(ratio) for ratio in S3["train_ratios"]]


def s3_check():
    """Check the S3 section against the rest of the config; raise a clear error naming the key."""
    for key in S3_DATASETS:
        if key not in config["ea_datasets"] and key not in S3["sylloge"]:
            raise ValueError(
                f"studies.s3.datasets.{key}: no such pair; define it under ea_datasets (dbp15k, srprs, "
                f"two_view) or studies.s3.sylloge (OpenEA, MED-BBK), or remove it"
            )
        if key in config["ea_datasets"] and key in S3["sylloge"]:
            raise ValueError(
                f"studies.s3.datasets.{key}: defined in both ea_datasets and studies.s3.sylloge; rename one"
            )
    strength_pair = S3["strength"]["pair"]
    if (
        S3["strength"]["enabled"]
        and strength_pair not in config["ea_datasets"]
        and strength_pair not in S3["sylloge"]
    ):
        raise ValueError(
            f"studies.s3.strength.pair = {strength_pair}: no such pair; define it under ea_datasets or "
            f"studies.s3.sylloge, or turn the strength check off (studies.s3.strength.enabled: false)"
        )
    for model in S3["claim_settings_only"]:
        if model not in S3["models"]:
            raise ValueError(
                f"studies.s3.claim_settings_only names {model}, which is not in studies.s3.models "
                f"{S3['models']}; add it there or remove it from claim_settings_only"
            )
    for context in ("ideal", "industrial"):
        setting = S3[context]
        if setting["bias"] not in S3["biases"] or not any(
            abs(float(setting["train_ratio"]) - float(r)) < 1e-12
            for r in S3["train_ratios"]
        ):
            raise ValueError(
                f"studies.s3.{context} = {setting} is not in the grid biases={S3['biases']} x "
                f"train_ratios={S3['train_ratios']}; add it there"
            )


if enabled("s3"):
    s3_check()


def s3_source_spec(wildcards):
    """The pair's source: its ea_datasets entry, or its studies.s3.sylloge entry with source sylloge."""
    key = wildcards.s3_dataset
    if key in config["ea_datasets"]:
        return config["ea_datasets"][key]
    return {"source": "sylloge", **S3["sylloge"][key]}


def s3_all_source_specs():
    """Every S3 pair's source (as s3_source_spec), by key."""
    return {
        key: (
            config["ea_datasets"][key]
            if key in config["ea_datasets"]
            else {"source": "sylloge", **S3["sylloge"][key]}
        )
        for key in S3_DATASETS
    }


def s3_all_source_files(wildcards):
    """The local files of every S3 pair defined under ea_datasets."""
    return [
        path
        for key in S3_DATASETS
        if key in config["ea_datasets"]
        for _, path in ea_source_files(
            key, config["ea_datasets"][key], config["data_dir"]
        )
    ]


def s3_settings(wildcards):
    """The split settings of a pair (studies.s3.datasets.<key>)."""
    return S3["datasets"][wildcards.s3_dataset]


def s3_model_spec(wildcards):
    """A method's settings: GCN-Align = ea_models.gcn_align with studies.s3.gcn_align merged in."""
    if wildcards.s3_model == "gcn_align":
        return {**config["ea_models"].get("gcn_align", {}), **S3["gcn_align"]}
    if wildcards.s3_model == "transe_merge":
        return S3["transe_merge"]
    if wildcards.s3_model in ("bootea", "rsn4ea"):
        return S3[wildcards.s3_model]
    if wildcards.s3_model in ("rdgcn", "multike"):
        return {**S3[wildcards.s3_model], "name_vectors": S3["name_vectors"]}
    return {}


def s3_method_settings(wildcards):
    """The settings a method runs: those the claims read where studies.s3.claim_settings_only lists it, else None."""
    if wildcards.s3_model not in S3["claim_settings_only"]:
        return None
    return [
        list(s)
        for s in claim_settings(S3["ideal"], S3["industrial"], S3["train_ratios"])
    ]


def s3_setting_files(name):
    """results/s3/{s3_dataset}/runs/{s3_model}/<bias>/<ratio>/{seed}/<name> of every setting (wildcards kept)."""
    return expand(
        R("s3/{{s3_dataset}}/runs/{{s3_model}}/{s3_bias}/{s3_ratio}/{{seed}}/{name}"),
        s3_bias=S3["biases"],
        s3_ratio=S3_RATIOS,
        name=[name],
    )


def s3_run_files(name):
    """results/s3/{dataset}/runs/{model}/{s3_bias}/{s3_ratio}/{seed}/<name> of every run."""
    return expand(
        R("s3/{s3_dataset}/runs/{s3_model}/{s3_bias}/{s3_ratio}/{seed}/{name}"),
        s3_dataset=S3_DATASETS,
        s3_model=S3["models"],
        s3_bias=S3["biases"],
        s3_ratio=S3_RATIOS,
        seed=S3_SEEDS,
        name=[name],
    )


def s3_source_files(wildcards):
    """The local files of an S3 pair defined under ea_datasets (sylloge pairs are downloaded)."""
    key = wildcards.s3_dataset
    if key not in config["ea_datasets"]:
        return []
    return [
        path
        for _, path in ea_source_files(
            key, config["ea_datasets"][key], config["data_dir"]
        )
    ]


# the strength check (studies.s3.strength): one job per method on the checked pair, then the table
S3_STRENGTH = S3["strength"]


def s3_strength_source_spec(wildcards):
    """The checked pair's source (as s3_source_spec)."""
    return s3_source_spec(SimpleNamespace(s3_dataset=S3_STRENGTH["pair"]))


def s3_strength_source_files(wildcards):
    """The checked pair's local files (as s3_source_files)."""
    return s3_source_files(SimpleNamespace(s3_dataset=S3_STRENGTH["pair"]))


# --- S4 (s4.smk): settings, checks and input functions (the S4 released results below read S4 too) ---

S4 = config["studies"]["s4"]
S4_DATASETS = (
    full_datasets(config) if S4["datasets"] is None else list(S4["datasets"])
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
        [
            m
            for m in S4_SYSTEMS
            if m not in S4_POOL and m in models_of_source(config, ["ranks"])
        ],
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


def s4_pool_systems(wildcards):
    """The pooled systems of a label set's job (s4_pool of its dataset and seed)."""
    return s4_pool(wildcards.dataset, wildcards.seed)


def s4_label_set_systems(wildcards):
    """The systems of a label set's job (s4_systems of its dataset and seed)."""
    return s4_systems(wildcards.dataset, wildcards.seed)


def s4_discriminative_seed(wildcards):
    """The label set's stream of sign vectors for the discriminative power (the job combines it with level, family
    and metric)."""
    return stream_seed(
        config["uncertainty"]["seed"],
        "s4",
        "discriminative",
        wildcards.dataset,
        wildcards.seed,
    )


def s4_dataset_key(wildcards):
    """The dataset key of a label set's job (the figures' titles name it)."""
    return wildcards.dataset


def s4_pooled_labels(wildcards):
    """What a label set's pooled labels are, as its figures name them: the released FB-Test-S-C labels or labels
    simulated from the dataset's own triples."""
    if wildcards.dataset in S4["released"]:
        return "released pooled labels"
    return "simulated pooled labels"


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


# --- S4 released results (s4_released.smk) ---

S4R = config["studies"]["s4"]["released_results"]
#: the dataset named in the released figures' titles
S4R_TITLE = "FB15k-237 (released)"
check_released_datasets("s4", [S4R["dataset"]], "studies.s4.released_results.dataset")

S4R_RESULT_PATHS = released_paths(S4R["folder"], S4R_RESULT_FILES)
S4R_LABEL_PATHS = released_paths(S4R["labels"], S4R_LABEL_FILES)
check_released_files("s4", "studies.s4.released_results.folder", S4R_RESULT_PATHS)
check_released_files("s4", "studies.s4.released_results.labels", S4R_LABEL_PATHS)


def s4r_result_files(wildcards):
    """The S4 released result files under data_dir, or nothing when they are downloaded."""
    return S4R_RESULT_PATHS


def s4r_label_files(wildcards):
    """The S4 release's label files under data_dir, or nothing when they are downloaded."""
    return S4R_LABEL_PATHS


def s4r_dataset_files(wildcards):
    """The local files of FB15k-237 for the S4 release."""
    key = S4R["dataset"]
    if key not in config["datasets"]:
        return []
    return [
        path
        for _, path in lp_source_files(key, config["datasets"][key], config["data_dir"])
    ]


def s4r_dataset_spec(wildcards):
    """The config entry of FB15k-237 for the S4 release."""
    return config["datasets"][S4R["dataset"]]


# --- S5 (s5.smk): the studied models, datasets and runs ---

# the config model keys whose PyKEEN class is one of studies.s5.models, and the studied datasets; calibration fits
# the model's scores, so models given as ranks files are left out (a checkpoint is studied when its entry names its
# class under model)
S5_MODELS = [
    key
    for key, spec in config["models"].items()
    if spec["source"] != "ranks"
    and spec["model"].lower()
    in {name.lower() for name in config["studies"]["s5"]["models"]}
]
if enabled("s5"):
    leave_out(
        "S5",
        models_of_source(config, ["ranks"]),
        "calibration is fitted on the model's scores, which a ranks file lacks",
    )
S5_DATASETS = (
    full_datasets(config)
    if config["studies"]["s5"]["datasets"] is None
    else list(config["studies"]["s5"]["datasets"])
)
# one folder per studied (dataset, model, seed)
S5_RUNS = run_paths(R("s5/{dataset}/{model}/{seed}"), runs(S5_DATASETS, S5_MODELS))


# --- S6 (s6.smk): the studied datasets and models, one evaluation job per (dataset, seed) ---

S6 = config["studies"]["s6"]


def s6_config_error(message):
    """Stop the run on a studies.s6 key that names no configured dataset or model (through config_checked)."""
    raise ConfigError(message)


# the studied models: every configured one (or studies.s6.models) that scores candidates; ranks-only models are left
# out, saying so, since a sample needs the model's score of each sampled candidate
S6_MODELS = (
    with_scores(
        "S6",
        list(config["models"]) if S6["models"] is None else list(S6["models"]),
        "sampled evaluation scores each sampled candidate, which a ranks file lacks",
    )
    if enabled("s6")
    else []
)
S6_DATASETS = full_datasets(config) if S6["datasets"] is None else list(S6["datasets"])
if enabled("s6"):
    _s6_unknown = sorted(set(S6_DATASETS) - set(config["datasets"])) + sorted(set(S6_MODELS) - set(config["models"]))
    if _s6_unknown:
        config_checked(
            s6_config_error,
            f"studies.s6 names {', '.join(_s6_unknown)}, which config datasets/models lack; "
            "name configured keys or set them to null",
        )
# one folder per studied (dataset, seed) that has a run of a studied model
S6_GROUPS = sorted({(d, str(s)) for d, m, s in runs(S6_DATASETS, S6_MODELS)})
if enabled("s6") and not S6_GROUPS:
    skip("s6", "no studied dataset has a studied model that scores candidates (studies.s6.datasets and models)")


def s6_model_files(wildcards):
    """The model files of the studied models of one (dataset, seed)."""
    return {
        model: R(f"models/{wildcards.dataset}/{model}/{wildcards.seed}/model.pt")
        for d, model, s in runs([wildcards.dataset], S6_MODELS)
        if str(s) == wildcards.seed
    }


def s6_group_files(name):
    """results/s6/{dataset}/{seed}/<name> of every studied (dataset, seed)."""
    return [R(f"s6/{dataset}/{seed}/{name}") for dataset, seed in S6_GROUPS]
