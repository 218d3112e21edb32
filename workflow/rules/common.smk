# Config validation and the helpers that turn the config into file lists.
import os
import sys

# The kgeval library is imported from src/ whether or not it is pip-installed, here and in every job (e.g. in a
# --use-conda environment, which only holds the third-party packages).
SRC = os.path.join(workflow.basedir, "src")
sys.path.insert(0, SRC)

from kgeval.config import model_spec_for, prepend_pythonpath, validate_config

prepend_pythonpath(SRC)

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
    "s2": ["s2.smk"],
    "s3": ["s3.smk"],
    "s4": ["s4.smk"],
    "s5": ["s5.smk"],
}
STUDY_TARGETS = {
    "s1": ["study_s1_ranks", "study_s1_testsize"],
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


def study_targets(rules):
    """Inputs of the target rules of every enabled study (rule all collects them)."""
    defined = {rule.name for rule in workflow.rules}
    targets = []
    for study, names in STUDY_TARGETS.items():
        if not config["studies"].get(study, {}).get("enabled", True):
            continue
        for name in names:
            if name in defined:
                targets.extend(getattr(rules, name).input)
    return targets


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


s3_check()


def s3_source_spec(wildcards):
    """The pair's source: its ea_datasets entry, or its studies.s3.sylloge entry with source sylloge."""
    key = wildcards.s3_dataset
    if key in config["ea_datasets"]:
        return config["ea_datasets"][key]
    return {"source": "sylloge", **S3["sylloge"][key]}


def s3_settings(wildcards):
    """The split settings of a pair (studies.s3.datasets.<key>)."""
    return S3["datasets"][wildcards.s3_dataset]


def s3_model_spec(wildcards):
    """A method's settings: GCN-Align = ea_models.gcn_align with studies.s3.gcn_align merged in."""
    if wildcards.s3_model == "gcn_align":
        return {**config["ea_models"].get("gcn_align", {}), **S3["gcn_align"]}
    if wildcards.s3_model == "transe_merge":
        return S3["transe_merge"]
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


# --- helpers of workflow/rules/s4.smk ---

from kgeval.studies.s4.jobs import resolve_level

S4 = config["studies"]["s4"]
S4_DATASETS = (
    list(config["datasets"]) if S4["datasets"] is None else list(S4["datasets"])
)
S4_SYSTEMS = list(config["models"]) if S4["systems"] is None else list(S4["systems"])
S4_POOL = S4_SYSTEMS if S4["pool"]["systems"] is None else list(S4["pool"]["systems"])
S4_MAX_DEPTH = S4["pool"]["max_depth"]


# fail early, naming the key, when the S4 section refers to unknown datasets, models or levels
for _key, _names, _known in (
    ("datasets", S4_DATASETS, config["datasets"]),
    ("systems", S4_SYSTEMS, config["models"]),
    ("pool.systems", S4_POOL, S4_SYSTEMS),
    ("released", list(S4["released"]), config["datasets"]),
):
    _missing = [name for name in _names if name not in _known]
    if _missing:
        raise ValueError(
            f"config key studies.s4.{_key}: {_missing} not among {sorted(_known)}; add them there (models: see "
            "the notes under studies.s4.paper_systems) or drop them from studies.s4"
        )
for _name, _spec in S4["paper_systems"].items():
    if _spec["model"] not in S4_SYSTEMS:
        raise ValueError(
            f"config key studies.s4.paper_systems.{_name}.model: {_spec['model']!r} is not one of studies.s4.systems"
        )
if len(S4_SYSTEMS) < 3:
    raise ValueError(
        "config key studies.s4.systems: Kendall's tau between system rankings needs at least 3 systems"
    )
if S4_MAX_DEPTH > config["ranking"]["top_k"] and set(S4_DATASETS) - set(S4["released"]):
    raise ValueError(
        f"config key studies.s4.pool.max_depth ({S4_MAX_DEPTH}) exceeds ranking.top_k "
        f"({config['ranking']['top_k']}): the simulated pool reads the top-k lists"
    )
for _name in (
    [S4["analysis_level"]] + S4["stability"]["levels"] + S4["discriminative"]["levels"]
):
    resolve_level(_name, S4_MAX_DEPTH)


def s4_label_inputs(wildcards):
    """Simulated labels read the test ranks (the universe) and the pool's top-k lists; released ones nothing."""
    if wildcards.dataset in S4["released"]:
        return {}
    return {
        "test_ranks": R(
            f"ranks/{wildcards.dataset}/{S4_POOL[0]}/{wildcards.seed}/test.parquet"
        ),
        "topk": expand(
            R("ranks/{dataset}/{model}/{seed}/topk.parquet"),
            dataset=wildcards.dataset,
            model=S4_POOL,
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
        pattern, dataset=wildcards.dataset, model=S4_SYSTEMS, seed=wildcards.seed
    )
