"""``python -m kgeval``: the same command line as ``kgeval``."""

import sys

from kgeval.cli import main

sys.exit(main())
