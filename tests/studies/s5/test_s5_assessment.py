"""S5 end to end on a small real model, plus the comparison measures, tables and figures."""

from __future__ import annotations

import numpy as np
import pandas as pd
import pytest
import torch
from scipy.stats import pearsonr
from sklearn.isotonic import IsotonicRegression

from kgeval.studies.s5.calibration import CalibrationData, CalibrationSums, fit_isotonic, fit_platt_gd, weighted_metrics
from kgeval.lp.datasets import load_dataset
from kgeval.lp.filtering import as_triples_array
from kgeval.studies.s5.negatives import STRATEGIES, NegativeSet
from kgeval.studies.s5.assessment import (
    NOT_AVAILABLE,
    TIMING_READINGS,
    S5Settings,
    assess_negatives,
    comparison_overlap,
    plot_s5_figure,
    rank_posterior_correlation,
    relative_ranks,
    run_s5,
    scaled_mr,
    score_triples,
    stream_calibration_data,
    table_comparison,
    table_timing,
    table_overlap_paper,
    table_timing_paper,
    plot_s5_timing,
)
from kgeval.lp.scoring import make_scorer
from kgeval.lp.training import train_model


@pytest.fixture(scope="module")
def nations():
    torch.set_num_threads(1)
    data = load_dataset("nations", {"source": "pykeen", "name": "Nations"}, None)
    spec = {"model": "ComplEx", "model_kwargs": {"embedding_dim": 8}, "training_kwargs": {"num_epochs": 3}}
    model = train_model(data, spec, seed=0).model
    return data, model


def _splits(data):
    return [as_triples_array(f.mapped_triples) for f in (data.training, data.validation, data.testing)]


@pytest.mark.parametrize("union", [True, False])
def test_streamed_scores_are_the_scores_of_the_enumerated_negatives(nations, union):
    data, model = nations
    train, valid, _ = _splits(data)
    negatives = NegativeSet(valid, [train, valid], data.num_entities, data.num_relations, union=union)
    positive_scores = score_triples(model, valid)
    streamed = stream_calibration_data(make_scorer(model), negatives, positive_scores, batch_size=7)
    # brute force: enumerate every negative triple, score it on its own, fit isotonic regression on everything
    triples = negatives.enumerate("lcwa")
    assert streamed.num_negatives == len(triples) == negatives.count("lcwa")
    negative_scores = score_triples(model, triples)
    x = np.concatenate([positive_scores, negative_scores])
    y = np.concatenate([np.ones(len(valid)), np.zeros(len(triples))])
    w = np.concatenate([np.full(len(valid), 1 / len(valid)), np.full(len(triples), 1 / len(triples))])
    full = IsotonicRegression(out_of_bounds="clip", y_min=0, y_max=1).fit(x, y, sample_weight=w)
    grid = np.linspace(x.min() - 1, x.max() + 1, 2001)
    # the matrix scorer and predict_hrt agree to float32 rounding, so compare the fitted functions, not thresholds
    reference = CalibrationData(positive_scores)
    reference.add_negatives(negative_scores)
    np.testing.assert_allclose(fit_isotonic(reference).predict(grid), full.predict(grid), atol=1e-12)
    np.testing.assert_allclose(fit_isotonic(streamed).predict(grid), full.predict(grid), atol=2e-3)


@pytest.mark.parametrize("union", [True, False])
def test_assessment_product_equals_masked_sums(nations, union):
    """The matrix-product sums equal the plain masked sums per (calibrator, strategy), with multiplicities."""
    data, model = nations
    train, valid, test = _splits(data)
    fit_data = CalibrationData(score_triples(model, valid))
    fit_data.add_negatives(score_triples(model, NegativeSet(valid, [train, valid], 14, 55).enumerate("lcwa")))
    calibrators = [fit_isotonic(fit_data), fit_platt_gd(fit_data, init=(1.0, 0.0), steps=50)]
    negatives = NegativeSet(test, [train, valid, test], data.num_entities, data.num_relations, union=union)
    scorer = make_scorer(model)
    found = assess_negatives(scorer, negatives, calibrators, STRATEGIES, batch_size=6)
    expected = {(c.name, s): CalibrationSums() for c in calibrators for s in STRATEGIES}
    masks = {s: negatives.masks(s) for s in STRATEGIES}
    multiplicities = set()
    for batch in negatives.batches(6):
        scores = scorer.score(batch.side, torch.as_tensor(batch.anchors), torch.as_tensor(batch.relations)).numpy()
        multiplicities.update(batch.multiplicity.tolist())
        for c in calibrators:
            p = c.predict(scores)
            for s in STRATEGIES:
                selected = batch.negatives(masks[s])
                for row in range(len(p)):
                    expected[(c.name, s)].add_negatives(p[row][selected[row]], np.full(selected[row].sum(), batch.multiplicity[row]))
    assert (max(multiplicities) > 1) == (not union)
    for key, sums in expected.items():
        for field in ("num_neg", "neg_sq_error", "neg_hits", "neg_posterior"):
            assert getattr(found[key], field) == pytest.approx(getattr(sums, field), rel=1e-12, abs=1e-9), (key, field)


def test_assessment_matches_brute_force(nations):
    data, model = nations
    train, valid, test = _splits(data)
    fit_data = CalibrationData(score_triples(model, valid))
    fit_data.add_negatives(score_triples(model, NegativeSet(valid, [train, valid], 14, 55).enumerate("lcwa")))
    calibrator = fit_isotonic(fit_data)
    negatives = NegativeSet(test, [train, valid, test], data.num_entities, data.num_relations)
    sums = assess_negatives(make_scorer(model), negatives, [calibrator], STRATEGIES, batch_size=5)
    positives = calibrator.predict(score_triples(model, test))
    for strategy in STRATEGIES:
        triples = negatives.enumerate(strategy)
        s = sums[(calibrator.name, strategy)]
        s.add_positives(positives)
        found = s.metrics()
        assert found["num_negatives"] == len(triples)
        if not len(triples):
            assert np.isnan(found["bs_w"]) and np.isnan(found["tnr"])
            continue
        p = np.concatenate([positives, calibrator.predict(score_triples(model, triples))])
        y = np.concatenate([np.ones(len(test)), np.zeros(len(triples))])
        w = np.concatenate([np.full(len(test), 1 / len(test)), np.full(len(triples), 1 / len(triples))])
        expected = weighted_metrics(y, p, w)
        for key in ("bs_w", "r2_w", "tpr", "tnr", "ba"):
            # scores of the matrix scorer and of predict_hrt differ in the last float32 bits
            assert found[key] == pytest.approx(expected[key], abs=5e-3), (strategy, key)


def test_run_s5_on_a_trained_model(nations):
    data, model = nations
    result = run_s5(model, data, S5Settings(memory_budget_mb=1))
    summary = dict(zip(result.summary["metric"], result.summary["value"]))
    train, valid, test = _splits(data)
    assert summary["num_valid_negatives"] == NegativeSet(valid, [train, valid], 14, 55).count("lcwa")
    # the test negatives of every strategy are counted, so that an empty strategy shows in the tables
    test_negatives = NegativeSet(test, [train, valid, test], 14, 55)
    for strategy in STRATEGIES:
        assert summary[f"num_test_negatives_{strategy}"] == test_negatives.count(strategy)
    # three separate timings: t_LP, t_A (Sec. 6.3: selected fit + test posteriors), t_A end to end (+ scoring)
    for key in ("t_lp", "t_a", "t_a_end_to_end", "pct_delta_t", "pct_delta_t_end_to_end"):
        assert key in summary and np.isfinite(summary[key])
    assert summary["t_a"] == pytest.approx(summary["t_fit_selected"] + summary["t_posteriors"])
    assert summary["t_a_end_to_end"] == pytest.approx(summary["t_score"] + summary["t_a"])
    assert summary["t_a_all_fits"] == pytest.approx(summary["t_fit_all"] + summary["t_posteriors"])
    # t_A excludes the non-selected fits: the selected fit is one of the seven, all seven plus selection are more
    assert summary["t_fit_isotonic"] + summary["t_fit_platt"] <= summary["t_fit_all"]
    assert summary["t_fit_selected"] < summary["t_fit_isotonic"] + summary["t_fit_platt"]
    selected = result.calibrators.loc[result.calibrators["selected"], "method"].item()
    if selected == "isotonic":
        assert summary["t_fit_selected"] == summary["t_fit_isotonic"]
    else:
        assert summary["t_fit_selected"] < summary["t_fit_platt"]
    assert summary["t_a"] < summary["t_a_all_fits"]
    assert summary["pct_delta_t"] == pytest.approx(100 * (summary["t_a"] - summary["t_lp"]) / summary["t_lp"])
    assert summary["pct_delta_t_end_to_end"] == pytest.approx(
        100 * (summary["t_a_end_to_end"] - summary["t_lp"]) / summary["t_lp"]
    )
    # one isotonic and six Platt functions by gradient descent (candidates), the exact Platt fit beside them
    c = result.calibrators
    assert len(c) == 8 and c["selected"].sum() == 1
    assert (c["method"] == "platt").sum() == 6 and set(c.loc[c["method"] == "platt", "optimiser"]) == {"gd"}
    assert c.loc[c["method"] == "platt_exact", "selected"].item() in (False, 0)
    assert "t_fit_platt_exact" in summary
    # every Platt function learnt by gradient descent is assessed on test (Fig. 3 shows all six)
    assert result.assessment.loc[result.assessment["method"] == "platt", "calibrator"].nunique() == 6
    a = result.assessment
    assert set(a["strategy"]) == set(STRATEGIES)
    assert set(a["method"]) == {"isotonic", "platt"}
    lcwa = a[(a["strategy"] == "lcwa") & (a["metric"] == "num_negatives")]["value"]
    assert (lcwa == NegativeSet(test, [train, valid, test], 14, 55).count("lcwa")).all()
    # the correlation is that of the posteriors and the relative ranks stored per test triple
    pos = result.positives
    for method in ("isotonic", "platt"):
        # the positives table keeps the posteriors of the best function of each method (by validation R2_w)
        c_m = c[c["method"] == method]
        best_name = c_m.loc[c_m["r2_w"].idxmax(), "calibrator"]
        r = a[(a["calibrator"] == best_name) & (a["metric"] == "pearson_r")]["value"].item()
        x = np.concatenate([pos["relative_rank_head"], pos["relative_rank_tail"]])
        y = np.concatenate([pos[f"posterior_{method}"]] * 2)
        assert r == pytest.approx(pearsonr(x[~np.isnan(x)], y[~np.isnan(x)]).statistic)


def test_relative_ranks_and_correlation():
    # Eq. 19 by hand: rank 1 of 10 negatives -> 1; rank 11 -> 0; rank 6 -> 0.5; no negatives -> undefined
    np.testing.assert_allclose(relative_ranks([1, 11, 6, 1], [11, 11, 11, 1]), [1.0, 0.0, 0.5, np.nan])
    relative = {"head": np.array([1.0, 0.5, np.nan]), "tail": np.array([0.9, 0.1, 0.2])}
    posteriors = np.array([0.8, 0.3, 0.4])
    expected = pearsonr([1.0, 0.5, 0.9, 0.1, 0.2], [0.8, 0.3, 0.8, 0.3, 0.4]).statistic
    assert rank_posterior_correlation(relative, posteriors) == pytest.approx(expected)
    assert np.isnan(rank_posterior_correlation(relative, np.full(3, 0.5)))


def test_scaled_mr_and_overlap():
    mr = pd.Series({"a": 10.0, "b": 20.0, "c": 30.0})
    np.testing.assert_allclose(scaled_mr(mr), [1.0, 0.5, 0.0])
    assert (scaled_mr(pd.Series({"a": 3.0, "b": 3.0})) == 1.0).all()
    # orders a > b > c and a > c > b share (a, b) and (a, c): 2 of 3 comparisons
    first = pd.Series({"a": 1.0, "b": 0.5, "c": 0.0})
    second = pd.Series({"a": 0.9, "b": 0.1, "c": 0.2})
    assert comparison_overlap(first, second) == (2, 3)
    # a tie orders nothing
    assert comparison_overlap(first, pd.Series({"a": 0.9, "b": 0.9, "c": 0.1})) == (2, 3)
    assert comparison_overlap(first, first) == (3, 3)


def _synthetic_tables():
    rows, summary = [], []
    rng = np.random.default_rng(0)
    for dataset in ("d1", "d2"):
        for model, cls in (("transe", "TransE"), ("complex", "ComplEx"), ("boxe", "BoxE")):
            for method, name in (("isotonic", "isotonic"), ("platt", "platt(1,0)")):
                for strategy in STRATEGIES:
                    for metric in ("r2_w", "bs_w", "ba", "tpr", "tnr", "mean_posterior", "pearson_r"):
                        rows.append(
                            (
                                dataset,
                                model,
                                cls,
                                0,
                                name,
                                method,
                                method == "isotonic",
                                strategy,
                                metric,
                                rng.uniform(),
                            )
                        )
            for metric, value in (("mr", rng.uniform(1, 10)), ("t_a", 1.0), ("t_lp", 4.0), ("pct_delta_t", -75.0)):
                summary.append((dataset, model, cls, 0, metric, value))
    assessment = pd.DataFrame(
        rows,
        columns=[
            "dataset",
            "model",
            "model_class",
            "seed",
            "calibrator",
            "method",
            "selected",
            "strategy",
            "metric",
            "value",
        ],
    )
    summary = pd.DataFrame(summary, columns=["dataset", "model", "model_class", "seed", "metric", "value"])
    return assessment, summary


def test_table_comparison_orders_models():
    assessment, summary = _synthetic_tables()
    per_model, overlap = table_comparison(summary, assessment)
    assert len(per_model) == 6 and list(overlap["num_pairs"]) == [3, 3]
    for (dataset, _), group in per_model.groupby(["dataset", "seed"]):
        best = group.loc[group["mr"].idxmin()]
        assert best["mr_scaled"] == 1.0 and best["position_mr"] == 1
        selected = assessment[
            (assessment["dataset"] == dataset)
            & assessment["selected"]
            & (assessment["strategy"] == "lcwa")
            & (assessment["metric"] == "mean_posterior")
        ]
        np.testing.assert_allclose(
            group.set_index("model")["mean_posterior"].sort_index(),
            selected.set_index("model")["value"].sort_index(),
        )
        shared, pairs = comparison_overlap(
            group.set_index("model")["mr_scaled"], group.set_index("model")["mean_posterior"]
        )
        assert overlap[overlap["dataset"] == dataset]["overlap"].item() == pytest.approx(shared / pairs)


def test_table_timing_is_wide():
    _, summary = _synthetic_tables()
    with pytest.raises(KeyError):
        table_timing(summary)  # the synthetic summary lacks most timings: a missing column is an error
    full = summary.copy()
    extra = []
    for (dataset, model, cls, seed), _ in summary.groupby(["dataset", "model", "model_class", "seed"]):
        for metric in (
            "t_a_end_to_end",
            "pct_delta_t_end_to_end",
            "t_a_all_fits",
            "pct_delta_t_all_fits",
            "t_score",
            "t_fit_selected",
            "t_fit_all",
            "t_fit_isotonic",
            "t_fit_platt",
            "t_select",
            "t_posteriors",
            "num_entities",
            "num_valid",
            "num_test",
            "num_valid_negatives",
            "num_test_negatives_lcwa",
        ):
            extra.append((dataset, model, cls, seed, metric, 1.0))
    full = pd.concat([full, pd.DataFrame(extra, columns=summary.columns)], ignore_index=True)
    table = table_timing(full)
    assert len(table) == 6 and (table["pct_delta_t"] == -75.0).all()
    paper = table_timing_paper(table, unavailable=["HAKE", "RotPro"])
    datasets = sorted(table["dataset"].unique())
    assert list(paper.columns[:3]) == ["method", f"{datasets[0]} t_A", f"{datasets[0]} %dt"]
    methods = table["model_class"].nunique()
    assert len(paper) == methods + 3 and (paper[f"{datasets[0]} %dt"][:methods] == -75.0).all()
    # the paper's methods PyKEEN lacks are rows that say so, without values
    missing = paper[paper["method"].isin(["HAKE", "RotPro"])]
    assert list(missing["note"]) == [NOT_AVAILABLE] * 2 and missing[f"{datasets[0]} %dt"].isna().all()
    # the last row counts the test negatives per strategy
    assert paper.iloc[-1]["method"] == "test negatives" and paper.iloc[-1][f"{datasets[0]} t_A"] == "lcwa 1"


def test_table2_in_the_papers_layout():
    assessment, summary = _synthetic_tables()
    counts = []
    for (dataset, model, cls, seed), _ in summary.groupby(["dataset", "model", "model_class", "seed"]):
        for strategy, value in (("lcwa", 1000.0), ("gb", 0.0 if dataset == "d1" else 10.0), ("tc", 500.0)):
            counts.append((dataset, model, cls, seed, f"num_test_negatives_{strategy}", value))
    summary = pd.concat([summary, pd.DataFrame(counts, columns=summary.columns)], ignore_index=True)
    per_model, overlap = table_comparison(summary, assessment)
    assert (per_model[per_model["dataset"] == "d1"]["num_test_negatives_gb"] == 0).all()
    paper = table_overlap_paper(per_model, overlap, unavailable=["HAKE", "RotPro", "TransE"])
    d1 = paper[paper["dataset"] == "d1"]
    # per dataset: the MR' order, the y_bar order, the methods that cannot run (TransE ran, so it is not listed)
    assert list(d1["sorted_by"]) == ["MR'", "y_bar", "not available"]
    assert d1.iloc[2]["sorted"] == f"HA (HAKE), RP (RotPro): {NOT_AVAILABLE}"
    group = per_model[per_model["dataset"] == "d1"].sort_values("mr")
    expected = ", ".join(f"{a} ({v:.2f})" for a, v in zip(group["abbreviation"], group["mr_scaled"]))
    assert d1.iloc[0]["sorted"] == expected and d1.iloc[0]["sorted"].split(" (")[0] == group.iloc[0]["abbreviation"]
    values = [float(part.split("(")[1].rstrip(")")) for part in d1.iloc[1]["sorted"].split(", ")]
    assert values == sorted(values, reverse=True)
    share = overlap[overlap["dataset"] == "d1"]["overlap"].item()
    assert d1.iloc[0]["overlap"] == f"{100 * share:.0f}%" and d1.iloc[1]["overlap"] == ""
    # an empty GB is visible
    assert d1.iloc[0]["negatives"] == "lcwa 1,000; gb 0; tc 500"


def test_timing_figure_and_its_table(tmp_path):
    rows = []
    for dataset in ("d1", "d2"):
        for cls in ("TransE", "BoxE"):
            for seed, t_lp in ((0, 4.0), (1, 8.0)):
                rows.append(
                    {
                        "dataset": dataset,
                        "model": cls.lower(),
                        "model_class": cls,
                        "seed": seed,
                        "t_lp": t_lp,
                        "t_a": 1.0,
                        "pct_delta_t": 100 * (1.0 - t_lp) / t_lp,
                        "t_a_end_to_end": 6.0,
                        "pct_delta_t_end_to_end": 100 * (6.0 - t_lp) / t_lp,
                    }
                )
    path = tmp_path / "table1_timing.tsv"
    pd.DataFrame(rows).to_csv(path, sep="\t", index=False)
    table = plot_s5_timing(path, tmp_path / "fig.tsv", tmp_path / "fig.pdf", tmp_path / "fig.png")
    assert (tmp_path / "fig.pdf").stat().st_size > 1000 and (tmp_path / "fig.png").stat().st_size > 1000
    written = pd.read_csv(tmp_path / "fig.tsv", sep="\t")
    assert len(written) == len(table) == 2 * 2 * len(TIMING_READINGS)
    assert set(written["reading"]) == {label for label, _, _ in TIMING_READINGS}
    sec63 = written[written["reading"] == TIMING_READINGS[0][0]]
    end = written[written["reading"] == TIMING_READINGS[1][0]]
    # means over the two seeds: (-75 + -87.5) / 2 and (+50 + -25) / 2
    np.testing.assert_allclose(sec63["pct_delta_t"], -81.25)
    np.testing.assert_allclose(end["pct_delta_t"], 12.5)
    assert (written["t_lp"] == 6.0).all() and (written["num_seeds"] == 2).all()


@pytest.mark.parametrize("figure", ["calibration", "strategies", "platt"])
def test_figures_are_written(tmp_path, figure):
    assessment, _ = _synthetic_tables()
    path = tmp_path / "assessment.tsv"
    assessment.to_csv(path, sep="\t", index=False)
    plot_s5_figure(figure, path, tmp_path / "f.pdf", tmp_path / "f.png")
    assert (tmp_path / "f.pdf").stat().st_size > 1000 and (tmp_path / "f.png").stat().st_size > 1000
    with pytest.raises(ValueError, match="unknown S5 figure"):
        plot_s5_figure("nope", path, tmp_path / "g.pdf", tmp_path / "g.png")


def test_settings_reject_unknown_names():
    with pytest.raises(ValueError, match="strategies"):
        S5Settings(strategies=("lcwa", "xyz"))
    with pytest.raises(ValueError, match="rank_type"):
        S5Settings(rank_type="median")
