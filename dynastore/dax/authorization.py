"""authorizeConnection: which namespace a DAX connection reaches, and with
``--credentials``, whether its signature is good.

The DAX clients sign an empty POST to ``https://dax.amazonaws.com`` with
SigV4 (service ``dax``) and send the access key id, the signature, the
string to sign and the session token; no answer is expected. The
connection's requests then run in the namespace of the key's account (the
default account without ``--credentials``) and of the region named in the
string to sign's credential scope. A refused signature answers every later
request of the connection with DAX's authentication error.
"""

from __future__ import annotations

import hashlib
import hmac
from typing import TYPE_CHECKING, Any

from dynastore.engine.namespaces import DEFAULT_ACCOUNT_ID
from dynastore.errors import (
    AccessDeniedException,
    DynamoDBError,
    LimitExceededException,
    UnrecognizedClientException,
)
from dynastore.namespaces import Namespaces, TooManyNamespaces

if TYPE_CHECKING:
    from dynastore.dax.server import DaxServer
    from dynastore.dax.service import Session

SIGNATURE_MISMATCH = (
    "The request signature we calculated does not match the signature you provided."
)


def authorize(server: DaxServer, session: Session, arguments: list[Any]) -> None:
    access_key_id, signature, string_to_sign, token = arguments[:4]
    try:
        session.database, session.key = _namespace(server, access_key_id, signature, string_to_sign, token)
        session.authorization_error = None
    except DynamoDBError as error:
        session.authorization_error = error
        return
    session.namespace = (session.database.account_id, session.database.region)


def write_refused(session: Session, operation: str, table: str) -> AccessDeniedException:
    """A ``readonly`` key asked DAX for a write: DynamoDB's words for it."""
    key = session.key
    assert key is not None
    user = f"arn:aws:iam::{key.account_id}:user/{key.access_key_id}"
    return AccessDeniedException(
        f"User: {user} is not authorized to perform: dax:{operation} on resource: "
        f"{session.database.table_arn(table)} because no identity-based policy allows the dax:{operation} action"
    )


def _namespace(server: DaxServer, access_key_id: Any, signature: Any, string_to_sign: Any,
               token: Any) -> tuple[Any, Any]:
    """The namespace the connection reaches and its access key (None
    without ``--credentials``)."""
    if not isinstance(string_to_sign, bytes | bytearray) or not isinstance(access_key_id, str):
        raise UnrecognizedClientException()
    lines = bytes(string_to_sign).decode("utf-8", "replace").split("\n")
    scope = lines[2].split("/") if len(lines) == 4 else []
    if len(scope) != 4 or scope[2] != "dax" or scope[3] != "aws4_request":
        raise UnrecognizedClientException()
    day, region = scope[0], scope[1]
    account = DEFAULT_ACCOUNT_ID
    key = None
    verifier = server.verifier
    if verifier is not None:
        key = verifier.keys.get(access_key_id)
        if key is None:
            raise UnrecognizedClientException()
        if key.session_token is not None and token != key.session_token:
            raise UnrecognizedClientException()
        derived = ("AWS4" + key.secret_access_key).encode("utf-8")
        for part in (day, region, "dax", "aws4_request"):
            derived = hmac.digest(derived, part.encode("utf-8"), "sha256")
        expected = hmac.new(derived, bytes(string_to_sign), hashlib.sha256).hexdigest()
        if not isinstance(signature, str) or not hmac.compare_digest(expected, signature):
            raise UnrecognizedClientException(SIGNATURE_MISMATCH)
        account = key.account_id
    try:
        return Namespaces.of(server.database).get(account, region), key
    except ValueError as error:
        raise AccessDeniedException(str(error)) from None
    except TooManyNamespaces as error:
        raise LimitExceededException(str(error)) from None
