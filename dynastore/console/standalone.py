"""Serving the console alone, in front of any DynamoDB endpoint.

A ``ThreadingHTTPServer`` is enough: the console is not a hot path, and a
thread per request lets a slow remote call (a Scan page from real DynamoDB)
leave the page's other requests free.
"""

from __future__ import annotations

import threading
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer
from typing import Any

from dynastore.console.app import ConsoleApp

DEFAULT_HOST = "127.0.0.1"
DEFAULT_PORT = 8001
MAX_REQUEST_BODY_BYTES = 16 * 1024 * 1024


def _handler_class(app: ConsoleApp) -> type[BaseHTTPRequestHandler]:
    class ConsoleRequestHandler(BaseHTTPRequestHandler):
        server_version = "dynastore-console"
        protocol_version = "HTTP/1.1"

        def do_GET(self) -> None:  # noqa: N802 - http.server's naming
            if self.path in ("/", ""):
                self._send(302, b"text/plain", b"", b"Location: /console/\r\n")
                return
            self._answer(b"")

        def do_HEAD(self) -> None:  # noqa: N802
            self._answer(b"")

        def do_POST(self) -> None:  # noqa: N802
            length = int(self.headers.get("Content-Length") or 0)
            if length > MAX_REQUEST_BODY_BYTES:
                self._send(413, b"text/plain", b"request body too large\n", b"")
                self.close_connection = True
                return
            self._answer(self.rfile.read(length) if length else b"")

        def _answer(self, body: bytes) -> None:
            headers = {
                name.lower().encode("latin-1"): value.encode("latin-1")
                for name, value in self.headers.items()
            }
            status, content_type, reply, extra = app.handle(
                self.command.encode(), self.path.encode("latin-1"), headers, body
            )
            if self.command == "HEAD":
                reply = b""
            self._send(status, content_type, reply, extra)

        def _send(self, status: int, content_type: bytes, body: bytes, extra: bytes) -> None:
            self.send_response(status)
            self.send_header("Content-Type", content_type.decode("latin-1"))
            self.send_header("Content-Length", str(len(body)))
            for line in extra.decode("latin-1").split("\r\n"):
                if line:
                    name, _, value = line.partition(":")
                    self.send_header(name.strip(), value.strip())
            try:
                self.end_headers()
                self.wfile.write(body)
            except (BrokenPipeError, ConnectionResetError):
                # The tab went away mid-answer (a page polling a job's progress was
                # closed): nothing to answer any more, and nothing wrong.
                self.close_connection = True

        def log_message(self, format: str, *args: Any) -> None:  # noqa: A002
            return  # quiet: the terminal shows the URL line only

    return ConsoleRequestHandler


class ConsoleServer:
    """The console served from a background thread; ``stop()`` ends it."""

    def __init__(self, app: ConsoleApp, host: str = DEFAULT_HOST, port: int = 0) -> None:
        self.app = app
        self.httpd = ThreadingHTTPServer((host, port), _handler_class(app))
        self.httpd.daemon_threads = True
        self.host, self.port = self.httpd.server_address[:2]
        self._thread = threading.Thread(
            target=self.httpd.serve_forever, name="dynastore-console", daemon=True
        )
        self._thread.start()

    @property
    def url(self) -> str:
        host = f"[{self.host}]" if ":" in str(self.host) else self.host
        return f"http://{host}:{self.port}/console/"

    def stop(self) -> None:
        self.httpd.shutdown()
        self.httpd.server_close()
        self._thread.join(timeout=10)

    def __enter__(self) -> ConsoleServer:
        return self

    def __exit__(self, *_: object) -> None:
        self.stop()


def start_console(
    endpoint_url: str, host: str = DEFAULT_HOST, port: int = 0, region: str | None = None
) -> ConsoleServer:
    """Serve the console for ``endpoint_url`` from a background thread."""
    return ConsoleServer(ConsoleApp(endpoint_url, region=region), host, port)


def run_console(
    endpoint_url: str, host: str = DEFAULT_HOST, port: int = DEFAULT_PORT, region: str | None = None
) -> None:
    """Serve the console for ``endpoint_url`` until interrupted (Ctrl-C)."""
    app = ConsoleApp(endpoint_url, region=region)
    httpd = ThreadingHTTPServer((host, port), _handler_class(app))
    httpd.daemon_threads = True
    bound_host, bound_port = httpd.server_address[:2]
    shown = f"[{bound_host}]" if ":" in str(bound_host) else bound_host
    print(f"dynastore console for {endpoint_url} on http://{shown}:{bound_port}/console/", flush=True)
    try:
        httpd.serve_forever()
    except KeyboardInterrupt:
        pass
    finally:
        httpd.server_close()
