"""Forwarders: how the console's proxy reaches a DynamoDB endpoint.

Both take an operation name and its JSON request body and return
``(status, body)`` exactly as the endpoint answered: the page sees
DynamoDB's own errors (``__type`` and ``message``).

- ``InProcessForwarder`` calls a request handler (``Application.handle`` or a
  wrapper around it) directly: used when ``dynastore serve`` mounts the console.
  Its requests carry an unsigned SigV4 header whose credential scope names the
  region (the server picks the tables of that region from it).
- ``HttpForwarder`` sends a SigV4-signed request over HTTP: used by
  ``dynastore console --endpoint URL``. Credentials come from botocore's
  usual chain (environment, ~/.aws, SSO, instance roles), so the console
  works against real DynamoDB; a local endpoint without credentials gets
  placeholder ones (dynastore and DynamoDB Local only check they are present).

Both take ``region=`` per call (the region the page picked) and offer
``signed(method, path, headers, body)``: a request the browser signed itself
(the console's sign-in mode), passed on with its headers unchanged.
"""

from __future__ import annotations

import re
import time
from collections.abc import Callable
from typing import Any
from urllib.parse import urlsplit

from dynastore import limits

TARGET_PREFIX = "DynamoDB_20120810."
JSON_1_0 = "application/x-amz-json-1.0"
DEFAULT_REGION = "us-east-1"
PLACEHOLDER_ACCESS_KEY = "dynastore-console"
PLACEHOLDER_SECRET_KEY = "dynastore-console"
REMOTE_TIMEOUT_SECONDS = limits.CONSOLE_REMOTE_TIMEOUT_SECONDS
"""How long a forwarded call may take; a Scan page of 1 MB takes far less."""

REGION_IN_HOST = re.compile(r"dynamodb(?:-fips)?\.([a-z0-9-]+)\.amazonaws\.com")

HandleFunction = Callable[[bytes, bytes, dict[bytes, bytes], bytes], tuple[int, bytes, bytes, bytes]]
Forwarder = Callable[[str, bytes], tuple[int, bytes]]
RegionalForwarder = Callable[[str, bytes, str], tuple[int, bytes]]
"""A forwarder taking the region of the call (both forwarders here do)."""


class InProcessForwarder:
    """Calls a request handler in this process, as if the request came over HTTP."""

    def __init__(self, handle: HandleFunction, region: str = DEFAULT_REGION) -> None:
        self._handle = handle
        self.region = region

    def __call__(self, operation: str, body: bytes, region: str | None = None) -> tuple[int, bytes]:
        headers = _unsigned_headers(region or self.region)
        headers[b"content-type"] = JSON_1_0.encode()
        headers[b"x-amz-target"] = (TARGET_PREFIX + operation).encode()
        status, _content_type, reply, _extra = self._handle(b"POST", b"/", headers, body)
        return status, reply

    def admin(
        self, method: str, path: str, body: bytes = b"", region: str | None = None
    ) -> tuple[int, bytes]:
        """A dynastore admin route (``/_dynastore/...``) of the same server."""
        headers = _unsigned_headers(region or self.region)
        headers[b"content-type"] = b"application/json"
        status, _content_type, reply, _extra = self._handle(method.encode(), path.encode(), headers, body)
        return status, reply

    def signed(
        self, method: bytes, path: bytes, headers: dict[bytes, bytes], body: bytes
    ) -> tuple[int, bytes]:
        """A request the browser signed: handed to the server exactly as given."""
        status, _content_type, reply, _extra = self._handle(method, path, headers, body)
        return status, reply


def _unsigned_headers(region: str) -> dict[bytes, bytes]:
    """A well-formed SigV4 header with no real signature: enough for a server that
    checks credentials only for presence, and its scope names the region."""
    amz_date = time.strftime("%Y%m%dT%H%M%SZ", time.gmtime())
    scope = f"{PLACEHOLDER_ACCESS_KEY}/{amz_date[:8]}/{region}/dynamodb/aws4_request"
    return {
        b"x-amz-date": amz_date.encode(),
        b"authorization": (
            f"AWS4-HMAC-SHA256 Credential={scope}, "
            "SignedHeaders=content-type;host;x-amz-date;x-amz-target, Signature=0"
        ).encode(),
    }


class HttpForwarder:
    """Sends each call to ``endpoint_url``, signed with SigV4."""

    def __init__(self, endpoint_url: str, region: str | None = None) -> None:
        self.endpoint_url = endpoint_url.rstrip("/") + "/"
        self._session = _botocore_session()
        self.region = region or _region_for(endpoint_url, self._session)
        match = REGION_IN_HOST.search(urlsplit(self.endpoint_url).hostname or "")
        self._host_region = match.group(1) if match else None

    def __call__(self, operation: str, body: bytes, region: str | None = None) -> tuple[int, bytes]:
        headers = {"Content-Type": JSON_1_0, "X-Amz-Target": TARGET_PREFIX + operation}
        url = self._url_for(region)
        return self._send(url, body, self._sign(url, "POST", headers, body, region), "POST")

    def admin(
        self, method: str, path: str, body: bytes = b"", region: str | None = None
    ) -> tuple[int, bytes]:
        """A dynastore admin route of the endpoint, signed like an API call; another
        DynamoDB endpoint answers 404, which the console shows as "not available here"."""
        url = self._url_for(region).rstrip("/") + path
        headers = self._sign(url, method, {"Content-Type": "application/json"}, body, region)
        return self._send(url, body or None, headers, method)

    def signed(
        self, method: bytes, path: bytes, headers: dict[bytes, bytes], body: bytes
    ) -> tuple[int, bytes]:
        """A request the browser signed, sent on with its headers (``Host`` included)."""
        sent = {name.decode("latin-1"): value.decode("latin-1") for name, value in headers.items()}
        url = self.endpoint_url.rstrip("/") + path.decode("latin-1")
        return self._send(url, body or None, sent, method.decode("ascii"))

    def _send(
        self, url: str, body: bytes | None, headers: dict[str, str], method: str
    ) -> tuple[int, bytes]:
        # urllib (http.client, email, ...) only where a remote endpoint is used:
        # `dynastore serve` mounts the console in-process and never sends with it.
        import urllib.error
        import urllib.request

        request = urllib.request.Request(url, data=body, headers=headers, method=method)
        try:
            with urllib.request.urlopen(request, timeout=REMOTE_TIMEOUT_SECONDS) as response:
                return response.status, response.read()
        except urllib.error.HTTPError as error:
            with error:
                return error.code, error.read()
        except (urllib.error.URLError, TimeoutError, OSError) as error:
            reason = getattr(error, "reason", error)
            message = f"Cannot reach {self.endpoint_url}: {reason}"
            return 502, _error_body("com.dynastore.console#EndpointUnreachable", message)

    def _url_for(self, region: str | None) -> str:
        """The endpoint for ``region``: an AWS endpoint (``dynamodb.<region>.amazonaws.com``)
        answers for its own region only, so another region means another host."""
        if region is None or self._host_region is None or region == self._host_region:
            return self.endpoint_url
        return self.endpoint_url.replace(f".{self._host_region}.amazonaws.com", f".{region}.amazonaws.com", 1)

    def _sign(
        self, url: str, method: str, headers: dict[str, str], body: bytes, region: str | None
    ) -> dict[str, str]:
        from botocore.auth import SigV4Auth
        from botocore.awsrequest import AWSRequest

        request = AWSRequest(method=method, url=url, data=body, headers=headers)
        SigV4Auth(self._credentials(), "dynamodb", region or self.region).add_auth(request)
        return dict(request.headers.items())

    def _credentials(self) -> Any:
        from botocore.credentials import Credentials

        found = self._session.get_credentials() if self._session is not None else None
        if found is None:
            return Credentials(PLACEHOLDER_ACCESS_KEY, PLACEHOLDER_SECRET_KEY)
        return found.get_frozen_credentials()


def _botocore_session() -> Any:
    try:
        import botocore.session
    except ImportError as error:  # pragma: no cover - boto3 is a test dependency
        raise RuntimeError(
            "the console needs botocore to reach a remote endpoint: pip install 'dynastore[console]'"
        ) from error
    return botocore.session.get_session()


def _region_for(endpoint_url: str, session: Any) -> str:
    """The region in an AWS endpoint's host name, else the configured one."""
    match = REGION_IN_HOST.search(urlsplit(endpoint_url).hostname or "")
    if match:
        return match.group(1)
    configured = session.get_config_variable("region") if session is not None else None
    return configured or DEFAULT_REGION


def _error_body(error_type: str, message: str) -> bytes:
    import json

    return json.dumps({"__type": error_type, "message": message}).encode()
