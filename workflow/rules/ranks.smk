# Ranks: every rank type for every evaluation triple and side, plus the test queries' top-k candidates; for a model
# given as a ranks file (source: ranks), the same tables read from that file (no top-k lists: it has no scores).


rule compute_ranks:
    wildcard_constraints:
        dataset=dataset_pattern(sampled=False),
        model=model_pattern("train", "checkpoint"),
    input:
        data=dataset_files,
        model=R("models/{dataset}/{model}/{seed}/model.pt"),
    output:
        ranks=expand(
            R("ranks/{{dataset}}/{{model}}/{{seed}}/{split}.parquet"),
            split=config["ranking"]["splits"],
        ),
        topk=R("ranks/{dataset}/{model}/{seed}/topk.parquet"),
        timing=R("ranks/{dataset}/{model}/{seed}/timing.json"),
    log:
        R("logs/compute_ranks/{dataset}/{model}/{seed}.log"),
    conda:
        CONDA_ENV
    threads: 1
    resources:
        mem_mb=8000,
        runtime=120,
        gpu=0,
    params:
        dataset_spec=dataset_spec,
        data_dir=config["data_dir"],
        splits=config["ranking"]["splits"],
        top_k=config["ranking"]["top_k"],
        memory_budget_mb=config["ranking"]["memory_budget_mb"],
    script:
        "../../scripts/lp/compute_ranks.py"


rule import_ranks:
    wildcard_constraints:
        model=model_pattern("ranks"),
    input:
        data=dataset_files,
        ranks_file=model_source_inputs,
    output:
        ranks=expand(
            R("ranks/{{dataset}}/{{model}}/{{seed}}/{split}.parquet"),
            split=config["ranking"]["splits"],
        ),
        source=R("ranks/{dataset}/{model}/{seed}/source.json"),
    log:
        R("logs/import_ranks/{dataset}/{model}/{seed}.log"),
    conda:
        CONDA_ENV
    threads: 1
    resources:
        mem_mb=4000,
        runtime=20,
    params:
        entry=model_entry,
        dataset_spec=dataset_spec,
        data_dir=config["data_dir"],
        splits=config["ranking"]["splits"],
    script:
        "../../scripts/lp/import_ranks.py"
