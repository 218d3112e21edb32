"""S5 (paper 004): calibration against ranks.

- :mod:`.negatives`: the LCWA, GB, TC and LC negative strategies;
- :mod:`.calibration`: isotonic regression and Platt scaling, weighted Brier score, R², balanced accuracy;
- :mod:`.assessment`: the per-model assessment, timing, Tables 1-2 and Figs. 1-3.
"""
