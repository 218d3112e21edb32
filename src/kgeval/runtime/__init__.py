"""Speed plumbing: how kgeval runs fast, never what it computes.

Nothing here changes a number in a table. :mod:`~kgeval.runtime.forkserver` starts local jobs as forks of one
pre-imported process, :mod:`~kgeval.runtime.usage` records a job's wall and CPU seconds and peak memory,
:mod:`~kgeval.runtime.memory` keeps glibc from unmapping large freed blocks inside hot loops, and
:mod:`~kgeval.runtime.workers` is the thread pool that the ranking engine's kernels run on.
"""
