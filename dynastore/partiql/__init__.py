"""PartiQL for DynamoDB: lexer, parser to a small typed tree, and a
translator to the equivalent item-API request (docs/partiql.md).

The package is pure (no storage, no I/O); dynastore/ops/execute_statement.py,
batch_execute_statement.py and execute_transaction.py run the translated
requests through the existing operation handlers.
"""

from __future__ import annotations

from functools import lru_cache

from dynastore import limits
from dynastore.errors import ValidationException
from dynastore.partiql import ast
from dynastore.partiql.parser import parse as _parse

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
    return _parse(statement)
