"""SigV4 verification against botocore's own signer.

Each request is signed by botocore (``SigV4Auth`` / ``SigV4QueryAuth``, the
signer every boto3 client uses) at a frozen time, turned into what the
server's HTTP parser hands over (method, raw target, lower-cased header dict,
raw body) and given to ``SignatureVerifier`` with an injected wall clock.
Errors are asserted by class, HTTP status and DynamoDB's exact message.
"""

from __future__ import annotations

import calendar
import datetime
import hashlib
from typing import Any, NamedTuple
from unittest import mock
from urllib.parse import urlsplit

import botocore.auth
import pytest
from botocore.auth import SigV4Auth, SigV4QueryAuth
from botocore.awsrequest import AWSRequest
from botocore.credentials import Credentials
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from dynastore import limits
from dynastore.errors import (
    DynamoDBError,
    IncompleteSignatureException,
    InvalidSignatureException,
    MissingAuthenticationTokenException,
    UnrecognizedClientException,
)
from dynastore.protocol.credentials import AccessKey
from dynastore.protocol.sigv4 import (
    HOST_NOT_SIGNED,
    SIGNATURE_MISMATCH,
    Caller,
    SignatureVerifier,
    credential_scope_region,
)

SIGNED_AT = datetime.datetime(2026, 1, 1, 12, 0, 0)
SIGNED_EPOCH = calendar.timegm(SIGNED_AT.timetuple())
DATE = "20260101T120000Z"
ENDPOINT = "http://localhost:8000"
GET_ITEM = b'{"TableName":"orders","Key":{"pk":{"S":"customer#1"},"sk":{"S":"order#0001"}}}'

KEY = AccessKey("AKIDEXAMPLE", "wJalrXUtnFEMI/K7MDENG+bPxRfiCYEXAMPLEKEY", "123456789012")
TEMPORARY = AccessKey(
    "ASIATEMPORARY", "temporary/secret", session_token="FwoGZXIvYXdzEXAMPLE//token="
)
READER = AccessKey("AKIDREADER", "reader-secret", readonly=True)
KEYS = {key.access_key_id: key for key in (KEY, TEMPORARY, READER)}


class Wire(NamedTuple):
    """A request as the server's HTTP parser gives it to the verifier."""

    method: bytes
    url: bytes
    headers: dict[bytes, bytes]
    body: bytes


@pytest.fixture(autouse=True)
def frozen_signer(monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setattr(botocore.auth, "get_current_datetime", lambda: SIGNED_AT)


def verifier(now: float = SIGNED_EPOCH, keys: dict[str, AccessKey] = KEYS) -> SignatureVerifier:
    return SignatureVerifier(keys, wall_clock=lambda: now)


def sign(
    body: bytes = GET_ITEM,
    *,
    key: AccessKey = KEY,
    secret: str | None = None,
    token: str | None = None,
    region: str = "us-west-2",
    service: str = "dynamodb",
    url: str = ENDPOINT + "/",
    params: dict[str, str] | None = None,
    headers: dict[str, str] | None = None,
    presign_expires: int | None = None,
    context: dict[str, Any] | None = None,
    target: str = "DynamoDB_20120810.GetItem",
) -> Wire:
    request = AWSRequest(
        "POST",
        url,
        params=params or {},
        data=body,
        headers={
            "Content-Type": "application/x-amz-json-1.0",
            "X-Amz-Target": target,
            **(headers or {}),
        },
    )
    request.context.update(context or {})
    credentials = Credentials(
        key.access_key_id,
        secret if secret is not None else key.secret_access_key,
        token if token is not None else key.session_token,
    )
    if presign_expires is None:
        SigV4Auth(credentials, service, region).add_auth(request)
    else:
        SigV4QueryAuth(credentials, service, region, expires=presign_expires).add_auth(request)
    return to_wire(request)


def to_wire(request: AWSRequest) -> Wire:
    prepared = request.prepare()
    parts = urlsplit(prepared.url)
    target = parts.path.encode() + (b"?" + parts.query.encode() if parts.query else b"")
    headers = {
        name.lower().encode(): value if isinstance(value, bytes) else value.encode()
        for name, value in prepared.headers.items()
    }
    headers.setdefault(b"host", parts.netloc.encode())  # the HTTP client adds it
    body = prepared.body or b""
    return Wire(
        prepared.method.encode(),
        target,
        headers,
        body if isinstance(body, bytes) else body.encode(),
    )


def with_header(wire: Wire, name: bytes, value: bytes | None) -> Wire:
    headers = dict(wire.headers)
    if value is None:
        headers.pop(name, None)
    else:
        headers[name] = value
    return wire._replace(headers=headers)


def refused(
    wire: Wire, error: type[DynamoDBError], message: str, now: float = SIGNED_EPOCH
) -> None:
    with pytest.raises(error) as caught:
        verifier(now).verify(*wire)
    assert type(caught.value) is error
    assert caught.value.status == 400
    assert caught.value.message == message


# --- Accepted ------------------------------------------------------------------------


def test_a_signed_request_is_accepted_with_its_caller() -> None:
    caller = verifier().verify(*sign())
    assert caller == Caller(KEY, "us-west-2", "dynamodb")
    assert caller.key.account_id == "123456789012"


def test_the_region_comes_from_the_credential_scope() -> None:
    assert verifier().verify(*sign(region="eu-central-1")).region == "eu-central-1"


def test_dynamodb_streams_requests_are_signed_for_dynamodb() -> None:
    wire = sign(b'{"StreamArn":"arn"}', target="DynamoDBStreams_20120810.DescribeStream")
    assert verifier().verify(*wire).service == "dynamodb"


def test_an_empty_body_is_accepted() -> None:
    assert verifier().verify(*sign(b"")).key == KEY


def test_a_changed_unsigned_header_is_still_accepted() -> None:
    wire = sign(headers={"User-Agent": "Boto3/1.43"})
    assert b"user-agent" not in wire.headers[b"authorization"]
    assert verifier().verify(*with_header(wire, b"user-agent", b"curl/8")).key == KEY
    assert verifier().verify(*with_header(wire, b"x-extra", b"anything")).key == KEY


def test_signed_header_values_are_trimmed_and_inner_whitespace_collapsed() -> None:
    wire = sign(headers={"X-Custom": "  a   b  c "})
    assert verifier().verify(*with_header(wire, b"x-custom", b"a b c")).key == KEY


def test_an_authorization_header_without_spaces_after_the_commas() -> None:
    wire = sign()
    compact = wire.headers[b"authorization"].replace(b", ", b",")
    assert verifier().verify(*with_header(wire, b"authorization", compact)).key == KEY


def test_a_date_header_instead_of_x_amz_date() -> None:
    wire = sign(headers={"Date": "placeholder"})  # botocore rewrites it as RFC 1123
    assert b"x-amz-date" not in wire.headers
    assert wire.headers[b"date"] == b"Thu, 01 Jan 2026 12:00:00 -0000"
    assert verifier().verify(*wire).key == KEY


def test_unsigned_payload_declared_in_x_amz_content_sha256() -> None:
    wire = sign(url="https://localhost:8000/", context={"payload_signing_enabled": False})
    assert wire.headers[b"x-amz-content-sha256"] == b"UNSIGNED-PAYLOAD"
    assert verifier().verify(*wire._replace(body=b"{}")).key == KEY


def test_a_declared_payload_hash_must_match_the_body() -> None:
    body_hash = hashlib.sha256(GET_ITEM).hexdigest()
    wire = sign(headers={"X-Amz-Content-SHA256": body_hash})
    assert verifier().verify(*wire).key == KEY
    refused(wire._replace(body=b"{}"), InvalidSignatureException, SIGNATURE_MISMATCH)


@pytest.mark.parametrize(
    "path",
    [
        "/",
        "/p%20q/c%2Fd/./e/../f~g",
        "//double//slashes//",
        "/%E2%9C%93/unicode",
        "/a/b/../../..",
    ],
)
def test_paths_needing_encoding(path: str) -> None:
    assert verifier().verify(*sign(url=ENDPOINT + path)).key == KEY


def test_query_parameters_given_as_params() -> None:
    wire = sign(params={"x": "1 2", "a": "b+c/\u00e9", "empty": "", "~-_.": "*"})
    assert b"?" in wire.url
    assert verifier().verify(*wire).key == KEY


def test_a_query_string_written_in_the_url() -> None:
    wire = sign(url=ENDPOINT + "/?z=1&a=b%20c&a=a&plus=x+y")
    assert verifier().verify(*wire).key == KEY


def test_a_tampered_query_string_is_refused() -> None:
    wire = sign(params={"x": "1"})
    refused(
        wire._replace(url=wire.url.replace(b"x=1", b"x=2")),
        InvalidSignatureException,
        SIGNATURE_MISMATCH,
    )


# --- Signature mismatches ------------------------------------------------------------


def test_a_tampered_body_is_refused() -> None:
    wire = sign()
    refused(
        wire._replace(body=wire.body.replace(b"0001", b"0002")),
        InvalidSignatureException,
        SIGNATURE_MISMATCH,
    )


def test_a_tampered_signed_header_is_refused() -> None:
    wire = sign()
    tampered = with_header(wire, b"x-amz-target", b"DynamoDB_20120810.DeleteItem")
    refused(tampered, InvalidSignatureException, SIGNATURE_MISMATCH)


def test_a_removed_signed_header_is_refused() -> None:
    refused(
        with_header(sign(), b"content-type", None), InvalidSignatureException, SIGNATURE_MISMATCH
    )


def test_another_method_or_path_is_refused() -> None:
    wire = sign()
    refused(wire._replace(method=b"PUT"), InvalidSignatureException, SIGNATURE_MISMATCH)
    refused(wire._replace(url=b"/other"), InvalidSignatureException, SIGNATURE_MISMATCH)


def test_a_wrong_secret_is_refused() -> None:
    refused(sign(secret="not-the-secret"), InvalidSignatureException, SIGNATURE_MISMATCH)


def test_a_tampered_signature_is_refused() -> None:
    wire = sign()
    authorization = wire.headers[b"authorization"]
    for signature in (
        authorization[:-1] + b"0" if authorization[-1:] != b"0" else authorization[:-1] + b"1",
        authorization.split(b"Signature=")[0] + b"Signature=zz",
    ):
        refused(
            with_header(wire, b"authorization", signature),
            InvalidSignatureException,
            SIGNATURE_MISMATCH,
        )


# --- Who signed -----------------------------------------------------------------------


def test_an_unknown_access_key_is_refused() -> None:
    stranger = AccessKey("AKIDSTRANGER", "whatever")
    refused(
        sign(key=stranger),
        UnrecognizedClientException,
        "The security token included in the request is invalid.",
    )


def test_a_session_token_that_matches() -> None:
    wire = sign(key=TEMPORARY)
    assert wire.headers[b"x-amz-security-token"] == TEMPORARY.session_token.encode()  # type: ignore[union-attr]
    assert verifier().verify(*wire).key == TEMPORARY


@pytest.mark.parametrize(
    "key, token",
    [
        (TEMPORARY, "FwoGZXIvYXdzEXAMPLE//other="),  # wrong (and signed: the signature holds)
        (KEY, "a-token-for-a-permanent-key"),  # unexpected
    ],
)
def test_a_wrong_or_unexpected_session_token_is_refused(key: AccessKey, token: str) -> None:
    refused(
        sign(key=key, token=token),
        UnrecognizedClientException,
        "The security token included in the request is invalid.",
    )


def test_a_missing_session_token_is_refused() -> None:
    request_without_token = sign(
        key=AccessKey(TEMPORARY.access_key_id, TEMPORARY.secret_access_key)
    )
    assert b"x-amz-security-token" not in request_without_token.headers
    refused(
        request_without_token,
        UnrecognizedClientException,
        "The security token included in the request is invalid.",
    )


# --- Time -----------------------------------------------------------------------------


def test_fifteen_minutes_either_way_is_accepted() -> None:
    wire = sign()
    assert verifier(SIGNED_EPOCH + 900).verify(*wire).key == KEY
    assert verifier(SIGNED_EPOCH - 900).verify(*wire).key == KEY


def test_an_expired_signature() -> None:
    refused(
        sign(),
        InvalidSignatureException,
        "Signature expired: 20260101T120000Z is now earlier than 20260101T120001Z "
        "(20260101T121501Z - 15 min.)",
        now=SIGNED_EPOCH + 901,
    )


def test_a_signature_from_the_future() -> None:
    refused(
        sign(),
        InvalidSignatureException,
        "Signature not yet current: 20260101T120000Z is still later than 20260101T115959Z "
        "(20260101T114459Z + 15 min.)",
        now=SIGNED_EPOCH - 901,
    )


def test_the_time_is_checked_before_the_key() -> None:
    stranger = sign(key=AccessKey("AKIDSTRANGER", "x"))
    with pytest.raises(InvalidSignatureException, match="^Signature expired"):
        verifier(SIGNED_EPOCH + 3600).verify(*stranger)


@pytest.mark.parametrize(
    "date", [b"2026-01-01T12:00:00Z", b"20260101T120000", b"20261301T120000Z", b"x"]
)
def test_a_malformed_x_amz_date(date: bytes) -> None:
    refused(
        with_header(sign(), b"x-amz-date", date),
        IncompleteSignatureException,
        f"Date must be in ISO-8601 'basic format'. Got '{date.decode()}'. "
        "See http://en.wikipedia.org/wiki/ISO_8601",
    )


# --- The Authorization header's parts ------------------------------------------------


def test_missing_authorization() -> None:
    refused(
        with_header(sign(), b"authorization", None),
        MissingAuthenticationTokenException,
        "Request is missing Authentication Token",
    )


def test_missing_signature_parameter_is_the_presence_check() -> None:
    wire = sign()
    authorization = wire.headers[b"authorization"].split(b", Signature=")[0]
    with pytest.raises(
        IncompleteSignatureException, match="^Authorization header requires 'Signature' parameter. "
    ):
        verifier().verify(*with_header(wire, b"authorization", authorization))


def _edit_authorization(wire: Wire, old: bytes, new: bytes) -> Wire:
    authorization = wire.headers[b"authorization"]
    assert old in authorization
    return with_header(wire, b"authorization", authorization.replace(old, new))


def test_host_must_be_signed() -> None:
    wire = _edit_authorization(sign(), b"content-type;host;", b"content-type;")
    refused(wire, InvalidSignatureException, HOST_NOT_SIGNED)


def test_an_unsupported_algorithm() -> None:
    wire = _edit_authorization(sign(), b"AWS4-HMAC-SHA256", b"AWS4-HMAC-SHA512")
    refused(
        wire,
        IncompleteSignatureException,
        "Unsupported AWS 'algorithm': 'AWS4-HMAC-SHA512' (only AWS4-HMAC-SHA256 for now). ",
    )


def test_a_credential_without_five_parts() -> None:
    wire = _edit_authorization(
        sign(), b"/us-west-2/dynamodb/aws4_request", b"/us-west-2/aws4_request//"
    )
    refused(
        wire,
        IncompleteSignatureException,
        "Credential must have exactly 5 slash-delimited elements, e.g. keyid/date/region/service/term, "
        "got 'AKIDEXAMPLE/20260101/us-west-2/aws4_request'",
    )


def test_a_credential_scoped_to_another_service() -> None:
    refused(
        sign(service="s3"),
        InvalidSignatureException,
        "Credential should be scoped to correct service: 'dynamodb'. ",
    )


def test_a_scope_date_that_is_not_the_request_date() -> None:
    wire = _edit_authorization(sign(), b"/20260101/", b"/20251231/")
    refused(
        wire,
        InvalidSignatureException,
        "Date in Credential scope does not match YYYYMMDD from ISO-8601 version of date from HTTP: "
        "'20251231' != '20260101', from '20260101T120000Z'. ",
    )


def test_every_scope_problem_in_one_message() -> None:
    wire = _edit_authorization(sign(), b"/20260101/us-west-2/dynamodb/aws4_request", b"/b/c_d/s3/e")
    refused(
        wire,
        InvalidSignatureException,
        "Credential should be scoped to a valid region, not 'c_d'. "
        "Credential should be scoped to correct service: 'dynamodb'. "
        "Credential should be scoped with a valid terminator: 'aws4_request', not 'e'. "
        "Date in Credential scope does not match YYYYMMDD from ISO-8601 version of date from HTTP: "
        "'b' != '20260101', from '20260101T120000Z'. ",
    )


# --- Presigned requests ---------------------------------------------------------------


def test_a_presigned_request_is_accepted() -> None:
    wire = sign(b"", presign_expires=300)
    assert b"authorization" not in wire.headers
    assert b"X-Amz-Signature=" in wire.url
    assert verifier(SIGNED_EPOCH + 300).verify(*wire) == Caller(KEY, "us-west-2", "dynamodb")


def test_a_presigned_request_with_an_unsigned_payload() -> None:
    wire = sign(
        b"",
        presign_expires=60,
        url="https://localhost:8000/",
        context={"payload_signing_enabled": False},
    )
    assert verifier().verify(*wire._replace(body=GET_ITEM)).key == KEY


def test_a_presigned_url_does_not_cover_the_body() -> None:
    """botocore's query signer empties the body before hashing it, so the
    body sent with its URL was never signed (as with UNSIGNED-PAYLOAD)."""
    wire = sign(b"", presign_expires=60)
    assert verifier().verify(*wire._replace(body=GET_ITEM)).key == KEY


def test_an_expired_presigned_request() -> None:
    refused(
        sign(b"", presign_expires=300),
        InvalidSignatureException,
        "Signature expired: 20260101T120000Z is now earlier than 20260101T120001Z "
        "(20260101T120501Z - 5 min.)",
        now=SIGNED_EPOCH + 301,
    )


def test_a_presigned_request_may_live_longer_than_fifteen_minutes() -> None:
    assert verifier(SIGNED_EPOCH + 3600).verify(*sign(b"", presign_expires=3600)).key == KEY


def test_a_presigned_request_with_its_session_token() -> None:
    wire = sign(b"", key=TEMPORARY, presign_expires=60)
    assert b"X-Amz-Security-Token=" in wire.url
    assert verifier().verify(*wire).key == TEMPORARY
    wrong = sign(b"", key=TEMPORARY, token="other", presign_expires=60)
    refused(
        wrong, UnrecognizedClientException, "The security token included in the request is invalid."
    )


def test_a_tampered_presigned_signature() -> None:
    wire = sign(b"", presign_expires=60)
    url = wire.url[:-1] + (b"0" if wire.url[-1:] != b"0" else b"1")
    refused(wire._replace(url=url), InvalidSignatureException, SIGNATURE_MISMATCH)


def test_presigned_expires_must_be_a_number_up_to_a_week() -> None:
    wire = sign(b"", presign_expires=60)
    with pytest.raises(IncompleteSignatureException):
        verifier().verify(
            *wire._replace(url=wire.url.replace(b"X-Amz-Expires=60", b"X-Amz-Expires=soon"))
        )
    with pytest.raises(IncompleteSignatureException, match="less than a week"):
        verifier().verify(
            *wire._replace(url=wire.url.replace(b"X-Amz-Expires=60", b"X-Amz-Expires=604801"))
        )


def test_both_query_and_header_signatures() -> None:
    wire = sign(b"", presign_expires=60)
    both = with_header(wire, b"authorization", sign().headers[b"authorization"])
    refused(
        both,
        InvalidSignatureException,
        "Found both 'X-Amz-Algorithm' as a query-string param and 'Authorization' as HTTP header.",
    )


# --- The signing-key cache ------------------------------------------------------------


def test_the_signing_key_cache_is_bounded(monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setattr(limits, "SIGV4_SIGNING_KEY_CACHE_ENTRIES", 3)
    checker = verifier()
    regions = [f"region-{number}" for number in range(10)]
    for region in regions + regions:
        assert checker.verify(*sign(region=region)).region == region
        assert checker.signing_keys_cached <= 3
    assert checker.signing_keys_cached == 3


def test_a_cached_signing_key_follows_a_changed_secret() -> None:
    keys = dict(KEYS)
    checker = SignatureVerifier(keys, wall_clock=lambda: SIGNED_EPOCH)
    assert checker.verify(*sign()).key == KEY
    rotated = AccessKey(KEY.access_key_id, "rotated-secret", KEY.account_id)
    keys[KEY.access_key_id] = rotated
    with pytest.raises(InvalidSignatureException):
        checker.verify(*sign())
    assert checker.verify(*sign(key=rotated)).key == rotated


# --- credential_scope_region ----------------------------------------------------------


def test_region_from_the_authorization_header() -> None:
    assert (
        credential_scope_region(sign(region="ap-south-1").headers[b"authorization"], b"")
        == "ap-south-1"
    )
    compact = b"AWS4-HMAC-SHA256 Credential=AK/20260101/us-west-2/dynamodb/aws4_request,SignedHeaders=host,Signature=0"
    assert credential_scope_region(compact, b"") == "us-west-2"


def test_region_from_the_query_string() -> None:
    wire = sign(b"", region="sa-east-1", presign_expires=60)
    assert credential_scope_region(None, wire.url.partition(b"?")[2]) == "sa-east-1"
    assert (
        credential_scope_region(
            None, b"X-Amz-Credential=AK/20260101/eu-west-3/dynamodb/aws4_request"
        )
        == "eu-west-3"
    )


@pytest.mark.parametrize(
    "authorization, query",
    [
        (None, b""),
        (b"", b""),
        (b"AWS4-HMAC-SHA256 Signature=0", b""),
        (b"AWS4-HMAC-SHA256 Credential=AK/20260101/us-west-2/dynamodb", b""),
        (b"AWS4-HMAC-SHA256 Credential=AK/20260101//dynamodb/aws4_request", b""),
        (b"AWS4-HMAC-SHA256 Credential=AK/20260101/../../x/dynamodb/aws4_request", b""),
        (b"AWS4-HMAC-SHA256 Credential=AK/20260101/us west/dynamodb/aws4_request", b""),
        (None, b"NotX-Amz-Credential=AK%2F20260101%2Fus-west-2%2Fdynamodb%2Faws4_request"),
        (None, b"X-Amz-Credential=%ZZ"),
        (None, b"\xff\xfe"),
    ],
)
def test_region_absent_or_malformed(authorization: bytes | None, query: bytes) -> None:
    assert credential_scope_region(authorization, query) is None


# --- Robustness -----------------------------------------------------------------------


def _sign_at_the_frozen_time(body: bytes = GET_ITEM, **options: Any) -> Wire:
    """For module-level samples, signed before the autouse fixture applies."""
    with mock.patch.object(botocore.auth, "get_current_datetime", lambda: SIGNED_AT):
        return sign(body, **options)


_SIGNED = _sign_at_the_frozen_time()
_HEADER_NAMES = [*_SIGNED.headers, b"x-amz-security-token", b"x-amz-content-sha256", b"date"]
_FRAGMENTS = st.sampled_from(
    [
        b"",
        b" ",
        b",",
        b"=",
        b"/",
        b"AWS4-HMAC-SHA256",
        b"Credential=",
        b"SignedHeaders=",
        b"Signature=",
        b"host",
        b"20260101T120000Z",
        b"aws4_request",
        b"\xff",
        b"%",
        b"\x00",
        b";",
    ]
)
_VALUES = st.one_of(st.binary(max_size=64), st.lists(_FRAGMENTS, max_size=12).map(b"".join))


@settings(max_examples=300, deadline=None, suppress_health_check=[HealthCheck.too_slow])
@given(
    changes=st.dictionaries(
        st.sampled_from(_HEADER_NAMES), st.one_of(st.none(), _VALUES), max_size=4
    ),
    url=st.one_of(st.just(_SIGNED.url), _VALUES.map(lambda value: b"/?" + value)),
    cut=st.integers(min_value=0, max_value=300),
)
def test_mutated_requests_raise_only_dynamodb_errors(
    changes: dict[bytes, bytes | None], url: bytes, cut: int
) -> None:
    headers = dict(_SIGNED.headers)
    for name, value in changes.items():
        if value is None:
            headers.pop(name, None)
        else:
            headers[name] = value
    if cut and b"authorization" in headers:
        headers[b"authorization"] = headers[b"authorization"][:cut]
    try:
        caller = verifier().verify(_SIGNED.method, url, headers, _SIGNED.body)
    except DynamoDBError as error:
        assert error.status == 400
        assert isinstance(error.message, str)
        error.message.encode("utf-8")  # serialisable: no lone surrogates
    else:
        assert caller.key == KEY


_PRESIGNED = _sign_at_the_frozen_time(b"", key=TEMPORARY, presign_expires=60)


def test_the_unmutated_samples_verify() -> None:
    assert verifier().verify(*_SIGNED).key == KEY
    assert verifier().verify(*_PRESIGNED).key == TEMPORARY


_QUERY_PARTS = _PRESIGNED.url.partition(b"?")[2].split(b"&")


@settings(max_examples=300, deadline=None, suppress_health_check=[HealthCheck.too_slow])
@given(
    edits=st.lists(
        st.tuples(
            st.integers(min_value=0, max_value=len(_QUERY_PARTS) - 1), st.one_of(st.none(), _VALUES)
        ),
        max_size=4,
    ),
    authorization=st.one_of(st.none(), _VALUES),
)
def test_mutated_presigned_requests_raise_only_dynamodb_errors(
    edits: list[tuple[int, bytes | None]], authorization: bytes | None
) -> None:
    parts: list[bytes | None] = list(_QUERY_PARTS)
    for index, value in edits:
        if value is None:
            parts[index] = None
        else:
            name = (parts[index] or b"X-Amz-Date=").partition(b"=")[0]
            parts[index] = name + b"=" + value
    url = b"/?" + b"&".join(part for part in parts if part is not None)
    headers = dict(_PRESIGNED.headers)
    if authorization is not None:
        headers[b"authorization"] = authorization
    try:
        caller = verifier().verify(_PRESIGNED.method, url, headers, _PRESIGNED.body)
    except DynamoDBError as error:
        assert error.status == 400
        error.message.encode("utf-8")  # type: ignore[union-attr]
    else:
        assert caller.key == TEMPORARY


@settings(max_examples=300, deadline=None)
@given(authorization=st.one_of(st.none(), _VALUES), query=_VALUES)
def test_credential_scope_region_never_raises(authorization: bytes | None, query: bytes) -> None:
    region = credential_scope_region(authorization, query)
    assert region is None or (region.isascii() and 0 < len(region) <= 64)


@settings(max_examples=50, deadline=None)
@given(region=st.from_regex(r"[A-Za-z0-9-]{1,64}", fullmatch=True))
def test_credential_scope_region_agrees_with_the_verified_caller(region: str) -> None:
    wire = sign(region=region)
    assert credential_scope_region(wire.headers[b"authorization"], b"") == region
    assert verifier().verify(*wire).region == region
