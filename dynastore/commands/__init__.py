"""Commands a person runs on a table's data: ``dynastore backup``,
``dynastore restore`` (dynastore/commands/backup.py), ``dynastore export``
(export.py) and ``dynastore import`` (import_command.py).

Each command module has ``add_parsers(commands)``, which adds its
sub-commands to ``dynastore``'s and sets ``run`` (a function of the parsed
arguments returning the exit code), and imports nothing heavy at the top:
``dynastore --version`` and ``dynastore serve`` build the whole parser, so
boto3, rich and the database are imported only when a command runs.

Shared parts: ``target`` (where the command works: ``--endpoint URL`` over
boto3, or ``--data-dir DIR`` through the embedded API with the jobs run in
this process) and ``progress`` (the progress bar, the summary line and the
one-line error).
"""

from __future__ import annotations

import argparse
from typing import Any


def add_commands(commands: Any) -> None:
    """Add every command of this package to ``dynastore``'s sub-commands
    (``commands``: what ``ArgumentParser.add_subparsers`` returned)."""
    from dynastore.commands import backup, export, import_command

    backup.add_parsers(commands)
    export.add_parser(commands)
    commands.choices["export"].set_defaults(run=export.run)
    import_command.add_parser(commands)
    commands.choices["import"].set_defaults(run=import_command.run)


def run(arguments: argparse.Namespace) -> int | None:
    """Run the command ``arguments`` name, if it is one of this package's
    (None: it is not)."""
    runner = getattr(arguments, "run", None)
    return None if runner is None else int(runner(arguments))
