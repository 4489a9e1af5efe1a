"""Structural rules that keep the layers clean (see docs/architecture.md).

- imports only go down: protocol -> ops -> engine/expressions/partiql/types -> storage
- the pure packages read no clock, open no sockets, touch no database driver
- only dynastore/storage/ imports a database driver
"""

from __future__ import annotations

import ast
from pathlib import Path

import pytest

PACKAGE = Path(__file__).resolve().parent.parent / "dynastore"

PURE_PACKAGES = ("types", "expressions", "engine", "partiql")
DRIVERS = ("sqlite3", "psycopg", "psycopg2", "asyncpg")
# (threading is allowed: a lock guarding process-wide state is not I/O.)
IMPURE_MODULES = ("socket", "asyncio", "subprocess", "time", "random", "datetime")

#: package -> dynastore packages it must never import
FORBIDDEN_UPWARD_IMPORTS = {
    "types": ("expressions", "engine", "ops", "protocol", "storage", "database", "cli"),
    "expressions": ("engine", "ops", "protocol", "storage", "database", "cli"),
    "engine": ("ops", "protocol", "database", "cli", "storage.sqlite", "storage.memory"),
    "storage": ("engine", "expressions", "ops", "protocol", "database", "cli"),
    "ops": ("protocol", "cli"),
    "partiql": ("ops", "protocol", "storage", "database", "cli"),
    # The Redis protocol writes through the write path over the storage
    # interface only, and calls no DynamoDB operation (docs/adr/0009).
    "redis": ("ops", "console", "cli", "storage.sqlite", "storage.memory", "storage.postgres"),
    "dax": ("cli", "console"),  # beside protocol/, over ops/ (ADR 0008)
}


def imported_modules(path: Path) -> set[str]:
    tree = ast.parse(path.read_text(), filename=str(path))
    names: set[str] = set()
    for node in ast.walk(tree):
        if isinstance(node, ast.Import):
            names.update(alias.name for alias in node.names)
        elif isinstance(node, ast.ImportFrom) and node.module and node.level == 0:
            names.add(node.module)
    return names


def modules_of(package: str) -> list[Path]:
    return sorted((PACKAGE / package).rglob("*.py"))


@pytest.mark.parametrize("package", sorted(FORBIDDEN_UPWARD_IMPORTS))
def test_imports_only_go_down(package: str) -> None:
    offenders = []
    for path in modules_of(package):
        for module in imported_modules(path):
            for forbidden in FORBIDDEN_UPWARD_IMPORTS[package]:
                target = f"dynastore.{forbidden}"
                if module == target or module.startswith(target + "."):
                    offenders.append(f"{path.relative_to(PACKAGE)} imports {module}")
    assert offenders == []


@pytest.mark.parametrize("package", PURE_PACKAGES)
def test_pure_packages_have_no_io_or_clock(package: str) -> None:
    offenders = []
    for path in modules_of(package):
        for module in imported_modules(path):
            root = module.split(".")[0]
            if root in IMPURE_MODULES or root in DRIVERS:
                offenders.append(f"{path.relative_to(PACKAGE)} imports {module}")
    assert offenders == []


def test_only_storage_imports_a_database_driver() -> None:
    offenders = []
    for path in sorted(PACKAGE.rglob("*.py")):
        if path.relative_to(PACKAGE).parts[0] == "storage":
            continue
        for module in imported_modules(path):
            if module.split(".")[0] in DRIVERS:
                offenders.append(f"{path.relative_to(PACKAGE)} imports {module}")
    assert offenders == []


def test_wire_names_only_in_protocol_and_ops() -> None:
    """``TableName``-style wire names stay out of the layers below the
    engine: expressions/, types/ and storage/ speak Python names. (engine/
    is not checked: its table and legacy modules translate wire shapes.)"""
    offenders = []
    for path in modules_of("expressions") + modules_of("types") + modules_of("storage"):
        if '"TableName"' in path.read_text():
            offenders.append(str(path.relative_to(PACKAGE)))
    assert offenders == []
