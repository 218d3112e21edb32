"""Benchmark: fitting calibration functions from streamed scores vs the filtered rank evaluation, on FB15k-237.

Paper 004 replaces rank evaluation by the posteriors of a calibration function fitted on the validation split with
*all* its LCWA negatives (FB15k-237: 17,535 validation triples, 14,541 entities, ~4.6 * 10^8 negatives counted per
positive and side). This script trains one TransE model briefly on the CPU and then measures, each phase in a
fresh process; after loading, the process's peak resident set size is reset (``/proc/self/clear_refs``), so each
phase's peak (``VmHWM``) is that of the phase on top of the loaded data and model:

``baseline``
    import the libraries, load the dataset and the model (what every phase pays);
``rank_evaluation``
    ``t_LP``: :func:`kgeval.lp.ranking.rank_lp` on the test split, filtered by train + valid + test;
``calibration``
    the validation positives and all their LCWA negatives (filtered by train + valid) streamed into
    :class:`kgeval.studies.s5.calibration.CalibrationData`, split by S5's phase timer into ``t_score`` (scoring) and
    ``t_stats`` (the statistics); ``t_fit_all``: isotonic regression and the Platt functions of every procedure of
    the default config, each timed, and the selection (:func:`kgeval.studies.s5.fitting.fit_candidates`);
    ``t_posteriors``: scores and posteriors of the test positives.

The readings of ``t_A`` and their ``%Delta t`` are those of the pipeline (:func:`kgeval.studies.s5.timing.timing_summary`):
``t_a`` = ``t_stats`` + fit of the selected function + ``t_posteriors`` (Sec. 6.3); ``t_a_end_to_end`` = ``t_score`` +
``t_a``; ``t_a_all_fits`` with every fit; ``pct_delta_t*`` = ``100 (t_a* - t_lp) / t_lp`` (negative: faster).

Both phases use the same device (CPU), the same torch threads and the same ``--memory-budget-mb``. For scale it also
prints what holding every validation negative at once would need (float64 score + float64 weight + label byte, the
input of a single scikit-learn fit).

Run: ``python benchmarks/calibration.py [--threads 1] [--epochs 1] [--memory-budget-mb 256]``; prints the figures
and writes them to ``benchmarks/results/calibration.tsv``. Needs ../shared/data/fb15k237 (or ``$KGEVAL_SHARED_DATA``).
"""

from __future__ import annotations

import argparse
import gc
import multiprocessing as mp
import os
import platform
import resource
import tempfile
import time
from pathlib import Path

import pandas as pd
from host import RESULTS, stamp  # noqa: E402  (benchmarks/host.py: the host columns)

REPO = Path(__file__).resolve().parents[1]
DATASET_SPEC = {"source": "pykeen", "name": "FB15k237", "local": "fb15k237"}
MODEL_SPEC = {
    "model": "TransE",
    "model_kwargs": {"embedding_dim": 50, "scoring_fct_norm": 2},
    "optimizer_kwargs": {"lr": 0.01},
    "training_kwargs": {"num_epochs": 1, "batch_size": 4096},
}


def shared_data() -> Path:
    return Path(os.environ.get("KGEVAL_SHARED_DATA", REPO.parent / "shared" / "data"))


def _status_mb(field: str) -> float:
    """A memory figure of this process from /proc/self/status (``VmRSS``, ``VmHWM``), in MiB."""
    with open("/proc/self/status", encoding="ascii") as handle:
        for line in handle:
            if line.startswith(field + ":"):
                return int(line.split()[1]) / 1024
    raise RuntimeError(f"{field} not in /proc/self/status")


def _reset_peak() -> bool:
    """Reset the peak RSS (``VmHWM``) to the current RSS (Linux >= 4.0: write 5 to /proc/self/clear_refs)."""
    try:
        with open("/proc/self/clear_refs", "w", encoding="ascii") as handle:
            handle.write("5")
        return True
    except OSError:
        return False


def _peak_rss_mb() -> float:
    """Peak resident set size of this process so far (since the last reset), in MiB."""
    try:
        return _status_mb("VmHWM")
    except (OSError, RuntimeError):
        return resource.getrusage(resource.RUSAGE_SELF).ru_maxrss / 1024


def _load(model_path: str, threads: int):
    import torch

    from kgeval.lp.datasets import load_dataset
    from kgeval.lp.ranks import load_model

    torch.set_num_threads(threads)
    data = load_dataset("fb15k237", DATASET_SPEC, str(shared_data()))
    return data, load_model(model_path, "cpu")


def s5_default_settings(budget: float):
    """S5's settings as the pipeline's default config holds them (schema defaults), on the CPU."""
    from kgeval.config import schema_defaults
    from kgeval.studies.s5.settings import S5Settings

    section = schema_defaults("studies.s5")
    section["platt"] = {**schema_defaults("studies.s5.platt"), **(section.get("platt") or {})}
    return S5Settings.from_config(section, memory_budget_mb=budget, device="cpu")


def _phase(name: str, model_path: str, threads: int, budget: float, queue) -> None:
    """Run one phase in this (fresh) process and put ``(name, figures)`` on the queue."""
    import numpy as np
    import torch

    from kgeval.lp.filtering import as_triples_array
    from kgeval.lp.ranking import rank_lp
    from kgeval.lp.scoring import make_scorer
    from kgeval.studies.s5.assessment import score_triples, stream_calibration_data
    from kgeval.studies.s5.fitting import fit_candidates
    from kgeval.studies.s5.negatives import NegativeSet, queries_per_batch
    from kgeval.studies.s5.timing import PhaseTimer

    start = time.perf_counter()
    data, model = _load(model_path, threads)
    figures: dict[str, float] = {"load_seconds": time.perf_counter() - start}
    train, valid, test = (as_triples_array(f.mapped_triples) for f in (data.training, data.validation, data.testing))
    scorer = make_scorer(model, device="cpu")
    figures["scorer"] = scorer.name
    figures["peak_rss_load_mb"] = _peak_rss_mb()
    # from here on, the peak counts only what the phase itself allocates on top of the loaded data and model
    gc.collect()
    figures["peak_reset"] = _reset_peak()
    figures["rss_before_mb"] = _status_mb("VmRSS")
    cpu_start = time.process_time()
    if name == "rank_evaluation":
        start = time.perf_counter()
        with torch.no_grad():
            ranks = rank_lp(
                scorer,
                torch.as_tensor(test),
                filter_triples=[train, valid, test],
                memory_budget_mb=budget,
                device="cpu",
            )
        figures["t_lp"] = time.perf_counter() - start
        realistic = np.concatenate([ranks[side].rank_realistic for side in ranks])
        figures["mr"] = float(realistic.mean())
        figures["num_scored_test"] = float(sum(ranks[side].num_candidates.sum() for side in ranks))
    elif name == "calibration":
        # the pipeline's own steps and timers (kgeval.studies.s5.assessment.run_s5): the phase timer splits the one
        # streamed validation pass into t_score and t_stats, fit_candidates times every fit and the selection
        settings = s5_default_settings(budget)
        timer, cpu = PhaseTimer(), time.process_time()
        timer.start()
        negatives = NegativeSet(valid, [train, valid], data.num_entities, data.num_relations, union=True)
        positive_scores = score_triples(model, valid)
        timer.lap("t_score")
        stats = stream_calibration_data(
            scorer, negatives, positive_scores, queries_per_batch(data.num_entities, budget), timer=timer
        )
        figures.update(timer.times)
        figures["cpu_score_and_stats"] = time.process_time() - cpu
        cpu = time.process_time()
        calibrators, best, table, fit_times = fit_candidates(stats, settings)
        figures.update(fit_times)
        figures["cpu_fit_all"] = time.process_time() - cpu
        start, cpu = time.perf_counter(), time.process_time()
        posteriors = best.predict(score_triples(model, test))
        figures["t_posteriors"], figures["cpu_posteriors"] = time.perf_counter() - start, time.process_time() - cpu
        figures["num_valid_negatives_union"] = stats.num_negatives
        figures["num_valid_negatives_per_positive"] = NegativeSet(
            valid, [train, valid], data.num_entities, data.num_relations, union=False
        ).count("lcwa")
        figures["num_tail_queries"] = len(negatives.queries["tail"])
        figures["num_head_queries"] = len(negatives.queries["head"])
        figures["isotonic_points"] = len(stats.isotonic_points()[0])
        figures["platt_bin_width"] = float(stats.histogram.width)
        figures["best"] = best.name
        isotonic = table[table["method"] == "isotonic"].iloc[0]
        platt = table[table["method"] == "platt"]
        figures["valid_r2_w_isotonic"] = float(isotonic["r2_w"])
        figures["valid_r2_w_platt_best"] = float(platt["r2_w"].max())
        figures["mean_test_posterior"] = float(posteriors.mean())
    figures["cpu_seconds"] = time.process_time() - cpu_start
    figures["peak_rss_mb"] = _peak_rss_mb()
    queue.put((name, figures))


def _run(name: str, model_path: str, threads: int, budget: float) -> dict:
    context = mp.get_context("spawn")
    queue = context.Queue()
    process = context.Process(target=_phase, args=(name, model_path, threads, budget, queue))
    process.start()
    result = queue.get()
    process.join()
    if process.exitcode:
        raise RuntimeError(f"phase {name} failed with exit code {process.exitcode}")
    return result[1]


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    parser.add_argument("--threads", type=int, default=1, help="torch threads in every phase")
    parser.add_argument("--epochs", type=int, default=1, help="training epochs of the TransE model")
    parser.add_argument("--memory-budget-mb", type=float, default=256.0, help="score batch budget of both phases")
    args = parser.parse_args()
    if not (shared_data() / "fb15k237" / "valid.txt").is_file():
        raise SystemExit(f"FB15k-237 not found under {shared_data()}; set KGEVAL_SHARED_DATA")

    import torch

    from kgeval.lp.datasets import load_dataset
    from kgeval.io import write_tsv
    from kgeval.lp.training import train_model
    from kgeval.studies.s5.timing import timing_summary

    torch.set_num_threads(args.threads)
    data = load_dataset("fb15k237", DATASET_SPEC, str(shared_data()))
    spec = {**MODEL_SPEC, "training_kwargs": {**MODEL_SPEC["training_kwargs"], "num_epochs": args.epochs}}
    start = time.perf_counter()
    trained = train_model(data, spec, seed=0, device="cpu")
    train_seconds = time.perf_counter() - start
    with tempfile.TemporaryDirectory() as folder:
        model_path = os.path.join(folder, "model.pt")
        torch.save(trained.model, model_path)
        del trained
        phases = {
            name: _run(name, model_path, args.threads, args.memory_budget_mb)
            for name in ("baseline", "rank_evaluation", "calibration")
        }
    base_rss = phases["baseline"]["rss_before_mb"]
    rank, calib = phases["rank_evaluation"], phases["calibration"]
    # the three readings of t_A and their %Delta t, as the pipeline computes them (kgeval.studies.s5.timing)
    readings = timing_summary({**calib, "t_lp": rank["t_lp"]})
    n_all = calib["num_valid_negatives_per_positive"]
    rows = {
        "machine": platform.processor() or platform.machine(),
        "torch_threads": args.threads,
        "memory_budget_mb": args.memory_budget_mb,
        "train_epochs": args.epochs,
        "train_seconds": train_seconds,
        "scorer": rank["scorer"],
        "num_entities": data.num_entities,
        "num_valid": data.validation.num_triples,
        "num_test": data.testing.num_triples,
        "mr_test_realistic": rank["mr"],
        **readings,
        "num_valid_negatives_union": calib["num_valid_negatives_union"],
        "num_valid_negatives_per_positive": n_all,
        "num_tail_queries": calib["num_tail_queries"],
        "num_head_queries": calib["num_head_queries"],
        "isotonic_reduced_points": calib["isotonic_points"],
        "platt_histogram_bin_width": calib["platt_bin_width"],
        "selected_calibrator": calib["best"],
        "valid_r2_w_isotonic": calib["valid_r2_w_isotonic"],
        "valid_r2_w_platt_best": calib["valid_r2_w_platt_best"],
        "mean_test_posterior": calib["mean_test_posterior"],
        "cpu_seconds_rank_evaluation": rank["cpu_seconds"],
        "cpu_seconds_calibration": calib["cpu_seconds"],
        "cpu_seconds_score_and_stats": calib["cpu_score_and_stats"],
        "cpu_seconds_fit_all": calib["cpu_fit_all"],
        "cpu_seconds_posteriors": calib["cpu_posteriors"],
        "peak_rss_load_mb": phases["baseline"]["peak_rss_load_mb"],
        "rss_after_load_mb": base_rss,
        "peak_rss_rank_evaluation_mb": rank["peak_rss_mb"],
        "peak_rss_calibration_mb": calib["peak_rss_mb"],
        "extra_peak_rank_evaluation_mb": rank["peak_rss_mb"] - rank["rss_before_mb"],
        "extra_peak_calibration_mb": calib["peak_rss_mb"] - calib["rss_before_mb"],
        "peak_reset_supported": calib["peak_reset"],
        "all_at_once_input_mb": n_all * 17 / 2**20,
    }
    for key, value in rows.items():
        print(f"{key:34s} {value:.6g}" if isinstance(value, float) else f"{key:34s} {value}")
    table = pd.DataFrame({"figure": list(rows), "value": [str(v) for v in rows.values()]})
    write_tsv(stamp(table), RESULTS / "calibration.tsv", sort_by=[])


if __name__ == "__main__":
    main()
