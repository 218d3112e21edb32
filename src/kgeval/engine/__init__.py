"""The shared half of the speed wing: compiled kernels and memory tuning that make kgeval fast, never what it computes.

Each module here gives the bits of a plain numpy or torch expression, faster, and is tested against it or against
brute force. :mod:`~kgeval.engine.l1` computes ``torch.cdist(p=1)`` on the CPU on the worker threads (kernel:
:mod:`~kgeval.engine.l1_kernel`); :mod:`~kgeval.engine.nearest` gives torch's row and column maxima and top-k of a
similarity matrix (kernels: :mod:`~kgeval.engine.nearest_kernel`); :mod:`~kgeval.engine.topk_kernel` holds the
strided-group top-k search that these and the ranking engine's block reduction share;
:mod:`~kgeval.engine.group_sums_kernel` sums bootstrap resamples' counts per distinct rank;
:mod:`~kgeval.engine.calibration_stats_kernel` folds S5's streamed negatives into the calibration statistics;
:mod:`~kgeval.engine.walk_kernel` takes RSN4EA's random-walk steps; :mod:`~kgeval.engine.memory` keeps glibc from
unmapping large freed blocks inside hot loops. The ranking and training engine of link prediction lies in
:mod:`kgeval.lp.engine`, the process plumbing (fork server, worker threads) in :mod:`kgeval.runtime`.
"""
