"""S5's timing in parts (:mod:`kgeval.studies.s5.timing`): the phase timer's laps add up to the wall time, the
readings of t_A are the sums of their parts, the noise floor."""

import time

import pytest

from kgeval.studies.s5.timing import MIN_T_LP, PhaseTimer, noise_floor, pct_delta_t, timing_summary


def test_phase_timer_laps_add_up_to_the_wall_time():
    synced = []
    start = time.perf_counter()
    timer = PhaseTimer(sync=lambda: synced.append(1))
    for _ in range(3):
        time.sleep(0.01)
        timer.lap("t_score")
        time.sleep(0.005)
        timer.lap("t_stats")
    wall = time.perf_counter() - start
    assert timer.times["t_score"] >= 0.03 and timer.times["t_stats"] >= 0.015
    assert timer.times["t_score"] + timer.times["t_stats"] == pytest.approx(wall, rel=0.05)
    assert len(synced) == 6
    before = timer.times["t_stats"]
    time.sleep(0.05)  # time before a restart is charged to no phase
    restart = time.perf_counter()
    timer.start()
    timer.lap("t_stats")
    assert 0 <= timer.times["t_stats"] - before <= time.perf_counter() - restart


def test_timing_summary_readings():
    times = {
        "t_lp": 10.0, "t_score": 4.0, "t_stats": 0.5, "t_fit_all": 2.0, "t_fit_isotonic": 0.2, "t_fit_platt": 1.7,
        "t_fit_selected": 0.2, "t_select": 0.1, "t_posteriors": 0.3, "t_fit_platt_paper": 1.0, "t_validation_pass": 4.5,
    }
    s = timing_summary(times)
    assert s["t_a"] == pytest.approx(0.5 + 0.2 + 0.3)
    assert s["t_a_end_to_end"] == pytest.approx(4.0 + 1.0)
    assert s["t_a_all_fits"] == pytest.approx(0.5 + 2.0 + 0.3)
    assert s["pct_delta_t"] == pytest.approx(-90.0) and s["pct_delta_t_end_to_end"] == pytest.approx(-50.0)
    assert s["t_fit_platt_paper"] == 1.0 and s["t_validation_pass"] == 4.5 and s["timer_resolution"] > 0
    assert pct_delta_t(1.0, 4.0) == -75.0


def test_noise_floor():
    assert noise_floor(1e-9) == MIN_T_LP
    assert noise_floor(0.01) == pytest.approx(1.0)
