"""``python -m kgeval.runtime.forkserver SOCKET PARENT_PID [MODULE ...]``: run a server (what
:func:`~kgeval.runtime.forkserver.lifecycle.start_server` starts)."""

import sys

from kgeval.runtime.forkserver.server import main

main(sys.argv[1:])
