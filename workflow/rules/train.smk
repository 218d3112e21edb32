# Training: one PyKEEN model per (dataset, model, seed); a model trained elsewhere (source: checkpoint) is checked
# against its dataset and filed in the same place instead, so everything downstream reads it as a trained model.


rule train_model:
    wildcard_constraints:
        model=model_pattern("train"),
    input:
        data=dataset_files,
        summary=R("datasets/{dataset}/summary.tsv"),
    output:
        model=R("models/{dataset}/{model}/{seed}/model.pt"),
        losses=R("models/{dataset}/{model}/{seed}/losses.tsv"),
        config=R("models/{dataset}/{model}/{seed}/config.json"),
        timing=R("models/{dataset}/{model}/{seed}/timing.json"),
        # what the job used, written by the job (kgeval.runtime.usage), not by `benchmark:`: that would measure the job's own
        # process and so keep the job out of the fork server
        usage=R("benchmarks/train_model/{dataset}/{model}/{seed}.tsv"),
    log:
        R("logs/train_model/{dataset}/{model}/{seed}.log"),
    conda:
        CONDA_ENV
    # scheduling only: the longest jobs, that most studies wait on, start first, so that no long job starts last
    # and runs alone on an otherwise idle machine (real-data config: the tail was 15 minutes of one busy core)
    priority: 20
    threads: 1
    resources:
        mem_mb=8000,
        runtime=240,
        gpu=0,
    params:
        dataset_spec=dataset_spec,
        model_spec=model_spec,
        data_dir=config["data_dir"],
    script:
        "../../scripts/lp/train_model.py"


rule import_checkpoint:
    wildcard_constraints:
        model=model_pattern("checkpoint"),
    input:
        data=dataset_files,
        checkpoint=model_source_inputs,
    output:
        model=R("models/{dataset}/{model}/{seed}/model.pt"),
        source=R("models/{dataset}/{model}/{seed}/source.json"),
    log:
        R("logs/import_checkpoint/{dataset}/{model}/{seed}.log"),
    conda:
        CONDA_ENV
    threads: 1
    resources:
        mem_mb=8000,
        runtime=30,
    params:
        entry=model_entry,
        dataset_spec=dataset_spec,
        data_dir=config["data_dir"],
    script:
        "../../scripts/lp/import_checkpoint.py"
