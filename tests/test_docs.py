"""The documentation keeps up with the code: a new setting or error that is
not documented fails here."""

from __future__ import annotations

import re
import subprocess
import sys
from pathlib import Path

from dynastore import errors

ROOT = Path(__file__).resolve().parent.parent


def test_every_error_is_documented() -> None:
    page = (ROOT / "docs" / "errors.md").read_text()
    missing = [name for name in errors.CATALOGUE if f"| {name} |" not in page]
    assert missing == []


def test_every_serve_option_is_documented() -> None:
    completed = subprocess.run(
        [sys.executable, "-m", "dynastore", "serve", "--help"],
        capture_output=True, text=True, timeout=30, check=True,
    )
    options = set(re.findall(r"(--[a-z][a-z-]+)", completed.stdout)) - {"--help"}
    assert options, completed.stdout
    readme = (ROOT / "README.md").read_text()
    missing = sorted(option for option in options if f"`{option}" not in readme)
    assert missing == []


def test_readme_opens_with_the_two_setup_commands() -> None:
    readme = (ROOT / "README.md").read_text()
    commands = re.findall(r"^    (python3 -m venv .+)$", readme, flags=re.MULTILINE)
    assert len(commands) == 2
    assert commands[0].endswith("dynastore serve")
    assert "pytest" in commands[1]
    ci = (ROOT / ".ci" / "run").read_text()
    assert commands[1] in ci


def test_compatibility_lists_every_xfail() -> None:
    """Each strict xfail test names its divergence; the page must mention the test file."""
    page = (ROOT / "docs" / "compatibility.md").read_text()
    offenders = []
    for path in (ROOT / "tests").rglob("test_*.py"):
        if path.name == Path(__file__).name:
            continue
        if "@pytest.mark.xfail" in path.read_text() and path.name not in page:
            offenders.append(path.name)
    assert offenders == []
