"""mypy --strict holds on the pure packages and the storage layer (and what
they import), as docs/architecture.md asks."""

from __future__ import annotations

import subprocess
import sys
from pathlib import Path

import pytest

ROOT = Path(__file__).resolve().parent.parent
STRICT_PACKAGES = ["dynastore/types", "dynastore/expressions", "dynastore/engine", "dynastore/storage"]


@pytest.mark.slow
def test_pure_packages_pass_mypy_strict() -> None:
    pytest.importorskip("mypy")
    completed = subprocess.run(
        [sys.executable, "-m", "mypy", "--strict", "--no-error-summary", *STRICT_PACKAGES],
        capture_output=True, text=True, cwd=ROOT, timeout=600,
    )
    assert completed.returncode == 0, completed.stdout + completed.stderr
