"""The dynastore console: a web UI for any DynamoDB-compatible endpoint.

The console is a static single-page app (plain HTML/CSS/ES modules under
``static/``, no build step, nothing fetched from the internet) plus a small
JSON proxy: the page POSTs ``/console/api/<Operation>`` with the operation's
request body and the proxy forwards it, unchanged, as a DynamoDB API call.
The console therefore talks to the database only through the DynamoDB API.

    ConsoleApp(api)             # a request handler for /console and /console/*
    with_console(handler)       # a handler answering /console/* and delegating the rest
    run_console(endpoint_url)   # serve the console alone (blocks)
    start_console(endpoint_url) # the same from a background thread (tests, notebooks)
"""

from typing import Any

from dynastore.console.app import CONSOLE_PATH, ConsoleApp, with_console
from dynastore.console.proxy import HttpForwarder, InProcessForwarder


def __getattr__(name: str) -> Any:
    """The standalone server (http.server and friends) is imported on first
    use: `dynastore serve` mounts the console in-process and never needs it."""
    if name in ("ConsoleServer", "run_console", "start_console"):
        from dynastore.console import standalone

        return getattr(standalone, name)
    raise AttributeError(f"module 'dynastore.console' has no attribute {name!r}")


__all__ = [
    "CONSOLE_PATH",
    "ConsoleApp",
    "ConsoleServer",
    "HttpForwarder",
    "InProcessForwarder",
    "run_console",
    "start_console",
    "with_console",
]
