# Datasets: load each configured link-prediction dataset once and report its size and dropped triples.


rule summarize_dataset:
    output:
        summary="results/datasets/{dataset}/summary.tsv",
    log:
        "results/logs/summarize_dataset/{dataset}.log",
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
        "../../scripts/summarize_dataset.py"
