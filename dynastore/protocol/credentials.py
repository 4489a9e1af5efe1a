"""The access keys a server accepts, read from a credentials file.

One key a line::

    ACCESS_KEY_ID:SECRET_ACCESS_KEY[:ACCOUNT_ID[:FLAGS]]

``#`` starts a comment (a whole line or the end of one); blank lines are
ignored. ACCOUNT_ID is 12 digits and defaults to ``000000000000`` (an empty
field means the default). FLAGS is a comma list of ``readonly`` (reads and
Describe/List calls only), ``admin`` (the ``/_dynastore/`` admin routes) and
``session-token=TOKEN`` (a temporary key: each request must carry that
``X-Amz-Security-Token``).

A bad line raises ``CredentialsFileError`` naming the file and the line; the
message never contains a secret, and neither does an ``AccessKey``'s repr.
"""

from __future__ import annotations

import os
from dataclasses import dataclass, field

DEFAULT_ACCOUNT_ID = "000000000000"
ACCOUNT_ID_DIGITS = 12
FLAG_READONLY = "readonly"
FLAG_ADMIN = "admin"
FLAG_SESSION_TOKEN = "session-token="


class CredentialsFileError(ValueError):
    """A credentials file that cannot be read or has a bad line."""


@dataclass(frozen=True, slots=True)
class AccessKey:
    """One access key: its secret, its account and what it may do."""

    access_key_id: str
    secret_access_key: str = field(repr=False)
    account_id: str = DEFAULT_ACCOUNT_ID
    readonly: bool = False
    admin: bool = False
    session_token: str | None = field(default=None, repr=False)


def parse_credentials(text: str, source: str = "<credentials>") -> dict[str, AccessKey]:
    """Every key of a credentials file's text, by access key id."""
    keys: dict[str, AccessKey] = {}
    for line_number, raw_line in enumerate(text.splitlines(), start=1):
        line = raw_line.split("#", 1)[0].strip()
        if not line:
            continue
        key = _parse_line(line, f"{source}, line {line_number}")
        if key.access_key_id in keys:
            raise CredentialsFileError(
                f"{source}, line {line_number}: duplicate access key id {key.access_key_id!r}"
            )
        keys[key.access_key_id] = key
    return keys


def load_credentials(path: str | os.PathLike[str]) -> dict[str, AccessKey]:
    """Read and parse a credentials file (UTF-8)."""
    source = os.fspath(path)
    try:
        with open(source, encoding="utf-8") as file:
            text = file.read()
    except OSError as error:
        reason = error.strerror or error.__class__.__name__
        raise CredentialsFileError(f"cannot read credentials file {source}: {reason}") from None
    except UnicodeDecodeError:
        raise CredentialsFileError(f"credentials file {source} is not UTF-8 text") from None
    return parse_credentials(text, source)


def _parse_line(line: str, where: str) -> AccessKey:
    fields = [part.strip() for part in line.split(":", 3)]
    access_key_id = fields[0]
    if not access_key_id:
        raise CredentialsFileError(f"{where}: missing access key id")
    if len(fields) < 2 or not fields[1]:
        raise CredentialsFileError(f"{where}: missing secret access key for {access_key_id!r}")
    if any(character.isspace() for character in access_key_id) or "/" in access_key_id:
        raise CredentialsFileError(
            f"{where}: access key id {access_key_id!r} may not contain spaces or '/'"
        )
    account_id = fields[2] if len(fields) > 2 and fields[2] else DEFAULT_ACCOUNT_ID
    if len(account_id) != ACCOUNT_ID_DIGITS or not account_id.isascii() or not account_id.isdigit():
        raise CredentialsFileError(
            f"{where}: account id {account_id!r} must be {ACCOUNT_ID_DIGITS} digits"
        )
    readonly, admin, session_token = _parse_flags(fields[3] if len(fields) > 3 else "", where)
    return AccessKey(
        access_key_id=access_key_id,
        secret_access_key=fields[1],
        account_id=account_id,
        readonly=readonly,
        admin=admin,
        session_token=session_token,
    )


def _parse_flags(text: str, where: str) -> tuple[bool, bool, str | None]:
    readonly = admin = False
    session_token: str | None = None
    for flag in (part.strip() for part in text.split(",")):
        if not flag:
            continue
        if flag == FLAG_READONLY:
            readonly = True
        elif flag == FLAG_ADMIN:
            admin = True
        elif flag.startswith(FLAG_SESSION_TOKEN):
            session_token = flag[len(FLAG_SESSION_TOKEN) :]
            if not session_token:
                raise CredentialsFileError(f"{where}: empty session-token flag")
        else:
            name = flag.split("=", 1)[0]  # never echo a value: it may be a token
            raise CredentialsFileError(
                f"{where}: unknown flag {name!r} (expected readonly, admin or session-token=TOKEN)"
            )
    return readonly, admin, session_token
