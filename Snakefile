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
include: "workflow/rules/comparisons.smk"


for _smk in study_rule_files():

    include: _smk


# Local runs only: one process imports torch, PyKEEN, scikit-learn and matplotlib once, and each job's script starts
# as a fork of it instead of a fresh interpreter (kgeval.runtime.forkserver; KGEVAL_FORKSERVER=off turns it off). Cluster jobs
# (and GPU jobs, and jobs of a rule with a benchmark:) start cold, as before.
onstart:
    if workflow.local_exec and not workflow.remote_exec:
        from kgeval.runtime.forkserver import server_log_path, start_server

        start_server(log_path=server_log_path(log))


onsuccess:
    from kgeval.runtime.forkserver import stop_server

    stop_server()


onerror:
    from kgeval.runtime.forkserver import stop_server

    stop_server()


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
