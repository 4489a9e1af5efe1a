"""Tokens of DynamoDB's expression languages.

One lexer serves all five languages. A character DynamoDB does not accept
becomes a ``BAD`` token rather than an immediate error: DynamoDB reports the
place where its parser stops, so the parser decides when a bad token matters.
"""

from __future__ import annotations

import re
from dataclasses import dataclass

# Token kinds. Keywords use their upper-case spelling as their kind.
NAME = "name"  # a bare attribute name or function name
NAME_PLACEHOLDER = "#name"
VALUE_PLACEHOLDER = ":value"
INTEGER = "integer"  # a list index
BAD = "bad"
EOF = "eof"

KEYWORDS = frozenset({"AND", "OR", "NOT", "BETWEEN", "IN", "SET", "REMOVE", "ADD", "DELETE"})
COMPARATORS = frozenset({"=", "<>", "<", "<=", ">", ">="})


@dataclass(frozen=True, slots=True)
class Token:
    kind: str
    text: str
    start: int
    end: int


_TOKEN_PATTERN = re.compile(
    r"""
    (?P<space>[ \t\r\n]+)
  | (?P<word>[A-Za-z][A-Za-z0-9_]*)
  | (?P<placeholder>[#:][A-Za-z0-9_]+)
  | (?P<integer>0|[1-9][0-9]*)
  | (?P<operator><>|<=|>=|[=<>()\[\],.+\-])
    """,
    re.VERBOSE,
)


def tokenize(text: str) -> list[Token]:
    """All tokens of ``text``, ending with an EOF token whose text is ``<EOF>``."""
    tokens: list[Token] = []
    position = 0
    length = len(text)
    match = _TOKEN_PATTERN.match
    while position < length:
        found = match(text, position)
        if found is None:
            tokens.append(Token(BAD, text[position], position, position + 1))
            position += 1
            continue
        group = found.lastgroup
        end = found.end()
        lexeme = found.group()
        if group == "word":
            upper = lexeme.upper()
            tokens.append(Token(upper if upper in KEYWORDS else NAME, lexeme, position, end))
        elif group == "placeholder":
            kind = NAME_PLACEHOLDER if lexeme[0] == "#" else VALUE_PLACEHOLDER
            tokens.append(Token(kind, lexeme, position, end))
        elif group == "integer":
            tokens.append(Token(INTEGER, lexeme, position, end))
        elif group == "operator":
            tokens.append(Token(lexeme, lexeme, position, end))
        position = end
    tokens.append(Token(EOF, "<EOF>", length, length))
    return tokens
