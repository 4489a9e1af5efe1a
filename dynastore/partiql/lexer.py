"""PartiQL tokens: names (bare or "quoted"), 'strings', numbers, ``?``
parameters and punctuation. Comments (``--`` to the end of the line and
``/* */``) are skipped; an unterminated comment or string, or a character
PartiQL has no use for (``#``), is a statement that "wasn't well formed"
with nothing after the colon, as DynamoDB answers."""

from __future__ import annotations

import re
from dataclasses import dataclass
from typing import Final

from dynastore.partiql.messages import not_well_formed

NAME: Final = "name"
QUOTED: Final = "quoted"
STRING: Final = "string"
NUMBER: Final = "number"
PARAMETER: Final = "parameter"
PUNCTUATION: Final = "punctuation"
END: Final = "end"


@dataclass(frozen=True, slots=True)
class Token:
    kind: str
    text: str
    position: int

    def is_keyword(self, *words: str) -> bool:
        return self.kind == NAME and self.text.lower() in words


_NUMBER = re.compile(r"(?:[0-9]+(?:\.[0-9]*)?|\.[0-9]+)(?:[eE][+-]?[0-9]+)?")
_DIGITS = frozenset("0123456789")
_NAME = re.compile(r"[A-Za-z_$][A-Za-z0-9_$]*")
_PUNCTUATION = ("<<", ">>", "<=", ">=", "<>", "!=", "||", "(", ")", "[", "]", "{", "}",
                ",", ".", ":", "*", "=", "<", ">", "+", "-", "/", "%", ";")


def tokenize(text: str) -> list[Token]:
    tokens: list[Token] = []
    position = 0
    length = len(text)
    while position < length:
        char = text[position]
        if char.isspace():
            position += 1
        elif text.startswith("--", position):
            end = text.find("\n", position)
            position = length if end < 0 else end + 1
        elif text.startswith("/*", position):
            end = text.find("*/", position + 2)
            if end < 0:
                raise not_well_formed("")
            position = end + 2
        elif char == "'" or char == '"':
            kind = STRING if char == "'" else QUOTED
            value, position = _quoted(text, position, char)
            tokens.append(Token(kind, value, position))
        elif char == "?":
            tokens.append(Token(PARAMETER, "?", position))
            position += 1
        elif char in _DIGITS or (char == "." and position + 1 < length and text[position + 1] in _DIGITS):
            match = _NUMBER.match(text, position)
            assert match is not None
            tokens.append(Token(NUMBER, match.group(), position))
            position = match.end()
        elif (match := _NAME.match(text, position)) is not None:
            tokens.append(Token(NAME, match.group(), position))
            position = match.end()
        else:
            for mark in _PUNCTUATION:
                if text.startswith(mark, position):
                    tokens.append(Token(PUNCTUATION, mark, position))
                    position += len(mark)
                    break
            else:
                raise not_well_formed("")
    tokens.append(Token(END, "", length))
    return tokens


def _quoted(text: str, start: int, quote: str) -> tuple[str, int]:
    """The text between quotes (a doubled quote is one quote), and where it ends."""
    parts: list[str] = []
    position = start + 1
    while True:
        end = text.find(quote, position)
        if end < 0:
            raise not_well_formed("")
        parts.append(text[position:end])
        if text.startswith(quote * 2, end):
            parts.append(quote)
            position = end + 2
            continue
        return "".join(parts), end + 1
