"""Benchmark: kgeval's training step against ``pykeen.pipeline.pipeline`` with the same dataset, model, epochs, seed.

Both run side by side, alternating, so that machine noise hits both alike; each run in a fresh interpreter
(``spawn``), as a user's ``pipeline()`` call and a training job of the workflow start: a run in a process that
trained before inherits a heap that a previous run grew and left free (our run keeps freed memory while it trains,
and what the model allocated at its top keeps it from being trimmed), so a later ``pipeline()`` in the same process
would page-fault much less than a fresh one (FB15k-237 DistMult read 4.9 s fresh and 2.4 s after one of our runs).
For each pair the script checks that the final models are identical (every parameter bit-equal) and that PyKEEN's
RankBasedEvaluator gives the same metrics for both, and reports the training-time ratio (pipeline's
``train_seconds`` vs ours) and the end-to-end ratio (pipeline() wall time, which also evaluates, vs our training +
our ranking engine on the test split).

The FB15k-237 cases (issue 15: DistMult, ComplEx and RotatE with 200 dimensions, batch 4,096, 32 negatives per
positive, softplus loss) train ``--fb-epochs`` epochs on a fixed prefix of ``--fb-batches`` batches of the training
triples, so that a case takes about a minute; both sides get the same triples factories (the prefix for training, a
prefix of the test split for pipeline()'s evaluation, which is not part of the training time). PyKEEN ends every epoch
with a full ``gc.collect()``, which a whole FB15k-237 epoch (67 batches) amortises better than a prefix does:
``pipeline_gc_s`` reports what one such collection costs in the pipeline's process, for the reader to discount. They
are skipped, with the reason printed, when the data directory has no FB15k-237. The default 4-batch prefix weighs the
first batch's one-time costs (our side faults in the heap that later batches reuse) as a quarter of the "epoch";
``--fb-batches 67`` trains whole epochs of all 272,115 triples, the per-epoch figure of issue 15 (several minutes per
case: ``pipeline()`` took 80 s for DistMult, 210 s for RotatE and 530 s for ComplEx on a 2-core VM).

    python benchmarks/training.py [--epochs 100] [--repeats 2] [--data-dir ../shared/data] [--fb-batches 4]
        [--only small] [--cases kinships/ComplEx]

Writes benchmarks/results/training.tsv (``--out``).
"""

from __future__ import annotations

import argparse
import gc
import logging
import multiprocessing
import os
import time
from concurrent.futures import ProcessPoolExecutor
from dataclasses import dataclass, field, replace
from pathlib import Path
from typing import Any

import pandas as pd
import torch

from kgeval.lp.datasets import LPData, load_dataset
from kgeval.lp.ranking import rank_lp
from kgeval.lp.training import train_model
from host import RESULTS, stamp  # noqa: E402  (benchmarks/host.py: the host columns)

ROOT = Path(__file__).resolve().parents[1]

#: issue 15's goals: median speed-up on the bundled cases, and per FB15k-237 epoch
GOAL_MEDIAN_SMALL = 5.0
GOAL_FB15K237 = 3.0

# The loss is named explicitly: pipeline() without a loss uses the loss resolver's default (margin ranking) while
# a model built without one uses the model's own default (softplus for ComplEx).
CASES = [
    ("nations", "Nations", "DistMult", {"embedding_dim": 64}, "marginranking"),
    ("nations", "Nations", "TransE", {"embedding_dim": 64}, "marginranking"),
    ("nations", "Nations", "ComplEx", {"embedding_dim": 32}, "softplus"),
    ("kinships", "Kinships", "DistMult", {"embedding_dim": 64}, "marginranking"),
    ("kinships", "Kinships", "TransE", {"embedding_dim": 64}, "marginranking"),
    ("kinships", "Kinships", "ComplEx", {"embedding_dim": 32}, "softplus"),
]

#: FB15k-237 models of issue 15 (200 real dimensions for DistMult; ComplEx and RotatE as PyKEEN sizes them)
FB15K237_MODELS = ["DistMult", "ComplEx", "RotatE"]
FB15K237_BATCH = 4096
FB15K237_NEGATIVES = 32


@dataclass
class Case:
    """One benchmark case: a dataset, a model spec in the config's format, and how pipeline() gets the data."""

    key: str
    data: LPData
    spec: dict[str, Any]
    pipeline_data: dict[str, Any] = field(default_factory=dict)
    #: PyKEEN's evaluator scores (batch, entities, dimensions) tensors: GBs for RotatE on FB15k-237 at 256
    evaluation_batch_size: int = 256


def _small_cases(epochs: int) -> list[Case]:
    cases = []
    for key, name, model, model_kwargs, loss in CASES:
        spec = {
            "model": model,
            "model_kwargs": model_kwargs,
            "loss": loss,
            "optimizer_kwargs": {"lr": 0.01},
            "training_kwargs": {"num_epochs": epochs, "batch_size": 256},
        }
        cases.append(Case(key, load_dataset(key, {"source": "pykeen", "name": name}), spec, {"dataset": name}))
    return cases


def _fb15k237_cases(
    data_dir: Path, batches: int, epochs: int, test_subset: int, models: list[str] = FB15K237_MODELS
) -> list[Case]:
    """The FB15k-237 cases on a prefix of the training triples, or none (with the reason printed) without the data."""
    if not (data_dir / "fb15k237" / "train.txt").is_file():
        print(f"skipping the FB15k-237 cases: no {data_dir / 'fb15k237' / 'train.txt'}", flush=True)
        return []
    from pykeen.triples import TriplesFactory

    full = load_dataset("fb15k237", {"source": "pykeen", "name": "FB15k237", "local": "fb15k237"}, str(data_dir))

    def prefix(factory: TriplesFactory, n: int) -> TriplesFactory:
        # the full vocabulary is kept, so that the models have FB15k-237's 14,541 entities and 237 relations
        return TriplesFactory(
            mapped_triples=factory.mapped_triples[:n],
            entity_to_id=factory.entity_to_id,
            relation_to_id=factory.relation_to_id,
        )

    data = replace(
        full,
        training=prefix(full.training, batches * FB15K237_BATCH),
        testing=prefix(full.testing, test_subset),
    )
    pipeline_data = {"training": data.training, "validation": data.validation, "testing": data.testing}
    cases = []
    for model in models:
        spec = {
            "model": model,
            "model_kwargs": {"embedding_dim": 200},
            "loss": "softplus",
            "optimizer_kwargs": {"lr": 0.01},
            "negative_sampler_kwargs": {"num_negs_per_pos": FB15K237_NEGATIVES},
            "training_kwargs": {"num_epochs": epochs, "batch_size": FB15K237_BATCH},
        }
        cases.append(Case("fb15k237", data, spec, pipeline_data, evaluation_batch_size=8))
    return cases


def _evaluate(model, data, batch_size: int = 256) -> dict[str, float]:
    from pykeen.evaluation import RankBasedEvaluator

    evaluator = RankBasedEvaluator()
    result = evaluator.evaluate(
        model,
        data.testing.mapped_triples,
        additional_filter_triples=[data.training.mapped_triples, data.validation.mapped_triples],
        use_tqdm=False,
        batch_size=batch_size,
    )
    return {key: result.get_metric(key) for key in ("both.realistic.mrr", "both.realistic.hits_at_10", "both.realistic.mr")}


def _prepare(threads: int) -> None:
    """A fresh interpreter's set-up: threads, quiet logs, torch.optim's lazy modules imported outside the timing."""
    logging.disable(logging.WARNING)
    torch.set_num_threads(threads)
    torch.optim.Adam([torch.zeros(1, requires_grad=True)])


def _run_pipeline(case: Case, seed: int, threads: int) -> dict[str, Any]:
    """``pipeline()`` (training and its evaluation) in this process: its model, training and wall seconds."""
    from pykeen.pipeline import pipeline

    _prepare(threads)
    spec = case.spec
    start = time.perf_counter()
    result = pipeline(
        **case.pipeline_data,
        model=spec["model"],
        model_kwargs=spec["model_kwargs"],
        loss=spec["loss"],
        optimizer="adam",
        optimizer_kwargs=spec["optimizer_kwargs"],
        negative_sampler_kwargs=spec.get("negative_sampler_kwargs"),
        training_kwargs={**spec["training_kwargs"], "use_tqdm": False},
        evaluation_kwargs={"use_tqdm": False, "batch_size": case.evaluation_batch_size},
        random_seed=seed,
    )
    wall = time.perf_counter() - start
    start = time.perf_counter()
    gc.collect()
    return {"model": result.model, "train_s": result.train_seconds, "wall_s": wall, "gc_s": time.perf_counter() - start}


def _run_ours(case: Case, seed: int, threads: int) -> dict[str, Any]:
    """Our training and ranking of the test split in this process: the model, training and wall seconds."""
    _prepare(threads)
    start = time.perf_counter()
    ours = train_model(case.data, case.spec, seed=seed)
    with torch.no_grad():
        rank_lp(ours.model, case.data.testing.mapped_triples, filter_triples=case.data.all_mapped_triples())
    return {"model": ours.model, "train_s": ours.seconds, "wall_s": time.perf_counter() - start}


def _in_fresh_process(function, case: Case, seed: int, threads: int) -> dict[str, Any]:
    """``function(case, seed, threads)`` in a new interpreter (spawned, so that it shares no heap with this one)."""
    context = multiprocessing.get_context("spawn")
    with ProcessPoolExecutor(max_workers=1, mp_context=context) as pool:
        return pool.submit(function, case, seed, threads).result()


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--epochs", type=int, default=100, help="epochs of the Nations/Kinships cases")
    parser.add_argument("--repeats", type=int, default=2)
    parser.add_argument("--threads", type=int, default=1)
    parser.add_argument(
        "--data-dir", type=Path, default=Path(os.environ.get("KGEVAL_SHARED_DATA", ROOT.parent / "shared" / "data"))
    )
    parser.add_argument("--fb-batches", type=int, default=4, help="FB15k-237: batches of 4,096 training triples")
    parser.add_argument("--fb-epochs", type=int, default=1, help="FB15k-237: epochs on that prefix")
    parser.add_argument("--fb-test", type=int, default=20, help="FB15k-237: test triples evaluated")
    parser.add_argument("--fb-models", nargs="+", default=FB15K237_MODELS, help="FB15k-237: models")
    parser.add_argument("--only", choices=["small", "fb15k237"], help="run only these cases")
    parser.add_argument(
        "--cases", nargs="+", metavar="DATASET/MODEL", help="run only these cases, e.g. kinships/ComplEx"
    )
    parser.add_argument("--out", type=Path, default=RESULTS / "training.tsv")
    args = parser.parse_args()
    logging.disable(logging.WARNING)
    torch.set_num_threads(args.threads)
    cases = []
    if args.only != "fb15k237":
        cases += _small_cases(args.epochs)
    if args.only != "small":
        cases += _fb15k237_cases(args.data_dir, args.fb_batches, args.fb_epochs, args.fb_test, args.fb_models)
    if args.cases:
        wanted = {name.lower() for name in args.cases}
        cases = [case for case in cases if f"{case.key}/{case.spec['model']}".lower() in wanted]
    rows = []
    for case in cases:
        spec, data = case.spec, case.data
        training_kwargs = spec["training_kwargs"]
        for repeat in range(args.repeats):
            reference = _in_fresh_process(_run_pipeline, case, repeat, args.threads)
            ours = _in_fresh_process(_run_ours, case, repeat, args.threads)
            ref_state = reference["model"].state_dict()
            identical = all(torch.equal(value, ref_state[name_]) for name_, value in ours["model"].state_dict().items())
            ref_metrics = _evaluate(reference["model"], data, case.evaluation_batch_size)
            our_metrics = _evaluate(ours["model"], data, case.evaluation_batch_size)
            row = {
                "dataset": case.key,
                "model": spec["model"],
                "epochs": training_kwargs["num_epochs"],
                "training_triples": data.training.num_triples,
                "seed": repeat,
                "pipeline_train_s": reference["train_s"],
                "kgeval_train_s": ours["train_s"],
                "train_speedup": reference["train_s"] / ours["train_s"],
                "pipeline_gc_s": reference["gc_s"],
                "pipeline_wall_s": reference["wall_s"],
                "kgeval_train_rank_wall_s": ours["wall_s"],
                "wall_speedup": reference["wall_s"] / ours["wall_s"],
                "identical_parameters": identical,
                "identical_metrics": ref_metrics == our_metrics,
                "mrr": our_metrics["both.realistic.mrr"],
            }
            rows.append(row)
            print("\t".join(f"{k}={v:.3f}" if isinstance(v, float) else f"{k}={v}" for k, v in row.items()), flush=True)
    if not rows:
        print("no case ran")
        return
    table = pd.DataFrame(rows)
    _report(table)
    args.out.parent.mkdir(parents=True, exist_ok=True)
    stamp(table).to_csv(args.out, sep="\t", index=False)
    print(f"wrote {args.out}")


def _report(table: pd.DataFrame) -> None:
    """Print the median speed-ups next to issue 15's goals."""
    summary = table.groupby(["dataset", "model"], sort=False)[["train_speedup", "wall_speedup"]].median()
    print("\nmedian speed-ups:\n" + summary.to_string())
    small = table[table.dataset != "fb15k237"]
    if len(small):
        median = small.train_speedup.median()
        verdict = "met" if median >= GOAL_MEDIAN_SMALL else "not met"
        print(
            f"\nNations/Kinships: median training speed-up {median:.3f}x over all runs "
            f"(goal >= {GOAL_MEDIAN_SMALL:.0f}x: {verdict}); median of the cases' medians "
            f"{small.groupby(['dataset', 'model']).train_speedup.median().median():.3f}x"
        )
    fb = table[table.dataset == "fb15k237"]
    for model, group in fb.groupby("model", sort=False):
        median = group.train_speedup.median()
        print(
            f"FB15k-237 {model}: {group.pipeline_train_s.median():.1f} s -> {group.kgeval_train_s.median():.1f} s "
            f"per epoch of {group.training_triples.iloc[0]} triples, {median:.2f}x "
            f"(goal >= {GOAL_FB15K237:.0f}x: {'met' if median >= GOAL_FB15K237 else 'not met'})"
        )
    print(
        f"all parameters identical: {table.identical_parameters.all()}; "
        f"all metrics identical: {table.identical_metrics.all()}"
    )


if __name__ == "__main__":
    main()
