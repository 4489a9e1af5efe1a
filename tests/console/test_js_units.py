"""The console's pure JavaScript modules (lossless JSON and types, expressions, code
generation, CSV/JSON import and export), unit-tested with node when it is installed."""

from __future__ import annotations

import os
import shutil
import subprocess
from pathlib import Path

import pytest

from dynastore.console.app import STATIC_ROOT

NODE = shutil.which("node")


@pytest.mark.skipif(NODE is None and not os.environ.get("CI"), reason="node is not installed")
def test_console_modules() -> None:
    script = Path(__file__).with_name("units.mjs")
    result = subprocess.run(
        [NODE, str(script), str(STATIC_ROOT)], capture_output=True, text=True, timeout=60, check=False
    )
    assert result.returncode == 0, result.stderr
    assert result.stdout.startswith("ok ")
