"""Speed plumbing: how kgeval runs fast, never what it computes.

Nothing here changes a number in a table. :mod:`~kgeval.runtime.forkserver` starts local jobs as forks of one
pre-imported process, :mod:`~kgeval.runtime.usage` records a job's wall and CPU seconds and peak memory,
:mod:`~kgeval.runtime.workers` is the thread pool that the engine's kernels run on, and
:mod:`~kgeval.runtime.first_use` checks a compiled replacement against the code it replaces on first use. Only the
speed wing (:mod:`kgeval.runtime`, :mod:`kgeval.engine`, :mod:`kgeval.lp.engine`) imports it, and the scripts, which
hand themselves to the fork server.
"""
