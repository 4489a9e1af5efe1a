"""The PartiQL tab's pure JavaScript modules (tokenizer, the scan rule, completion, the
expression builder's request as PartiQL, ExecuteStatement as code, the history),
unit-tested with node (tests/console/partiql_units.mjs) when it is installed."""

from __future__ import annotations

import os
import shutil
import subprocess
from pathlib import Path

import pytest

from dynastore.console.app import STATIC_ROOT

NODE = shutil.which("node")


@pytest.mark.skipif(NODE is None and not os.environ.get("CI"), reason="node is not installed")
def test_partiql_modules() -> None:
    assert NODE is not None
    script = Path(__file__).with_name("partiql_units.mjs")
    result = subprocess.run([NODE, str(script), str(STATIC_ROOT)], capture_output=True, text=True, timeout=60, check=False)
    assert result.returncode == 0, result.stderr
    assert result.stdout.strip() == "ok 12"
