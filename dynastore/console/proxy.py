"""Forwarders: how the console's proxy reaches a DynamoDB endpoint.

Both take an operation name and its JSON request body and return
``(status, body)`` exactly as the endpoint answered: the page sees
DynamoDB's own errors (``__type`` and ``message``).

- ``InProcessForwarder`` calls a request handler (``Application.handle`` or a
  wrapper around it) directly: used when ``dynastore serve`` mounts the console.
- ``HttpForwarder`` sends a SigV4-signed request over HTTP: used by
  ``dynastore console --endpoint URL``. Credentials come from botocore's
  usual chain (environment, ~/.aws, SSO, instance roles), so the console
  works against real DynamoDB; a local endpoint without credentials gets
  placeholder ones (dynastore and DynamoDB Local only check they are present).
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


class InProcessForwarder:
    """Calls a request handler in this process, as if the request came over HTTP."""

    def __init__(self, handle: HandleFunction, region: str = DEFAULT_REGION) -> None:
        self._handle = handle
        self.region = region

    def __call__(self, operation: str, body: bytes) -> tuple[int, bytes]:
        amz_date = time.strftime("%Y%m%dT%H%M%SZ", time.gmtime())
        scope = f"{PLACEHOLDER_ACCESS_KEY}/{amz_date[:8]}/{self.region}/dynamodb/aws4_request"
        headers = {
            b"content-type": JSON_1_0.encode(),
            b"x-amz-target": (TARGET_PREFIX + operation).encode(),
            b"x-amz-date": amz_date.encode(),
            b"authorization": (
                f"AWS4-HMAC-SHA256 Credential={scope}, "
                "SignedHeaders=content-type;host;x-amz-date;x-amz-target, Signature=0"
            ).encode(),
        }
        status, _content_type, reply, _extra = self._handle(b"POST", b"/", headers, body)
        return status, reply

    def admin(self, method: str, path: str, body: bytes = b"") -> tuple[int, bytes]:
        """A dynastore admin route (``/_dynastore/...``) of the same server."""
        headers = {b"content-type": b"application/json"}
        status, _content_type, reply, _extra = self._handle(method.encode(), path.encode(), headers, body)
        return status, reply


class HttpForwarder:
    """Sends each call to ``endpoint_url``, signed with SigV4."""

    def __init__(self, endpoint_url: str, region: str | None = None) -> None:
        self.endpoint_url = endpoint_url.rstrip("/") + "/"
        self._session = _botocore_session()
        self.region = region or _region_for(endpoint_url, self._session)

    def __call__(self, operation: str, body: bytes) -> tuple[int, bytes]:
        return self._send(self.endpoint_url, body, self._signed_headers(operation, body), "POST")

    def admin(self, method: str, path: str, body: bytes = b"") -> tuple[int, bytes]:
        """A dynastore admin route of the endpoint; another DynamoDB endpoint
        answers 404, which the console shows as "not available here"."""
        return self._send(
            self.endpoint_url.rstrip("/") + path, body or None,
            {"Content-Type": "application/json"}, method,
        )

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

    def _signed_headers(self, operation: str, body: bytes) -> dict[str, str]:
        from botocore.auth import SigV4Auth
        from botocore.awsrequest import AWSRequest

        request = AWSRequest(
            method="POST",
            url=self.endpoint_url,
            data=body,
            headers={"Content-Type": JSON_1_0, "X-Amz-Target": TARGET_PREFIX + operation},
        )
        SigV4Auth(self._credentials(), "dynamodb", self.region).add_auth(request)
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
