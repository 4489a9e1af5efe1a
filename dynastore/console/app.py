"""ConsoleApp: answers GET /console (the page and its static files) and
POST /console/api/<Operation> (the JSON proxy to a DynamoDB endpoint).

It speaks the server's request-handler shape (``handle(method, url, headers,
body) -> (status, content type, body, extra header lines)``, see
dynastore.protocol.app.RequestHandler) without importing the protocol
package: the console only ever reaches the database through the DynamoDB API.

Safety: the console listens on 127.0.0.1 by default, but a web page the user
visits could still make the browser POST to it. The proxy therefore requires
the ``X-Dynastore-Console`` header (a custom header makes a cross-site request
need a CORS preflight, which the console never grants) and, when the browser
sends ``Origin``, that it names the same host the request was sent to.

Regions and signing in (docs/console.md): without ``require_signature`` the
page names its region in the ``X-Dynastore-Region`` header and the forwarder
signs (or, in-process, scopes) the call for that region. With it (``dynastore
serve --credentials``) the page signs every request itself with the user's
key, SigV4 over the request the server verifies — ``POST /`` for an API call,
the admin path for an admin route — and the proxy passes the signature
headers on unchanged, with the request's own ``Host``.
"""

from __future__ import annotations

import mimetypes
import re
from collections.abc import Callable
from pathlib import Path
from typing import Any, Protocol, cast
from urllib.parse import urlsplit

from dynastore import limits
from dynastore.console.proxy import Forwarder, HttpForwarder, InProcessForwarder, RegionalForwarder

CONSOLE_PATH = b"/console"
API_PREFIX = b"/console/api/"
EXPORT_FILES_PATH = b"/console/exports/files"
EXPORT_FILE_PATH = b"/console/exports/file"
"""A finished export's file list and one of its files (dynastore/console/exports_download.py)."""
ADMIN_PROXY_ROUTES: dict[bytes, tuple[bytes, str]] = {
    b"/console/admin/metrics": (b"GET", "/_dynastore/metrics"),
    b"/console/admin/throughput": (b"POST", "/_dynastore/throughput"),
    b"/console/admin/identity": (b"GET", "/_dynastore/identity"),
    # The DAX card (views/dax.js): the endpoint's cache figures and the flush (docs/dax.md).
    b"/console/admin/dax": (b"GET", "/_dynastore/dax"),
    b"/console/admin/dax/flush": (b"POST", "/_dynastore/dax/flush"),
    # The Import / Export page's progress: exports in progress, every import
    # with its errors, backups and restores being made (docs/admin.md).
    b"/console/admin/exports/jobs": (b"GET", "/_dynastore/exports/jobs"),
    b"/console/admin/backups/imports": (b"GET", "/_dynastore/backups/imports"),
    b"/console/admin/backups/jobs": (b"GET", "/_dynastore/backups/jobs"),
    # The Redis page: overview, keys, and commands run as a client (dynastore/redis/admin.py).
    b"/console/admin/redis": (b"GET", "/_dynastore/redis"),
    b"/console/admin/redis/keys": (b"POST", "/_dynastore/redis/keys"),
    b"/console/admin/redis/command": (b"POST", "/_dynastore/redis/command"),
    # The Replicas page: replication's figures, and pause / resume of a region.
    b"/console/admin/replication": (b"GET", "/_dynastore/replication"),
    b"/console/admin/replication/change": (b"POST", "/_dynastore/replication/change"),
}
"""Console routes forwarded to a dynastore endpoint's admin routes."""
STATIC_ROOT = Path(__file__).resolve().parent / "static"
CONSOLE_HEADER = b"x-dynastore-console"
REGION_HEADER = b"x-dynastore-region"
REGION_NAME = re.compile(rb"[a-z]{2}(?:-[a-z]+)+-\d{1,3}")
"""A region the page may pick (us-east-1, eu-west-2, us-gov-west-1, ...)."""
TARGET_PREFIX = b"DynamoDB_20120810."
SIGNATURE_HEADERS = (
    b"authorization", b"x-amz-date", b"x-amz-security-token", b"x-amz-content-sha256", b"host",
)
"""What a browser-signed request keeps on its way to the server (plus
``content-type`` and, for an API call, ``x-amz-target``); nothing else passes."""
OPERATION_NAME = re.compile(rb"^[A-Z][A-Za-z]{2,63}$")
MAX_PROXY_BODY_BYTES = limits.CONSOLE_PROXY_BODY_MAX_BYTES
"""A forwarded request body larger than DynamoDB's own 16 MB request limit is refused here."""
FILE_IMPORT_MAX_BYTES = limits.CONSOLE_FILE_IMPORT_MAX_BYTES
"""The largest file the Import / Export page imports from the browser (config.json
tells the page); anything bigger goes through ImportTable from a bucket."""

Reply = tuple[int, bytes, bytes, bytes]
JSON = b"application/json"
TEXT = b"text/plain; charset=utf-8"

SECURITY_HEADERS = (
    b"Cache-Control: no-store\r\n"
    b"X-Content-Type-Options: nosniff\r\n"
    b"Referrer-Policy: no-referrer\r\n"
    b"X-Frame-Options: DENY\r\n"
)
PAGE_HEADERS = SECURITY_HEADERS + (
    b"Content-Security-Policy: default-src 'self'; img-src 'self' data:; style-src 'self'; "
    b"script-src 'self'; connect-src 'self'; object-src 'none'; frame-ancestors 'none'; "
    b"base-uri 'none'; form-action 'none'\r\n"
)
CONTENT_TYPES = {
    ".html": b"text/html; charset=utf-8",
    ".css": b"text/css; charset=utf-8",
    ".js": b"text/javascript; charset=utf-8",
    ".svg": b"image/svg+xml",
    ".json": b"application/json",
    ".ico": b"image/x-icon",
}


class RequestHandler(Protocol):
    def handle(
        self, method: bytes, url: bytes, headers: dict[bytes, bytes], body: bytes
    ) -> Reply: ...


def _error(status: int, error_type: str, message: str) -> Reply:
    import json

    body = json.dumps({"__type": error_type, "message": message}).encode()
    return (status, JSON, body, SECURITY_HEADERS)


NOT_FOUND: Reply = (404, TEXT, b"Not found\n", SECURITY_HEADERS)


class ConsoleApp:
    """The console's request handler.

    ``api`` is where DynamoDB calls go: a URL string (``HttpForwarder``, SigV4
    signed), a request-handle function ``handle(method, url, headers, body)``
    (``InProcessForwarder``), or any ``forward(operation, body) -> (status,
    body)`` callable passed as ``forwarder=``.

    ``require_signature``: the server verifies every request (``dynastore serve
    --credentials``), so the page signs in and signs each call itself; the proxy
    forwards those signatures instead of making its own calls.
    """

    def __init__(
        self,
        api: str | HandleFunctionLike | None = None,
        *,
        forwarder: Forwarder | None = None,
        region: str | None = None,
        require_signature: bool = False,
        static_root: Path = STATIC_ROOT,
        files_location: str | None = None,
        buckets: Any | None = None,
    ) -> None:
        if forwarder is None:
            if isinstance(api, str):
                forwarder = HttpForwarder(api, region)
            elif api is not None:
                forwarder = InProcessForwarder(api, region or "us-east-1")
            else:
                raise TypeError("ConsoleApp needs an endpoint URL, a handle function or a forwarder")
        self.forward = forwarder
        self.endpoint_url = api if isinstance(api, str) else None
        self.region = getattr(forwarder, "region", None) or region
        self.require_signature = require_signature
        self.static_root = static_root
        self.buckets = buckets
        """The server's buckets (dynastore.backups.buckets.Buckets) when the console is
        mounted by ``dynastore serve``: a finished export's files can then be downloaded."""
        self.files_location = files_location or (buckets.describe() if buckets is not None else None)
        self._files = _static_files(static_root)

    def handles(self, url: bytes) -> bool:
        """True when ``url`` belongs to the console (``/console`` or below)."""
        path = url.split(b"?", 1)[0]
        return path == CONSOLE_PATH or path.startswith(CONSOLE_PATH + b"/")

    def handle(self, method: bytes, url: bytes, headers: dict[bytes, bytes], body: bytes) -> Reply:
        """The reply to one request under /console; never raises."""
        path = url.split(b"?", 1)[0]
        try:
            if path.startswith(API_PREFIX):
                if method != b"POST":
                    return _error(405, "MethodNotAllowed", "the console API takes POST")
                return self._proxy(path[len(API_PREFIX):], headers, body)
            if path in ADMIN_PROXY_ROUTES:
                return self._admin(method, path, headers, body)
            if path in (EXPORT_FILES_PATH, EXPORT_FILE_PATH):
                return self._export_download(method, url, headers, body)
            if method not in (b"GET", b"HEAD"):
                return _error(405, "MethodNotAllowed", "static files take GET")
            return self._static(path, method == b"HEAD")
        except Exception as error:  # a console bug must not take the server down
            return _error(500, "com.dynastore.console#InternalError", f"{type(error).__name__}: {error}")

    # --- the proxy --------------------------------------------------------------
    def _proxy(self, operation: bytes, headers: dict[bytes, bytes], body: bytes) -> Reply:
        refusal = _refuse_cross_site(headers)
        if refusal is not None:
            return refusal
        if not OPERATION_NAME.match(operation):
            return _error(400, "com.dynastore.console#BadOperation", "not an operation name")
        if len(body) > MAX_PROXY_BODY_BYTES:
            return _error(413, "RequestEntityTooLarge", "request body too large")
        if self.require_signature:
            if headers.get(b"x-amz-target") != TARGET_PREFIX + operation:
                return _error(400, "com.dynastore.console#BadOperation",
                              "X-Amz-Target does not name the operation of the URL")
            passed = _signature_headers(headers, b"x-amz-target")
            return self._signed(b"POST", b"/", passed, body)
        region, refusal = _region_of(headers)
        if refusal is not None:
            return refusal
        name = operation.decode("ascii")
        payload = body or b"{}"
        if region is None:  # a forwarder of one's own may take no region
            status, reply = self.forward(name, payload)
        else:
            status, reply = cast(RegionalForwarder, self.forward)(name, payload, region)
        return (status, JSON, reply, SECURITY_HEADERS)

    def _signed(self, method: bytes, path: bytes, headers: dict[bytes, bytes], body: bytes) -> Reply:
        signed = getattr(self.forward, "signed", None)
        if signed is None:
            return _error(501, "com.dynastore.console#NotAvailable",
                          "this forwarder cannot pass signed requests on")
        status, reply = signed(method, path, headers, body)
        return (status, JSON, reply, SECURITY_HEADERS)

    def _admin(self, method: bytes, path: bytes, headers: dict[bytes, bytes], body: bytes) -> Reply:
        """Capacity metrics and the throughput switch of a dynastore endpoint
        (docs/admin.md), for the Capacity page; same guard as the API proxy."""
        allowed_method, target = ADMIN_PROXY_ROUTES[path]
        if method != allowed_method:
            return _error(405, "MethodNotAllowed", f"this route takes {allowed_method.decode()}")
        refusal = _refuse_cross_site(headers)
        if refusal is not None:
            return refusal
        if len(body) > MAX_PROXY_BODY_BYTES:
            return _error(413, "RequestEntityTooLarge", "request body too large")
        if self.require_signature:
            return self._signed(method, target.encode(), _signature_headers(headers), body)
        region, refusal = _region_of(headers)
        if refusal is not None:
            return refusal
        admin = getattr(self.forward, "admin", None)
        if admin is None:
            return _error(404, "com.dynastore.console#NotAvailable", "no admin routes behind this forwarder")
        if region is None:
            status, reply = admin(method.decode(), target, body)
        else:
            status, reply = admin(method.decode(), target, body, region)
        return (status, JSON, reply, SECURITY_HEADERS)

    def _export_download(self, method: bytes, url: bytes, headers: dict[bytes, bytes], body: bytes) -> Reply:
        """A finished export's files: the page's DescribeExport call, forwarded as any
        call is, authorizes the download and names the files (exports_download.py)."""
        from urllib.parse import parse_qs

        from dynastore.console.exports_download import handle_export_download

        if method != b"POST":
            return _error(405, "MethodNotAllowed", "this route takes POST (a DescribeExport body)")
        refusal = _refuse_cross_site(headers)
        if refusal is not None:
            return refusal
        if len(body) > MAX_PROXY_BODY_BYTES:
            return _error(413, "RequestEntityTooLarge", "request body too large")
        path, _, query = url.partition(b"?")
        key: str | None = None
        if path == EXPORT_FILE_PATH:
            keys = parse_qs(query.decode("utf-8", "replace")).get("key") or []
            if len(keys) != 1:
                return _error(400, "com.dynastore.console#BadKey", "name one file: ?key=<object key>")
            key = keys[0]
        describe: Callable[[bytes], tuple[int, bytes]]
        if self.require_signature:
            if headers.get(b"x-amz-target") != TARGET_PREFIX + b"DescribeExport":
                return _error(400, "com.dynastore.console#BadOperation",
                              "a download is authorized by a signed DescribeExport call")
            signed = getattr(self.forward, "signed", None)
            if signed is None:
                return _error(501, "com.dynastore.console#NotAvailable",
                              "this forwarder cannot pass signed requests on")
            passed = _signature_headers(headers, b"x-amz-target")

            def describe(payload: bytes) -> tuple[int, bytes]:
                return cast(tuple[int, bytes], signed(b"POST", b"/", passed, payload))
        else:
            region, refusal = _region_of(headers)
            if refusal is not None:
                return refusal

            def describe(payload: bytes) -> tuple[int, bytes]:
                if region is None:
                    return self.forward("DescribeExport", payload)
                return cast(RegionalForwarder, self.forward)("DescribeExport", payload, region)
        return handle_export_download(self.buckets, describe, body or b"{}", key)

    # --- static files -------------------------------------------------------------
    def _static(self, path: bytes, head_only: bool) -> Reply:
        relative = path[len(CONSOLE_PATH):].lstrip(b"/").decode("utf-8", "replace")
        if relative == "config.json":
            return self._config()
        file = self._files.get(relative or "index.html")
        if file is None:
            return NOT_FOUND
        content = b"" if head_only else file.read_bytes()
        content_type = CONTENT_TYPES.get(file.suffix) or _guess_type(file)
        return (200, content_type, content, PAGE_HEADERS)

    def _config(self) -> Reply:
        """What the page needs to know about its endpoint (for code snippets and the
        header); ``endpoint`` is null when the console is served by the database itself;
        ``signin`` says the page must sign in and sign its requests; ``buckets`` says
        where the server keeps export and import buckets (``folders under DIR`` or
        ``S3 at URL``), null when the console does not know."""
        import json

        config = {
            "endpoint": self.endpoint_url, "region": self.region, "signin": self.require_signature,
            "buckets": self.files_location, "fileImportMaxBytes": FILE_IMPORT_MAX_BYTES,
        }
        body = json.dumps(config).encode()
        return (200, JSON, body, SECURITY_HEADERS)


HandleFunctionLike = Callable[[bytes, bytes, dict[bytes, bytes], bytes], Reply]


def _guess_type(file: Path) -> bytes:
    guessed, _ = mimetypes.guess_type(file.name)
    return (guessed or "application/octet-stream").encode()


def _static_files(root: Path) -> dict[str, Path]:
    """Every file under ``root`` by its relative URL path: a request can only
    name one of these, so no path it sends can escape the directory."""
    return {
        file.relative_to(root).as_posix(): file
        for file in sorted(root.rglob("*"))
        if file.is_file() and not file.name.startswith(".")
    }


def _refuse_cross_site(headers: dict[bytes, bytes]) -> Reply | None:
    if headers.get(CONSOLE_HEADER) != b"1":
        return _error(403, "com.dynastore.console#Forbidden", "missing X-Dynastore-Console header")
    origin = headers.get(b"origin")
    if origin is not None and origin != b"null":
        origin_host = urlsplit(origin.decode("latin-1")).netloc.lower()
        if origin_host != headers.get(b"host", b"").decode("latin-1").lower():
            return _error(403, "com.dynastore.console#Forbidden", "cross-origin request refused")
    return None


def _region_of(headers: dict[bytes, bytes]) -> tuple[str | None, Reply | None]:
    """The region the page picked (``X-Dynastore-Region``), None when it names none."""
    region = headers.get(REGION_HEADER)
    if region is None or region == b"":
        return None, None
    if len(region) > 64 or not REGION_NAME.fullmatch(region):
        return None, _error(400, "com.dynastore.console#BadRegion",
                            "X-Dynastore-Region is not a region name such as us-east-1")
    return region.decode("ascii"), None


def _signature_headers(headers: dict[bytes, bytes], *extra: bytes) -> dict[bytes, bytes]:
    """The headers a browser-signed request keeps: the signature's, ``host`` and
    ``content-type``; the console's own and the browser's others stay here."""
    kept = (*SIGNATURE_HEADERS, b"content-type", *extra)
    return {name: headers[name] for name in kept if name in headers}


class _WithConsole:
    """A request handler answering /console itself and delegating everything else."""

    def __init__(self, inner: RequestHandler, console: ConsoleApp) -> None:
        self.inner = inner
        self.console = console

    def handle(self, method: bytes, url: bytes, headers: dict[bytes, bytes], body: bytes) -> Reply:
        if url.startswith(CONSOLE_PATH) and self.console.handles(url):
            return self.console.handle(method, url, headers, body)
        return self.inner.handle(method, url, headers, body)


def with_console(
    inner: RequestHandler, region: str | None = None, require_signature: bool = False,
    files_location: str | None = None, buckets: Any | None = None,
) -> RequestHandler:
    """``inner`` with the console mounted at /console, its proxy calling
    ``inner.handle`` in-process (one line for ``dynastore serve`` to add:
    ``server.application = with_console(server.application)``).
    ``require_signature``: the server verifies SigV4 (``--credentials``), so the
    page signs in and its signed requests are passed on unchanged.
    ``files_location``: where the server's buckets are (``Buckets.describe()``),
    shown beside an export's files; ``buckets``: the server's buckets themselves
    (``buckets_for(database)``), so a finished export's files can be downloaded."""
    console = ConsoleApp(inner.handle, region=region, require_signature=require_signature,
                         files_location=files_location, buckets=buckets)
    return _WithConsole(inner, console)
