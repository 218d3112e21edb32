"""S5 (paper 004): calibration against ranks.

- :mod:`.settings`: the study settings (the ``studies.s5`` config section);
- :mod:`.negatives`: the LCWA, GB, TC and LC negative strategies;
- :mod:`.statistics`: streamed sufficient statistics of scores (histogram, isotonic reduction);
- :mod:`.calibration`: isotonic regression and Platt scaling fitted on them;
- :mod:`.measures`: weighted Brier score, R², balanced accuracy, and the selection of the best function;
- :mod:`.fitting`: the candidate functions fitted and selected, the held-out validation share;
- :mod:`.assessment`: the per-model assessment and timing (:func:`~.assessment.run_s5`); :mod:`.timing`: its parts;
  :mod:`.triple_sums`: its sums per test triple, and every measure resampled over test triples;
- :mod:`.collation`: the per-model tables stacked; :mod:`.tables`: Tables 1-2; :mod:`.figures`: Figs. 1-3, timing;
- :mod:`.claims`: the paper's claims checked (:mod:`.claims_platt`: Platt scaling; :mod:`.claims_levels`: Fig. 1).
"""
