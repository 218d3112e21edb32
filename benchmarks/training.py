"""Benchmark: kgeval's training step against ``pykeen.pipeline.pipeline`` with the same dataset, model, epochs, seed.

Both run side by side in one process, alternating, so that machine noise hits both alike. For each pair the script
checks that the final models are identical (every parameter bit-equal) and that PyKEEN's RankBasedEvaluator gives the
same metrics for both, and reports the training-time ratio (pipeline's ``train_seconds`` vs ours) and the end-to-end
ratio (pipeline() wall time, which also evaluates, vs our training + our ranking engine on the test split).

    python benchmarks/training.py [--epochs 100] [--repeats 2]

Writes benchmarks/out/training.tsv.
"""

from __future__ import annotations

import argparse
import logging
import time
from pathlib import Path

import pandas as pd
import torch

from kgeval.lp.datasets import load_dataset
from kgeval.lp.ranking import rank_lp
from kgeval.lp.training import train_model

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


def _evaluate(model, data) -> dict[str, float]:
    from pykeen.evaluation import RankBasedEvaluator

    evaluator = RankBasedEvaluator()
    result = evaluator.evaluate(
        model,
        data.testing.mapped_triples,
        additional_filter_triples=[data.training.mapped_triples, data.validation.mapped_triples],
        use_tqdm=False,
        batch_size=256,
    )
    return {key: result.get_metric(key) for key in ("both.realistic.mrr", "both.realistic.hits_at_10", "both.realistic.mr")}


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--epochs", type=int, default=100)
    parser.add_argument("--repeats", type=int, default=2)
    parser.add_argument("--threads", type=int, default=1)
    parser.add_argument("--out", default="benchmarks/out/training.tsv")
    args = parser.parse_args()
    logging.disable(logging.WARNING)
    torch.set_num_threads(args.threads)
    from pykeen.pipeline import pipeline

    # import torch.optim's lazy modules once, so that neither side pays the one-off import cost inside its timing
    torch.optim.Adam([torch.zeros(1, requires_grad=True)])
    rows = []
    for key, name, model, model_kwargs, loss in CASES:
        data = load_dataset(key, {"source": "pykeen", "name": name})
        spec = {
            "model": model,
            "model_kwargs": model_kwargs,
            "loss": loss,
            "optimizer_kwargs": {"lr": 0.01},
            "training_kwargs": {"num_epochs": args.epochs, "batch_size": 256},
        }
        for repeat in range(args.repeats):
            start = time.perf_counter()
            reference = pipeline(
                dataset=name,
                model=model,
                model_kwargs=model_kwargs,
                loss=loss,
                optimizer="adam",
                optimizer_kwargs={"lr": 0.01},
                training_kwargs={"num_epochs": args.epochs, "batch_size": 256, "use_tqdm": False},
                evaluation_kwargs={"use_tqdm": False, "batch_size": 256},
                random_seed=repeat,
            )
            pipeline_wall = time.perf_counter() - start

            start = time.perf_counter()
            ours = train_model(data, spec, seed=repeat)
            with torch.no_grad():
                rank_lp(ours.model, data.testing.mapped_triples, filter_triples=data.all_mapped_triples())
            ours_wall = time.perf_counter() - start

            identical = all(
                torch.equal(value, reference.model.state_dict()[name_])
                for name_, value in ours.model.state_dict().items()
            )
            ref_metrics = _evaluate(reference.model, data)
            our_metrics = _evaluate(ours.model, data)
            row = {
                "dataset": key,
                "model": model,
                "epochs": args.epochs,
                "seed": repeat,
                "pipeline_train_s": reference.train_seconds,
                "kgeval_train_s": ours.seconds,
                "train_speedup": reference.train_seconds / ours.seconds,
                "pipeline_wall_s": pipeline_wall,
                "kgeval_train_rank_wall_s": ours_wall,
                "wall_speedup": pipeline_wall / ours_wall,
                "identical_parameters": identical,
                "identical_metrics": ref_metrics == our_metrics,
                "mrr": our_metrics["both.realistic.mrr"],
            }
            rows.append(row)
            print("\t".join(f"{k}={v:.3f}" if isinstance(v, float) else f"{k}={v}" for k, v in row.items()), flush=True)
    table = pd.DataFrame(rows)
    summary = table.groupby(["dataset", "model"])[["train_speedup", "wall_speedup"]].median()
    print("\nmedian speed-ups:\n" + summary.to_string())
    print(f"\noverall median training speed-up: {table.train_speedup.median():.2f}x; "
          f"all parameters identical: {table.identical_parameters.all()}; all metrics identical: {table.identical_metrics.all()}")
    Path(args.out).parent.mkdir(parents=True, exist_ok=True)
    table.to_csv(args.out, sep="\t", index=False)


if __name__ == "__main__":
    main()
