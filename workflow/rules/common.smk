# Config validation, the study registry, and the helpers that turn the config into file lists for the core rule files
# (data, train, ranks, metrics) or for more than one study; each study's own helpers open its first rule file.
import os
import sys

from snakemake.exceptions import WorkflowError

# The kgeval library is imported from src/ whether or not it is pip-installed, here and in every job (e.g. in a
# --use-conda environment, which only holds the third-party packages).
SRC = os.path.join(workflow.basedir, "src")
sys.path.insert(0, SRC)

from kgeval.config import (
    check_input_files,
    model_spec_for,
    prepend_pythonpath,
    resolve_data_dir,
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

prepend_pythonpath(SRC)

# `--config data_dir=null` arrives as the string "null": it means no local folder, as null does in a config file; a
# data_dir folder that does not exist (a clone without ../shared/data) means the same: the loaders download instead
_data_dir_message = resolve_data_dir(config)
if _data_dir_message:
    print(_data_dir_message, file=sys.stderr)
validate_config(config)

#: every output of this config lies under results_dir (one folder per config, so tiers never overwrite each other)
RESULTS = config["results_dir"].rstrip("/")


def R(path):
    """``path`` under this config's results folder (``results_dir``)."""
    return f"{RESULTS}/{path}"


#: the conda environment every job runs in, named by each rule
CONDA_ENV = "../../envs/kgeval.yaml"

STUDY_RULE_FILES = {
    "s1": ["s1_ranks.smk", "s1_testsize.smk"],
    "s2": ["s2.smk", "s2_released.smk"],
    "s3": ["s3.smk"],
    "s4": ["s4.smk", "s4_released.smk"],
    "s5": ["s5.smk"],
}
STUDY_TARGETS = {
    "s1": ["study_s1"],
    "s2": ["study_s2"],
    "s3": ["study_s3"],
    "s4": ["study_s4"],
    "s5": ["study_s5"],
}


def study_rule_files():
    """The study .smk files that exist, each once, in a fixed order."""
    seen = []
    for files in STUDY_RULE_FILES.values():
        for name in files:
            path = os.path.join("workflow", "rules", name)
            if (
                os.path.exists(os.path.join(workflow.basedir, path))
                and path not in seen
            ):
                seen.append(path)
    return seen


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
    """The core tables of rule all: the expectations (no model), and the collated metrics and the paired model
    comparisons (table and one figure per dataset) when models are trained."""
    targets = [R("tables/expectations.tsv")]
    if config["train_models"]:
        targets.append(R("tables/metrics.tsv"))
        targets.append(R("tables/model_comparisons.tsv"))
        targets += expand(
            R("figures/model_comparisons/{dataset}.{ext}"),
            dataset=list(config["datasets"]),
            ext=["pdf", "png"],
        )
    return targets


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


check_input_files(
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
check_source_files(config, deep=workflow.is_main_process)


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
