# Entity alignment (S1 part B; reused by S3): EA pair summaries, GCN-Align training per (#train, split seed), and
# the ranks of each model's whole test pool in the ranks-table format of link prediction.


wildcard_constraints:
    ea_dataset="|".join(config["ea_datasets"]) or "no_ea_dataset",
    num_train=r"\d+",


rule summarize_ea_dataset:
    output:
        summary="results/ea/{ea_dataset}/summary.tsv",
    log:
        "results/logs/summarize_ea_dataset/{ea_dataset}.log",
    conda:
        CONDA_ENV
    threads: 1
    resources:
        mem_mb=2000,
        runtime=20,
    params:
        spec=ea_dataset_spec,
        data_dir=config["data_dir"],
    script:
        "../../scripts/ea_summarize.py"


rule train_ea_model:
    input:
        summary="results/ea/{ea_dataset}/summary.tsv",
    output:
        representations="results/ea/{ea_dataset}/gcn_align/{num_train}/{seed}/representations.pt",
        split="results/ea/{ea_dataset}/gcn_align/{num_train}/{seed}/split.tsv",
        losses="results/ea/{ea_dataset}/gcn_align/{num_train}/{seed}/losses.tsv",
        config="results/ea/{ea_dataset}/gcn_align/{num_train}/{seed}/config.json",
        timing="results/ea/{ea_dataset}/gcn_align/{num_train}/{seed}/timing.json",
    log:
        "results/logs/train_ea_model/{ea_dataset}/{num_train}/{seed}.log",
    benchmark:
        "results/benchmarks/train_ea_model/{ea_dataset}/{num_train}/{seed}.tsv"
    conda:
        CONDA_ENV
    threads: 1
    resources:
        mem_mb=8000,
        runtime=720,
        gpu=0,
    params:
        spec=ea_dataset_spec,
        data_dir=config["data_dir"],
        model_spec=config["ea_models"].get("gcn_align", {}),
    script:
        "../../scripts/ea_train.py"


rule compute_ea_ranks:
    input:
        representations="results/ea/{ea_dataset}/gcn_align/{num_train}/{seed}/representations.pt",
        split="results/ea/{ea_dataset}/gcn_align/{num_train}/{seed}/split.tsv",
    output:
        ranks="results/ea/{ea_dataset}/gcn_align/{num_train}/{seed}/ranks.parquet",
    log:
        "results/logs/compute_ea_ranks/{ea_dataset}/{num_train}/{seed}.log",
    conda:
        CONDA_ENV
    threads: 1
    resources:
        mem_mb=4000,
        runtime=120,
        gpu=0,
    params:
        spec=ea_dataset_spec,
        data_dir=config["data_dir"],
        memory_budget_mb=config["ranking"]["memory_budget_mb"],
    script:
        "../../scripts/ea_ranks.py"
