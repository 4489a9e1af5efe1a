"""Redis's glob patterns (KEYS, SCAN MATCH, PSUBSCRIBE, CONFIG GET):
``*``, ``?``, ``[abc]``, ``[^a]``, ``[a-z]`` and ``\\`` escapes, as
stringmatchlen reads them, compiled once to a regular expression."""

from __future__ import annotations

import re
from collections.abc import Callable
from functools import lru_cache


@lru_cache(maxsize=256)
def matcher(pattern: bytes, nocase: bool = False) -> Callable[[bytes], bool]:
    """A predicate: does a string match ``pattern``?"""
    if pattern == b"*":
        return lambda value: True
    parts: list[bytes] = []
    index, size = 0, len(pattern)
    while index < size:
        char = pattern[index:index + 1]
        if char == b"*":
            parts.append(b".*")
        elif char == b"?":
            parts.append(b".")
        elif char == b"\\" and index + 1 < size:
            index += 1
            parts.append(re.escape(pattern[index:index + 1]))
        elif char == b"[":
            index += 1
            negate = index < size and pattern[index:index + 1] == b"^"
            if negate:
                index += 1
            members: list[bytes] = []
            while index < size and pattern[index:index + 1] != b"]":
                current = pattern[index:index + 1]
                if current == b"\\" and index + 1 < size:
                    index += 1
                    members.append(re.escape(pattern[index:index + 1]))
                elif index + 2 < size and pattern[index + 1:index + 2] == b"-" and pattern[index + 2:index + 3] != b"]":
                    low, high = sorted((pattern[index:index + 1], pattern[index + 2:index + 3]))
                    members.append(re.escape(low) + b"-" + re.escape(high))
                    index += 2
                else:
                    members.append(re.escape(current))
                index += 1
            body = b"".join(members)
            if not body:
                parts.append(b"[^\\s\\S]" if not negate else b"[\\s\\S]")
            else:
                parts.append(b"[" + (b"^" if negate else b"") + body + b"]")
        else:
            parts.append(re.escape(char))
        index += 1
    flags = re.DOTALL | (re.IGNORECASE if nocase else 0)
    compiled = re.compile(b"".join(parts) + b"\\Z", flags)
    return lambda value: compiled.match(value) is not None
