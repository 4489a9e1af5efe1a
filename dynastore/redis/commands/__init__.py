"""The one dispatch table: every Redis command, with its arity and flags
(``common.COMMANDS``), filled by the family modules as they are imported."""

from __future__ import annotations

import importlib

from dynastore.redis.commands.common import COMMANDS, Command

FAMILIES = (
    "connection", "keys", "strings", "hashes", "lists", "sets", "zsets",
    "streams", "transactions", "pubsub", "server",
)


def load_all() -> None:
    for family in FAMILIES:
        importlib.import_module(f"dynastore.redis.commands.{family}")


__all__ = ["COMMANDS", "Command", "load_all"]
