# S1 part C, training: EA pair summaries, GCN-Align training per (#train, split seed), and
# the ranks of each model's whole test pool in the ranks-table format of link prediction.


wildcard_constraints:
    ea_dataset="|".join(config["ea_datasets"]) or "no_ea_dataset",
    num_train=r"\d+",


rule summarize_ea_dataset:
    input:
        data=ea_dataset_files,
    output:
        summary=R("ea/{ea_dataset}/summary.tsv"),
    log:
        R("logs/summarize_ea_dataset/{ea_dataset}.log"),
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
        "../../scripts/s1/summarize_ea_dataset.py"


rule train_ea_model:
    input:
        data=ea_dataset_files,
        summary=R("ea/{ea_dataset}/summary.tsv"),
    output:
        representations=R(
            "ea/{ea_dataset}/gcn_align/{num_train}/{seed}/representations.pt"
        ),
        split=R("ea/{ea_dataset}/gcn_align/{num_train}/{seed}/split.tsv"),
        losses=R("ea/{ea_dataset}/gcn_align/{num_train}/{seed}/losses.tsv"),
        config=R("ea/{ea_dataset}/gcn_align/{num_train}/{seed}/config.json"),
        timing=R("ea/{ea_dataset}/gcn_align/{num_train}/{seed}/timing.json"),
        # written by the job (kgeval.runtime.usage), as train_model's
        usage=R("benchmarks/train_ea_model/{ea_dataset}/{num_train}/{seed}.tsv"),
    log:
        R("logs/train_ea_model/{ea_dataset}/{num_train}/{seed}.log"),
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
        "../../scripts/s1/train_ea_model.py"


rule compute_ea_ranks:
    input:
        data=ea_dataset_files,
        representations=R(
            "ea/{ea_dataset}/gcn_align/{num_train}/{seed}/representations.pt"
        ),
        split=R("ea/{ea_dataset}/gcn_align/{num_train}/{seed}/split.tsv"),
    output:
        ranks=R("ea/{ea_dataset}/gcn_align/{num_train}/{seed}/ranks.parquet"),
    log:
        R("logs/compute_ea_ranks/{ea_dataset}/{num_train}/{seed}.log"),
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
        "../../scripts/s1/compute_ea_ranks.py"


# S1 part C (paper 000, Sec. 4, Fig. 1): the EA test-size sweep. One GCN-Align model per (#train, split seed),
# each evaluated on nested test subsets of increasing size; figures of MR, Hits@1, AMR (and AMRI, MRR, ZMRR)
# against the number of test alignments, and a table of their slopes.


rule compute_testsize_ranks:
    input:
        data=ea_dataset_files,
        representations=R(
            "ea/{ea_dataset}/gcn_align/{num_train}/{seed}/representations.pt"
        ),
        split=R("ea/{ea_dataset}/gcn_align/{num_train}/{seed}/split.tsv"),
    output:
        ranks=R("s1/testsize/{ea_dataset}/{num_train}/{seed}/ranks.parquet"),
        metrics=R("s1/testsize/{ea_dataset}/{num_train}/{seed}/metrics.tsv"),
    log:
        R("logs/compute_testsize_ranks/{ea_dataset}/{num_train}/{seed}.log"),
    conda:
        CONDA_ENV
    threads: 1
    resources:
        mem_mb=4000,
        runtime=240,
        gpu=0,
    params:
        spec=ea_dataset_spec,
        data_dir=config["data_dir"],
        test_sizes=config["studies"]["s1"]["testsize"]["test_sizes"],
        memory_budget_mb=config["ranking"]["memory_budget_mb"],
    script:
        "../../scripts/s1/compute_testsize_ranks.py"


rule collate_testsize_metrics:
    input:
        metrics=testsize_metrics_files,
    output:
        metrics=R("s1/testsize/{ea_dataset}/metrics.tsv"),
    log:
        R("logs/collate_testsize_metrics/{ea_dataset}.log"),
    conda:
        CONDA_ENV
    threads: 1
    resources:
        mem_mb=2000,
        runtime=10,
    script:
        "../../scripts/s1/collate_testsize_metrics.py"


rule table_s1_testsize_slopes_each:
    input:
        metrics=R("s1/testsize/{ea_dataset}/metrics.tsv"),
    output:
        slopes=report(
            R("s1/testsize/{ea_dataset}/slopes.tsv"),
            caption="../report/s1_testsize_slopes.rst",
            category="S1 ranks",
            subcategory="test-size sweep",
            labels={"EA pair": "{ea_dataset}", "table": "slopes"},
        ),
    log:
        R("logs/table_s1_testsize_slopes/{ea_dataset}.log"),
    conda:
        CONDA_ENV
    threads: 1
    resources:
        mem_mb=1000,
        runtime=10,
    params:
        rank_type=config["studies"]["s1"]["testsize"]["rank_type"],
    script:
        "../../scripts/s1/table_testsize_slopes.py"


rule plot_s1_testsize_each:
    input:
        metrics=R("s1/testsize/{ea_dataset}/metrics.tsv"),
    output:
        pdf=report(
            R("s1/testsize/{ea_dataset}/fig1_testsize.pdf"),
            caption="../report/s1_testsize_fig1.rst",
            category="S1 ranks",
            subcategory="test-size sweep",
            labels={"EA pair": "{ea_dataset}", "figure": "Fig. 1 (PDF)"},
        ),
        png=report(
            R("s1/testsize/{ea_dataset}/fig1_testsize.png"),
            caption="../report/s1_testsize_fig1.rst",
            category="S1 ranks",
            subcategory="test-size sweep",
            labels={"EA pair": "{ea_dataset}", "figure": "Fig. 1"},
        ),
    log:
        R("logs/plot_s1_testsize/{ea_dataset}.log"),
    conda:
        CONDA_ENV
    threads: 1
    resources:
        mem_mb=2000,
        runtime=10,
    params:
        metrics=["mr", "hits@1", "amr"],
        rank_type=config["studies"]["s1"]["testsize"]["rank_type"],
    script:
        "../../scripts/s1/plot_testsize.py"


rule plot_s1_testsize_adjusted_each:
    input:
        metrics=R("s1/testsize/{ea_dataset}/metrics.tsv"),
    output:
        pdf=report(
            R("s1/testsize/{ea_dataset}/fig1_testsize_adjusted.pdf"),
            caption="../report/s1_testsize_adjusted.rst",
            category="S1 ranks",
            subcategory="test-size sweep",
            labels={"EA pair": "{ea_dataset}", "figure": "AMRI, MRR, ZMRR (PDF)"},
        ),
        png=report(
            R("s1/testsize/{ea_dataset}/fig1_testsize_adjusted.png"),
            caption="../report/s1_testsize_adjusted.rst",
            category="S1 ranks",
            subcategory="test-size sweep",
            labels={"EA pair": "{ea_dataset}", "figure": "AMRI, MRR, ZMRR"},
        ),
    log:
        R("logs/plot_s1_testsize_adjusted/{ea_dataset}.log"),
    conda:
        CONDA_ENV
    threads: 1
    resources:
        mem_mb=2000,
        runtime=10,
    params:
        metrics=["amri", "mrr", "zmrr"],
        rank_type=config["studies"]["s1"]["testsize"]["rank_type"],
    script:
        "../../scripts/s1/plot_testsize.py"


rule study_s1_testsize:
    input:
        unless_skipped("s1"),
        testsize_outputs("fig1_testsize.pdf"),
        testsize_outputs("fig1_testsize.png"),
        testsize_outputs("fig1_testsize_adjusted.pdf"),
        testsize_outputs("fig1_testsize_adjusted.png"),
        testsize_outputs("slopes.tsv"),


# Wildcard-free targets: `snakemake <name>` builds that figure or table for every swept EA pair.
for _name in (
    "table_s1_testsize_slopes",
    "plot_s1_testsize",
    "plot_s1_testsize_adjusted",
):

    rule:
        name:
            _name
        input:
            unless_skipped("s1"),
            outputs_of(
                getattr(rules, f"{_name}_each"),
                ea_dataset=testsize_settings()["ea_datasets"],
            ),
        localrule: True


# S1's claims (paper 000): MR and Hits@1 drift with the test size, AMR does not, AMR orders training sizes; a
# random scorer's AMR is 1; the optimistic rank favours ties
rule table_s1_claims:
    input:
        reference=R("s1/ranks/tables/reference_scorers.tsv"),
        rank_types=R("s1/ranks/tables/rank_types.tsv"),
        ranks=testsize_ranks_files(),
    output:
        table=report(
            R("claims/s1.tsv"),
            caption="../report/claims_s1.rst",
            category="Claims",
            labels={"table": "S1 claims"},
        ),
    log:
        R("logs/table_s1_claims/table_s1_claims.log"),
    conda:
        CONDA_ENV
    threads: 1
    resources:
        mem_mb=2000,
        runtime=15,
    params:
        uncertainty=config["uncertainty"],
        setup=testsize_setup(),
    script:
        "../../scripts/s1/table_claims.py"


# all of S1: both parts and the claims table
rule study_s1:
    input:
        unless_skipped("s1"),
        rules.study_s1_ranks.input,
        rules.study_s1_testsize.input,
        R("claims/s1.tsv"),
