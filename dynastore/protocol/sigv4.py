"""DynamoDB's Signature Version 4 gate: who signed a request, or why it is refused.

``SignatureVerifier.verify`` takes a request as the HTTP parser hands it over
(method, raw target, lower-cased header dict, raw body) and returns the
``Caller`` that signed it, or raises the error DynamoDB answers with. It is
pure apart from the injected wall clock (never the database's movable clock):
no I/O, no logging, and the only state is a bounded cache of derived signing
keys.

The checks run in the order DynamoDB makes them, as recorded against the live
service in the comments of dynalite's early server (2013) — the messages are
DynamoDB's from there, from scratchstack-aws-signature (which reproduces
AWS's) and from responses quoted in SDK issue threads:

1. presence of the credentials (``authorization.check_credentials_present``);
2. the date: ISO-8601 basic format, then within 15 minutes of the wall clock
   (a presigned URL: not after ``X-Amz-Date + X-Amz-Expires``);
3. ``host`` among the signed headers; 4. the algorithm;
5. the credential's five parts; 6. the scope (region, service, terminator,
   date), every failure in one message;
7. the access key id; 8. the signature; 9. the session token.

The canonical request follows botocore's ``SigV4Auth`` (the reference
signer): the path has its dot segments removed and is percent-encoded again
(non-S3 services "double-encode"); the query string is sorted and
AWS-encoded (a query whose raw form differs is tried raw too, as botocore
signs a URL's query as written); header values are trimmed with inner
whitespace collapsed; the payload hash is ``X-Amz-Content-Sha256`` when the
client sent one (a hex hash must then match the body), else the body's —
for a presigned URL the body's or ``UNSIGNED-PAYLOAD`` (botocore's
``SigV4QueryAuth`` signs the body's hash unless payload signing is off).
"""

from __future__ import annotations

import calendar
import hashlib
import hmac
import re
import time
from collections.abc import Callable, Mapping
from dataclasses import dataclass
from datetime import datetime
from email.utils import parsedate_tz
from urllib.parse import quote_from_bytes, unquote_to_bytes

from dynastore import limits
from dynastore.engine.namespaces import REGION_PATTERN  # a region names a namespace of tables
from dynastore.errors import (
    DynamoDBError,
    IncompleteSignatureException,
    InvalidSignatureException,
    UnrecognizedClientException,
)
from dynastore.protocol.authorization import check_credentials_present
from dynastore.protocol.credentials import AccessKey

ALGORITHM = "AWS4-HMAC-SHA256"
SERVICE = "dynamodb"
"""DynamoDB Streams is signed for "dynamodb" too (botocore: signingName)."""
TERMINATOR = "aws4_request"
UNSIGNED_PAYLOAD = b"UNSIGNED-PAYLOAD"
EMPTY_PAYLOAD_HASH = hashlib.sha256(b"").hexdigest().encode()

# --- DynamoDB's messages ------------------------------------------------------------

SIGNATURE_MISMATCH = (
    "The request signature we calculated does not match the signature you provided. "
    "Check your AWS Secret Access Key and signing method. "
    "Consult the service documentation for details."
)
HOST_NOT_SIGNED = "'Host' or ':authority' must be a 'SignedHeader' in the AWS Authorization."


def _bad_date(text: str) -> IncompleteSignatureException:
    return IncompleteSignatureException(
        f"Date must be in ISO-8601 'basic format'. Got '{text}'. "
        "See http://en.wikipedia.org/wiki/ISO_8601"
    )


def _unsupported_algorithm(algorithm: str) -> IncompleteSignatureException:
    return IncompleteSignatureException(
        f"Unsupported AWS 'algorithm': '{algorithm}' (only {ALGORITHM} for now). "
    )


def _credential_parts(credential: str) -> IncompleteSignatureException:
    return IncompleteSignatureException(
        "Credential must have exactly 5 slash-delimited elements, "
        f"e.g. keyid/date/region/service/term, got '{credential}'"
    )


# --- Public interface ------------------------------------------------------------


@dataclass(frozen=True, slots=True)
class Caller:
    """Who signed a verified request."""

    key: AccessKey
    region: str
    service: str


_QUERY_CREDENTIAL = b"X-Amz-Credential="


def credential_scope_region(authorization: bytes | None, query: bytes) -> str | None:
    """The region of the request's credential scope, or None.

    ``Credential=AKID/20260101/us-west-2/dynamodb/aws4_request`` in the
    Authorization header, else the (URL-encoded) ``X-Amz-Credential`` query
    parameter. None when absent, malformed or not a region name dynastore
    accepts (``REGION_PATTERN``). No signature is checked: a few string
    operations, for every request when verification is off.
    """
    if authorization is not None:
        start = authorization.find(b"Credential=")
        if start < 0:
            return None
        value = authorization[start + 11 :].partition(b",")[0].partition(b" ")[0]
    else:
        if query.startswith(_QUERY_CREDENTIAL):
            start = 0
        else:
            start = query.find(b"&" + _QUERY_CREDENTIAL) + 1
            if start == 0:
                return None
        value = query[start + len(_QUERY_CREDENTIAL) :].partition(b"&")[0]
        if b"%" in value or b"+" in value:
            value = unquote_to_bytes(value.replace(b"+", b" "))
    parts = value.rstrip(b"/").split(b"/")
    if len(parts) != 5:
        return None
    region = parts[2]
    if not 0 < len(region) <= 64 or not region.replace(b"-", b"a").isalnum():
        return None  # REGION_PATTERN, in bytes operations
    return region.decode("ascii")


class SignatureVerifier:
    """Checks SigV4 signatures against a fixed set of access keys."""

    __slots__ = ("_keys", "_wall_clock", "_signing_keys", "_last_date", "_last_scope", "_known", "_names", "_epochs")

    def __init__(
        self, keys: Mapping[str, AccessKey], wall_clock: Callable[[], float] = time.time
    ) -> None:
        self._keys = keys
        self._wall_clock = wall_clock
        #: (access key id, day, region, service) -> the secret it was derived from
        #: and the signing key's HMAC state (its inner and outer SHA-256 after the pad)
        self._signing_keys: dict[tuple[str, str, str, str], _SigningKey] = {}
        #: the last X-Amz-Date parsed and its epoch seconds: clients repeat it
        self._last_date: tuple[bytes, int] = (b"", 0)
        #: the last credential and request date checked, the scope they gave and
        #: the string to sign's first three lines
        self._last_scope: tuple[str, str, _Scope, bytes] = ("", "", ("", "", "", ""), b"")
        #: for the common path: a credential already checked -> what verifying needs
        self._known: dict[bytes, _KnownCredential] = {}
        #: SignedHeaders values already checked (sorted, unique, host among them) -> names
        self._names: dict[bytes, tuple[bytes, ...]] = {}
        #: X-Amz-Date values seen lately -> epoch seconds
        self._epochs: dict[bytes, int] = {}


    @property
    def keys(self) -> Mapping[str, AccessKey]:
        """The access keys it verifies against (the Redis protocol's AUTH checks them too)."""
        return self._keys
    def verify(self, method: bytes, url: bytes, headers: dict[bytes, bytes], body: bytes) -> Caller:
        """The Caller who signed this request; raises DynamoDB's error otherwise."""
        authorization = headers.get(b"authorization")
        if authorization is not None and url == b"/":
            caller = self._verify_common(method, authorization, headers, body)
            if caller is not None:
                return caller
        return self._verify(method, url, headers, body)

    def _verify_common(
        self, method: bytes, authorization: bytes, headers: dict[bytes, bytes], body: bytes
    ) -> Caller | None:
        """The request every SDK sends — an Authorization header as botocore
        writes it, X-Amz-Date, path ``/``, no declared payload hash, a known
        credential — verified in one straight pass (about a third of the
        general path's cost). None when anything differs or fails: the
        general path then decides, with DynamoDB's error for what is wrong."""
        match = _BOTOCORE_AUTHORIZATION.fullmatch(authorization)
        date = headers.get(b"x-amz-date")
        if match is None or date is None or b"x-amz-content-sha256" in headers:
            return None
        algorithm, credential, signed_headers, signature = match.groups()
        known = self._known.get(credential)
        names = self._names.get(signed_headers)
        if known is None or names is None or algorithm != _ALGORITHM_BYTES or date[:8] != known.day:
            self._learn(credential, signed_headers, date)
            return None
        key = known.caller.key
        if self._keys.get(key.access_key_id) is not key:  # the key was replaced or removed
            del self._known[credential]
            return None
        epoch = self._epochs.get(date)
        if epoch is None:
            epoch = self._epoch_of(date)
            if epoch is None:
                return None
        now = self._wall_clock()
        if not now - limits.SIGV4_CLOCK_SKEW_SECONDS <= epoch <= now + limits.SIGV4_CLOCK_SKEW_SECONDS:
            return None
        get = headers.get
        canonical = b"%s\n/\n\n%s\n%s\n%s" % (
            method,
            b"".join([b"%s:%s\n" % (name, b" ".join(get(name, b"").split())) for name in names]),
            signed_headers,
            hashlib.sha256(body).hexdigest().encode(),
        )
        mac = known.inner.copy()
        mac.update(b"%s\n%s\n%s" % (_ALGORITHM_BYTES, date, known.scope_line))  # ends in \n
        mac.update(hashlib.sha256(canonical).hexdigest().encode())
        digest = known.outer.copy()
        digest.update(mac.digest())
        if not hmac.compare_digest(digest.hexdigest().encode(), signature):
            return None
        if get(b"x-amz-security-token") is not None or known.caller.key.session_token is not None:
            return None  # the general path checks tokens
        return known.caller

    def _epoch_of(self, date: bytes) -> int | None:
        """Epoch seconds of an X-Amz-Date (None if malformed), remembered: the
        requests of one second share it."""
        try:
            epoch = _parse_basic_date(date)
        except DynamoDBError:
            return None
        if len(self._epochs) >= DATES_REMEMBERED:
            self._epochs.clear()
        self._epochs[date] = epoch
        return epoch

    def _learn(self, credential: bytes, signed_headers: bytes, date: bytes) -> None:
        """Remember a credential and a SignedHeaders value that check out, for
        the next requests' common path (this one takes the general path)."""
        date_text = date.decode("latin-1")
        try:
            (access_key_id, day, region, service), prefix = self._scope(_text(credential), date_text)
        except DynamoDBError:
            return
        key = self._keys.get(access_key_id)
        names = signed_headers.lower().split(b";")
        if key is None or names != sorted(set(names)) or b"host" not in names:
            return
        known = self._known
        if len(known) >= limits.SIGV4_SIGNING_KEY_CACHE_ENTRIES:
            known.clear()
        if len(self._names) >= limits.SIGV4_SIGNING_KEY_CACHE_ENTRIES:
            self._names.clear()
        inner, outer = self._signing_key(key, day, region, service)
        known[credential] = _KnownCredential(
            day.encode(), prefix.split(b"\n", 2)[2], inner, outer,
            Caller(key, region, service),
        )
        if signed_headers == b";".join(names):
            self._names[signed_headers] = tuple(names)

    def _verify(self, method: bytes, url: bytes, headers: dict[bytes, bytes], body: bytes) -> Caller:
        path, _, query = url.partition(b"?")
        authorization = headers.get(b"authorization")
        has_date = b"x-amz-date" in headers or b"date" in headers
        check_credentials_present(authorization, has_date, query)
        if authorization is not None:
            signed = _from_header(authorization, headers)
        else:
            signed = _from_query(query, headers)
        epoch, date_text = self._request_date(signed)
        self._check_time(epoch, date_text, signed.expires_seconds)
        return self._check_signature(signed, date_text, method, path, query, headers, body)

    @property
    def signing_keys_cached(self) -> int:
        """How many derived signing keys are cached (bounded by the limit)."""
        return len(self._signing_keys)

    # --- steps ---------------------------------------------------------------------

    def _request_date(self, signed: _Signed) -> tuple[int, str]:
        text = signed.date
        if signed.date_is_http:
            epoch = _parse_http_date(text)
            return epoch, time.strftime("%Y%m%dT%H%M%SZ", time.gmtime(epoch))
        last_text, last_epoch = self._last_date
        if text == last_text:
            return last_epoch, text.decode("latin-1")
        epoch = _parse_basic_date(text)
        self._last_date = (text, epoch)
        return epoch, text.decode("latin-1")

    def _check_time(self, epoch: int, date_text: str, expires_seconds: int | None) -> None:
        now = int(self._wall_clock())
        skew = limits.SIGV4_CLOCK_SKEW_SECONDS
        if epoch > now + skew:
            raise InvalidSignatureException(
                f"Signature not yet current: {date_text} is still later than "
                f"{_basic(now + skew)} ({_basic(now)} + {_duration(skew)}.)"
            )
        window = skew if expires_seconds is None else expires_seconds
        if epoch < now - window:
            raise InvalidSignatureException(
                f"Signature expired: {date_text} is now earlier than "
                f"{_basic(now - window)} ({_basic(now)} - {_duration(window)}.)"
            )

    def _check_signature(
        self,
        signed: _Signed,
        date_text: str,
        method: bytes,
        path: bytes,
        query: bytes,
        headers: dict[bytes, bytes],
        body: bytes,
    ) -> Caller:
        names = signed.signed_headers.lower().split(b";")
        if b"host" not in names and b":authority" not in names:
            raise InvalidSignatureException(HOST_NOT_SIGNED)
        if signed.algorithm != ALGORITHM:
            raise _unsupported_algorithm(signed.algorithm)
        (access_key_id, day, region, service), prefix = self._scope(signed.credential, date_text)
        key = self._keys.get(access_key_id)
        if key is None:
            raise UnrecognizedClientException()
        inner, outer = self._signing_key(key, day, region, service)
        head, tail = _canonical_head(method, path, names, headers)
        queries = _query_candidates(query, signed.presigned) if query else (b"",)
        for canonical_query in queries:
            for payload_hash in _payload_candidates(headers, body, signed.presigned):
                canonical = b"%s\n%s\n%s\n%s" % (head, canonical_query, tail, payload_hash)
                mac = inner.copy()
                mac.update(prefix + hashlib.sha256(canonical).hexdigest().encode())
                digest = outer.copy()
                digest.update(mac.digest())
                if hmac.compare_digest(digest.hexdigest().encode(), signed.signature):
                    _check_token(key, signed.token)
                    return Caller(key, region, service)
        raise InvalidSignatureException(SIGNATURE_MISMATCH)

    def _scope(self, credential: str, date_text: str) -> tuple[_Scope, bytes]:
        """The checked scope and the string to sign's first three lines."""
        last_credential, last_date, last_scope, last_prefix = self._last_scope
        if credential == last_credential and date_text == last_date:
            return last_scope, last_prefix
        scope = _check_scope(credential, date_text)
        _, day, region, service = scope
        prefix = f"{ALGORITHM}\n{date_text}\n{day}/{region}/{service}/{TERMINATOR}\n".encode()
        self._last_scope = (credential, date_text, scope, prefix)
        return scope, prefix

    def _signing_key(self, key: AccessKey, day: str, region: str, service: str) -> _HmacState:
        cache_key = (key.access_key_id, day, region, service)
        cached = self._signing_keys.get(cache_key)
        if cached is not None and cached[0] == key.secret_access_key:
            return cached[1]
        derived = ("AWS4" + key.secret_access_key).encode("utf-8")
        for part in (day, region, service, TERMINATOR):
            derived = hmac.digest(derived, part.encode("utf-8"), "sha256")
        state = _hmac_state(derived)
        cache = self._signing_keys
        if cached is None and len(cache) >= limits.SIGV4_SIGNING_KEY_CACHE_ENTRIES:
            cache.pop(next(iter(cache), cache_key), None)  # the oldest entry
        cache[cache_key] = (key.secret_access_key, state)
        return state


@dataclass(frozen=True, slots=True)
class _KnownCredential:
    """A checked credential: what the common path needs to verify with it."""

    day: bytes
    scope_line: bytes
    """``day/region/service/aws4_request\\n``: the string to sign's third line."""
    inner: hashlib._Hash
    outer: hashlib._Hash
    caller: Caller


_ALGORITHM_BYTES = b"AWS4-HMAC-SHA256"
DATES_REMEMBERED = 64
"""X-Amz-Date values the common path keeps parsed (clients sign within a few seconds of each other)."""
_Scope = tuple[str, str, str, str]
"""(access key id, day, region, service) of a checked credential."""
_HmacState = tuple["hashlib._Hash", "hashlib._Hash"]
_SigningKey = tuple[str, _HmacState]
_BLOCK_BYTES = 64  # SHA-256's block: HMAC pads its key to this
_INNER_PAD = bytes(byte ^ 0x36 for byte in range(256))
_OUTER_PAD = bytes(byte ^ 0x5C for byte in range(256))


def _hmac_state(key: bytes) -> _HmacState:
    """HMAC-SHA256 (RFC 2104) with ``key`` as two SHA-256 states to copy.

    Copying them costs less than half of ``hmac.digest`` for each request.
    """
    padded = key.ljust(_BLOCK_BYTES, b"\0")  # a derived key is 32 bytes: never hashed first
    return (
        hashlib.sha256(padded.translate(_INNER_PAD)),
        hashlib.sha256(padded.translate(_OUTER_PAD)),
    )


# --- Parsing the signature's parts ------------------------------------------------


@dataclass(slots=True)
class _Signed:
    """The SigV4 parts of one request, from its Authorization header or its query."""

    algorithm: str
    credential: str
    signed_headers: bytes
    signature: bytes
    date: bytes
    date_is_http: bool
    token: bytes | None
    expires_seconds: int | None
    presigned: bool


_BOTOCORE_AUTHORIZATION = re.compile(
    rb"(\S+) Credential=([^,\s]+), SignedHeaders=([^,\s]+), Signature=([^,\s]+)"
)
"""The Authorization header as every AWS SDK writes it: parsed in one match."""


def _from_header(authorization: bytes, headers: dict[bytes, bytes]) -> _Signed:
    match = _BOTOCORE_AUTHORIZATION.fullmatch(authorization)
    if match is not None:
        algorithm, credential, signed_headers, signature = match.groups()
    else:
        words = authorization.replace(b",", b" ").split()
        parameters: dict[bytes, bytes] = {}
        for word in words[1:]:
            name, _, value = word.partition(b"=")
            parameters[name] = value
        algorithm = words[0] if words else b""
        credential = parameters.get(b"Credential", b"")
        signed_headers = parameters.get(b"SignedHeaders", b"")
        signature = parameters.get(b"Signature", b"")
    date = headers.get(b"x-amz-date")
    return _Signed(
        algorithm=algorithm.decode("latin-1"),
        credential=_text(credential),
        signed_headers=signed_headers,
        signature=signature,
        date=date if date is not None else headers.get(b"date", b""),
        date_is_http=date is None,
        token=headers.get(b"x-amz-security-token"),
        expires_seconds=None,
        presigned=False,
    )


def _from_query(query: bytes, headers: dict[bytes, bytes]) -> _Signed:
    parameters: dict[bytes, bytes] = {}
    for pair in query.split(b"&"):
        name, _, value = pair.partition(b"=")
        parameters.setdefault(_unquote(name), _unquote(value))
    token = parameters.get(b"X-Amz-Security-Token", headers.get(b"x-amz-security-token"))
    return _Signed(
        algorithm=_text(parameters.get(b"X-Amz-Algorithm", b"")),
        credential=_text(parameters.get(b"X-Amz-Credential", b"")),
        signed_headers=parameters.get(b"X-Amz-SignedHeaders", b""),
        signature=parameters.get(b"X-Amz-Signature", b""),
        date=parameters.get(b"X-Amz-Date", b""),
        date_is_http=False,
        token=token,
        expires_seconds=_expires(parameters.get(b"X-Amz-Expires")),
        presigned=True,
    )


def _expires(value: bytes | None) -> int | None:
    if value is None:
        return None
    text = _text(value)
    if not (text.isascii() and text.isdigit()):
        raise IncompleteSignatureException(
            f"X-Amz-Expires must be a non-negative integer number of seconds, not '{text}'."
        )
    seconds = int(text)
    maximum = limits.SIGV4_PRESIGNED_EXPIRES_MAX_SECONDS
    if seconds > maximum:
        raise IncompleteSignatureException(
            f"X-Amz-Expires must be less than a week (in seconds); that is, "
            f"the given X-Amz-Expires must be less than {maximum} seconds"
        )
    return seconds


def _check_scope(credential: str, date_text: str) -> tuple[str, str, str, str]:
    """The credential's (access key id, day, region, service), or DynamoDB's error."""
    trimmed = credential.rstrip("/")
    parts = trimmed.split("/")
    if len(parts) != 5:
        raise _credential_parts(trimmed)
    access_key_id, day, region, service, terminator = parts
    problems = ""
    if not REGION_PATTERN.fullmatch(region):
        problems += f"Credential should be scoped to a valid region, not '{region}'. "
    if service != SERVICE:
        problems += f"Credential should be scoped to correct service: '{SERVICE}'. "
    if terminator != TERMINATOR:
        problems += (
            f"Credential should be scoped with a valid terminator: '{TERMINATOR}', "
            f"not '{terminator}'. "
        )
    if day != date_text[:8]:
        problems += (
            "Date in Credential scope does not match YYYYMMDD from ISO-8601 version of date "
            f"from HTTP: '{day}' != '{date_text[:8]}', from '{date_text}'. "
        )
    if problems:
        raise InvalidSignatureException(problems)
    return access_key_id, day, region, service


def _check_token(key: AccessKey, token: bytes | None) -> None:
    expected = key.session_token
    if expected is None:
        if token is not None:
            raise UnrecognizedClientException()
        return
    if token is None or not hmac.compare_digest(token, expected.encode("utf-8")):
        raise UnrecognizedClientException()


# --- Dates ---------------------------------------------------------------------------


def _parse_basic_date(text: bytes) -> int:
    """Epoch seconds of ``YYYYMMDDTHHMMSSZ``."""
    if (
        len(text) != 16
        or text[8:9] != b"T"
        or text[15:16] != b"Z"
        or not (text[:8] + text[9:15]).isdigit()
    ):
        raise _bad_date(_text(text))
    try:
        moment = datetime(  # checks the ranges (month 13, February 30, hour 24...)
            int(text[0:4]),
            int(text[4:6]),
            int(text[6:8]),
            int(text[9:11]),
            int(text[11:13]),
            int(text[13:15]),
        )
    except ValueError:
        raise _bad_date(_text(text)) from None
    return calendar.timegm(moment.timetuple())


def _parse_http_date(text: bytes) -> int:
    """Epoch seconds of an RFC 1123 ``Date`` header."""
    parsed = parsedate_tz(_text(text))
    if parsed is None:
        raise _bad_date(_text(text))
    try:
        return calendar.timegm(parsed[:6] + (0, 0, 0)) - (parsed[9] or 0)
    except (ValueError, OverflowError):
        raise _bad_date(_text(text)) from None


def _basic(epoch: int) -> str:
    return time.strftime("%Y%m%dT%H%M%SZ", time.gmtime(epoch))


def _duration(seconds: int) -> str:
    return f"{seconds // 60} min" if seconds % 60 == 0 else f"{seconds} sec"


# --- The canonical request ---------------------------------------------------------


def _canonical_head(
    method: bytes, path: bytes, names: list[bytes], headers: dict[bytes, bytes]
) -> tuple[bytes, bytes]:
    """``method\\nURI`` and ``headers\\nsigned names``: the parts around the query."""
    if names != sorted(names) or len(set(names)) != len(names):
        names = sorted(set(names))
    get = headers.get
    lines = b"".join([b"%s:%s\n" % (name, b" ".join(get(name, b"").split())) for name in names])
    uri = b"/" if path == b"/" or not path else _canonical_uri(path)
    return method.upper() + b"\n" + uri, lines + b"\n" + b";".join(names)


def _canonical_uri(path: bytes) -> bytes:
    """Dot segments and empty segments removed, then percent-encoded (again)."""
    segments: list[bytes] = []
    for segment in path.split(b"/"):
        if segment == b".." and segments:
            segments.pop()
        elif segment and segment not in (b".", b".."):
            segments.append(segment)
    normalized = b"/".join(segments)
    if path.startswith(b"/"):
        normalized = b"/" + normalized
    if path.endswith(b"/") and segments:
        normalized += b"/"
    return quote_from_bytes(normalized or b"/", safe="/~").encode("ascii")


def _query_candidates(query: bytes, presigned: bool) -> list[bytes]:
    if not query:
        return [b""]
    pairs = [pair.partition(b"=") for pair in query.split(b"&")]
    if presigned:
        pairs = [pair for pair in pairs if _unquote(pair[0]) != b"X-Amz-Signature"]
    encoded = sorted(
        (_aws_quote(_unquote(name)), _aws_quote(_unquote(value))) for name, _, value in pairs
    )
    raw = sorted((name, value) for name, _, value in pairs)
    candidates = [b"&".join(name + b"=" + value for name, value in encoded)]
    if raw != encoded:
        candidates.append(b"&".join(name + b"=" + value for name, value in raw))
    return candidates


def _payload_candidates(headers: dict[bytes, bytes], body: bytes, presigned: bool) -> list[bytes]:
    declared = headers.get(b"x-amz-content-sha256")
    if declared is not None:
        if (
            declared != UNSIGNED_PAYLOAD
            and declared.lower() != hashlib.sha256(body).hexdigest().encode()
        ):
            raise InvalidSignatureException(SIGNATURE_MISMATCH)
        return [declared]
    body_hash = hashlib.sha256(body).hexdigest().encode()
    if not presigned:
        return [body_hash]
    # botocore's query signer empties the request's body before it hashes it,
    # so a presigned URL whose body is sent anyway was signed over no body:
    # like UNSIGNED-PAYLOAD, the URL then does not cover the body.
    return [body_hash, UNSIGNED_PAYLOAD, EMPTY_PAYLOAD_HASH]


def _aws_quote(value: bytes) -> bytes:
    return quote_from_bytes(value, safe="-_.~").encode("ascii")


def _unquote(value: bytes) -> bytes:
    if b"%" not in value and b"+" not in value:
        return value
    return unquote_to_bytes(value.replace(b"+", b" "))


def _text(value: bytes) -> str:
    return value.decode("utf-8", "replace")
