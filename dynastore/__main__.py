"""``python -m dynastore``: the same command line as ``dynastore``."""

from __future__ import annotations

import sys

from dynastore.cli import main

if __name__ == "__main__":
    sys.exit(main())
