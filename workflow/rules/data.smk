# Datasets: load each configured link-prediction dataset once and report its size and dropped triples.


rule summarize_dataset:
    input:
        data=dataset_files,
    output:
        summary=R("datasets/{dataset}/summary.tsv"),
    log:
        R("logs/summarize_dataset/{dataset}.log"),
    conda:
        CONDA_ENV
    threads: 1
    resources:
        mem_mb=4000,
        runtime=10,
    params:
        spec=dataset_spec,
        data_dir=config["data_dir"],
    script:
        "../../scripts/lp/summarize_dataset.py"


# Expectations under random ranking depend only on the filtered candidate counts, i.e. on the dataset: no model.
rule tabulate_dataset_expectations:
    input:
        data=dataset_files,
    output:
        table=R("datasets/{dataset}/expectations.tsv"),
    log:
        R("logs/tabulate_dataset_expectations/{dataset}.log"),
    conda:
        CONDA_ENV
    threads: 1
    resources:
        mem_mb=4000,
        runtime=20,
    params:
        spec=dataset_spec,
        data_dir=config["data_dir"],
        splits=config["ranking"]["splits"],
    script:
        "../../scripts/lp/tabulate_dataset_expectations.py"
