# kgeval: rank-based evaluation studies for link prediction and entity alignment.
# Run everything:   snakemake --cores all
# One figure/table: snakemake --cores 2 <rule name>  (snakemake --list-target-rules lists them)


from snakemake.utils import min_version

min_version("9.0")


# The default config applies only when no --configfile is given: a given config replaces it instead of being merged
# into it (Snakemake would otherwise add the default datasets and models to e.g. config/test.yaml).
if not workflow.overwrite_configfiles:

    configfile: "config/config.yaml"


report: "workflow/report/workflow.rst"


include: "workflow/rules/common.smk"
include: "workflow/rules/data.smk"
include: "workflow/rules/train.smk"
include: "workflow/rules/ranks.smk"
include: "workflow/rules/metrics.smk"


for _smk in study_rule_files():

    include: _smk


wildcard_constraints:
    dataset="|".join(config["datasets"]),
    model="|".join(config["models"]),
    seed=r"\d+",
    split="valid|test",


rule all:
    default_target: True
    input:
        core_targets(),
        study_targets(rules),
