# Training: one PyKEEN model per (dataset, model, seed).


rule train_model:
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
