# Config validation and the helpers that turn the config into file lists.
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
    """The core tables of rule all: the expectations (no model), and the collated metrics when models are trained."""
    targets = [R("tables/expectations.tsv")]
    if config["train_models"]:
        targets.append(R("tables/metrics.tsv"))
    return targets


def outputs_of(rule, **values):
    """Every output of a rule with wildcards, expanded over the given wildcard values (for wildcard-free targets)."""
    return expand([str(path) for path in rule.output], **values)


def seeds():
    """The configured seeds, as strings for expand()."""
    return [str(s) for s in config["seeds"]]


def model_files(name, datasets=None, models=None):
    """results/models/{dataset}/{model}/{seed}/<name> for every configured combination."""
    return expand(
        R(f"models/{{dataset}}/{{model}}/{{seed}}/{name}"),
        dataset=datasets or list(config["datasets"]),
        model=models or list(config["models"]),
        seed=seeds(),
    )


def ranks_files(split, datasets=None, models=None):
    """results/ranks/{dataset}/{model}/{seed}/<split>.parquet for every configured combination."""
    return expand(
        R("ranks/{dataset}/{model}/{seed}/{split}.parquet"),
        dataset=datasets or list(config["datasets"]),
        model=models or list(config["models"]),
        seed=seeds(),
        split=[split],
    )


def metrics_files():
    """Every per-model metrics table."""
    return expand(
        R("metrics/{dataset}/{model}/{seed}/{split}.tsv"),
        dataset=list(config["datasets"]),
        model=list(config["models"]),
        seed=seeds(),
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


def s1_ranks_dataset_files():
    """The local files of every dataset that S1 part A reads."""
    return [
        path
        for key in S1R["datasets"]
        for _, path in lp_source_files(key, config["datasets"][key], config["data_dir"])
    ]


def ea_dataset_files(wildcards):
    """The local files an EA pair reads (DBP15k/SRPRS under data_dir): inputs of its jobs."""
    spec = config["ea_datasets"][wildcards.ea_dataset]
    return [
        path
        for _, path in ea_source_files(wildcards.ea_dataset, spec, config["data_dir"])
    ]


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


def model_spec(wildcards):
    """The settings of a model for a dataset (per-dataset overrides merged in)."""
    return model_spec_for(config, wildcards.model, wildcards.dataset)


# --- helpers of workflow/rules/s1_testsize.smk ---


def ea_dataset_spec(wildcards):
    """The config entry of an EA pair."""
    return config["ea_datasets"][wildcards.ea_dataset]


# --- helpers of workflow/rules/s1_testsize.smk ---


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


def testsize_outputs(name):
    """results/s1/testsize/{ea_dataset}/<name> for every swept EA pair."""
    return expand(
        R(f"s1/testsize/{{ea_dataset}}/{name}"),
        ea_dataset=testsize_settings()["ea_datasets"],
    )


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


# --- helpers of workflow/rules/s3.smk ---

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
    if wildcards.s3_model == "bootea":
        return S3["bootea"]
    if wildcards.s3_model in ("rdgcn", "multike"):
        return {**S3[wildcards.s3_model], "name_vectors": S3["name_vectors"]}
    return {}


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


# --- helpers of workflow/rules/s2_released.smk and s4_released.smk ---

S2R = config["studies"]["s2"]["released_results"]
#: the release's dataset names -> config dataset keys
S2R_DATASETS = dict(S2R["datasets"])
S2R_KEYS = sorted(set(S2R_DATASETS.values()))
S4R = config["studies"]["s4"]["released_results"]

for _study, _keys, _where in (
    ("s2", S2R_KEYS, "studies.s2.released_results.datasets"),
    ("s4", [S4R["dataset"]], "studies.s4.released_results.dataset"),
):
    _missing = [k for k in _keys if k not in config["datasets"]]
    if released_enabled(_study) and _missing:
        raise ValueError(
            f"config key {_where}: {_missing} not among the configured datasets {sorted(config['datasets'])}; add "
            "them under datasets (e.g. fb15k237: {source: pykeen, name: FB15k237, local: fb15k237})"
        )


from kgeval.studies.s4.release_files import LABEL_FILES as S4R_LABEL_FILES
from kgeval.studies.s4.release_files import RESULT_FILES as S4R_RESULT_FILES


def released_paths(folder, names):
    """The release files read from ``folder`` (under data_dir, or absolute): rule inputs, so editing one reruns what
    reads it; nothing to declare when they are downloaded (folder null, or data_dir null and folder relative).
    """
    if folder is None or (config["data_dir"] is None and not os.path.isabs(folder)):
        return []
    base = folder if os.path.isabs(folder) else os.path.join(config["data_dir"], folder)
    return [os.path.join(base, name) for name in names]


S2R_FILES = released_paths(S2R["folder"], ["collated.tsv"])
S4R_RESULT_PATHS = released_paths(S4R["folder"], S4R_RESULT_FILES)
S4R_LABEL_PATHS = released_paths(S4R["labels"], S4R_LABEL_FILES)
for _study, _key, _paths in (
    ("s2", "studies.s2.released_results.folder", S2R_FILES),
    ("s4", "studies.s4.released_results.folder", S4R_RESULT_PATHS),
    ("s4", "studies.s4.released_results.labels", S4R_LABEL_PATHS),
):
    if released_enabled(_study):
        check_input_files([(_key, path) for path in _paths], config["data_dir"])


def s2r_release_files(wildcards):
    """The S2 release file (collated.tsv) under data_dir, or nothing when it is downloaded."""
    return S2R_FILES


def s4r_result_files(wildcards):
    """The S4 released result files under data_dir, or nothing when they are downloaded."""
    return S4R_RESULT_PATHS


def s4r_label_files(wildcards):
    """The S4 release's label files under data_dir, or nothing when they are downloaded."""
    return S4R_LABEL_PATHS


def s2r_dataset_files(wildcards):
    """The local files of the datasets the S2 release maps to."""
    return [
        path
        for key in S2R_KEYS
        if key in config["datasets"]
        for _, path in lp_source_files(key, config["datasets"][key], config["data_dir"])
    ]


def s4r_dataset_files(wildcards):
    """The local files of FB15k-237 for the S4 release."""
    key = S4R["dataset"]
    if key not in config["datasets"]:
        return []
    return [
        path
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


def s4r_dataset_spec(wildcards):
    """The config entry of FB15k-237 for the S4 release."""
    return config["datasets"][S4R["dataset"]]
