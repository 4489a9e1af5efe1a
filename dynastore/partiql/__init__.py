"""PartiQL for DynamoDB: lexer, parser to a small typed tree, and a
translator to the equivalent item-API request (docs/partiql.md).

The package is pure (no storage, no I/O); dynastore/ops/execute_statement.py,
batch_execute_statement.py and execute_transaction.py run the translated
requests through the existing operation handlers.
"""

from __future__ import annotations

import sys
import threading
from collections.abc import Callable
from functools import lru_cache
from typing import TypeVar

from dynastore import limits
from dynastore.errors import ValidationException
from dynastore.partiql import ast
from dynastore.partiql.messages import not_well_formed
from dynastore.partiql.parser import parse as _parse

Result = TypeVar("Result")
_recursion_lock = threading.Lock()

MESSAGE_TOO_LONG = (
    f"Member must have length less than or equal to {limits.PARTIQL_STATEMENT_MAX_BYTES}"
)


def parse(statement: str) -> ast.Statement:
    """The tree of ``statement``, parsed once per text (errors are not cached)."""
    if len(statement) * 4 > limits.PARTIQL_STATEMENT_MAX_BYTES and (
        len(statement.encode()) > limits.PARTIQL_STATEMENT_MAX_BYTES
    ):
        raise ValidationException(MESSAGE_TOO_LONG)
    return _cached(statement)


@lru_cache(maxsize=limits.PARTIQL_PARSE_CACHE_ENTRIES)
def _cached(statement: str) -> ast.Statement:
    return deep(_parse, statement)


def deep(run: Callable[..., Result], *arguments: object) -> Result:
    """``run(*arguments)``; when that recurses too deep (an 8 KB statement
    can nest a few thousand parentheses, lists or NOTs), once more with a
    higher recursion limit (Python 3.11 runs Python-to-Python calls without
    growing the C stack), and past that a ValidationException, never a 500."""
    try:
        return run(*arguments)
    except RecursionError:
        pass
    with _recursion_lock:
        previous = sys.getrecursionlimit()
        sys.setrecursionlimit(max(previous, limits.PARTIQL_DEEP_RECURSION_LIMIT))
        try:
            return run(*arguments)
        except RecursionError:
            raise not_well_formed("") from None
        finally:
            sys.setrecursionlimit(previous)
