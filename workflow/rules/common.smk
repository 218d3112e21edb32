# Config validation and the helpers that turn the config into file lists.
import os
import sys

# The kgeval library is imported from src/ whether or not it is pip-installed, here and in every job (e.g. in a
# --use-conda environment, which only holds the third-party packages).
SRC = os.path.join(workflow.basedir, "src")
sys.path.insert(0, SRC)
os.environ["PYTHONPATH"] = os.pathsep.join(filter(None, [SRC, os.getenv("PYTHONPATH")]))

from kgeval.config import model_spec_for, validate_config

validate_config(config)

#: the conda environment of every rule (conda: CONDA_ENV)
CONDA_ENV = "../../envs/kgeval.yaml"

STUDY_RULE_FILES = {
    "s1": ["s1_ranks.smk", "ea.smk", "s1_testsize.smk"],
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
        f"results/models/{{dataset}}/{{model}}/{{seed}}/{name}",
        dataset=datasets or list(config["datasets"]),
        model=models or list(config["models"]),
        seed=seeds(),
    )


def ranks_files(split, datasets=None, models=None):
    """results/ranks/{dataset}/{model}/{seed}/<split>.parquet for every configured combination."""
    return expand(
        "results/ranks/{dataset}/{model}/{seed}/{split}.parquet",
        dataset=datasets or list(config["datasets"]),
        model=models or list(config["models"]),
        seed=seeds(),
        split=[split],
    )


def metrics_files():
    """Every per-model metrics table."""
    return expand(
        "results/metrics/{dataset}/{model}/{seed}/{split}.tsv",
        dataset=list(config["datasets"]),
        model=list(config["models"]),
        seed=seeds(),
        split=config["ranking"]["splits"],
    )


def first_model_ranks(wildcards):
    """Ranks of the first configured model and seed: candidate counts depend only on the dataset."""
    model = next(iter(config["models"]))
    return f"results/ranks/{wildcards.dataset}/{model}/{config['seeds'][0]}/{wildcards.split}.parquet"


def dataset_spec(wildcards):
    """The config entry of a dataset."""
    return config["datasets"][wildcards.dataset]


def model_spec(wildcards):
    """The settings of a model for a dataset (per-dataset overrides merged in)."""
    return model_spec_for(config, wildcards.model, wildcards.dataset)
