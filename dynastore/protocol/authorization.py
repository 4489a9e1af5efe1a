"""The presence checks DynamoDB makes on a request's credentials.

DynamoDB refuses a request without credentials before it looks at the body:
no ``Authorization`` header (and no ``X-Amz-Algorithm`` query parameter), or
one that is not ``AWS4-...``, is MissingAuthenticationTokenException; a SigV4
header lacking one of its parts is IncompleteSignatureException. These checks
need no secret: they run on every request; with ``--credentials`` sigv4.py
then verifies the signature itself (without, any well-formed header passes).

Wording and order follow DynamoDB as recorded by dynalite's connection tests.
"""

from __future__ import annotations

from dynastore.errors import (
    IncompleteSignatureException,
    InvalidSignatureException,
    MissingAuthenticationTokenException,
)

HEADER_PARAMETERS = ("Credential", "Signature", "SignedHeaders")
QUERY_PARAMETERS = (
    "X-Amz-Algorithm", "X-Amz-Credential", "X-Amz-Signature", "X-Amz-SignedHeaders", "X-Amz-Date",
)


def check_credentials_present(
    authorization: bytes | None, has_date_header: bool, query: bytes
) -> None:
    """Raise DynamoDB's error when the request carries no usable credentials.

    ``query`` is the raw query string of the request path (usually empty).
    """
    presigned = b"X-Amz-Algorithm" in query and _query_has_algorithm(query)
    if authorization is not None and presigned:
        raise InvalidSignatureException(
            "Found both 'X-Amz-Algorithm' as a query-string param and 'Authorization' as HTTP header."
        )
    if authorization is None and not presigned:
        raise MissingAuthenticationTokenException()
    if authorization is not None:
        _check_header(authorization.decode("latin-1"), has_date_header)
    else:
        _check_query(query.decode("latin-1"))


def _query_has_algorithm(query: bytes) -> bool:
    names = {part.split(b"=", 1)[0] for part in query.split(b"&")}
    return b"X-Amz-Algorithm" in names


def _check_header(authorization: str, has_date_header: bool) -> None:
    if authorization.strip()[:5] != "AWS4-":
        raise MissingAuthenticationTokenException()
    parameters: dict[str, str] = {}
    for part in authorization.replace(",", " ").split()[1:]:
        name, _, value = part.strip().partition("=")
        parameters[name] = value
    message = "".join(
        f"Authorization header requires '{name}' parameter. "
        for name in HEADER_PARAMETERS
        if not parameters.get(name)
    )
    if not has_date_header:
        message += (
            "Authorization header requires existence of either a 'X-Amz-Date' or a 'Date' header. "
        )
    if message:
        raise IncompleteSignatureException(message + "Authorization=" + authorization)


def _check_query(query: str) -> None:
    from urllib.parse import parse_qs  # rare path: keep it out of startup

    values = parse_qs(query, keep_blank_values=True)
    message = "".join(
        f"AWS query-string parameters must include '{name}'. "
        for name in QUERY_PARAMETERS
        if not (values.get(name) or [""])[0]
    )
    if message:
        raise IncompleteSignatureException(message + "Re-examine the query-string parameters.")
