"""Fixtures for the console's tests: a dynastore server on a background thread and
the console served in front of it over HTTP (the way ``dynastore console
--endpoint URL`` runs), plus seed data in single-table-design shape; for the
browser tests, ``dynastore serve`` processes (``ServedProcess``, the
``secured`` one with sign-in), headless Chromium (``browser``, after
``require_browser``) and its pages (``Console``, ``make_console``)."""

from __future__ import annotations

import json
import os
import re
import select
import shutil
import subprocess
import sys
import time
import urllib.request
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import pytest

import dynastore
from dynastore.console import ConsoleServer, start_console

BIG_NUMBER = "12345678901234567890123456789012345678"


@pytest.fixture(scope="module")
def embedded() -> Iterator[Any]:
    with dynastore.open() as database:
        yield database


@pytest.fixture(scope="module")
def endpoint(embedded: Any) -> str:
    return embedded.serve().endpoint_url


@pytest.fixture(scope="module")
def client(embedded: Any) -> Any:
    return embedded.client()


@pytest.fixture(scope="module")
def console(endpoint: str) -> Iterator[ConsoleServer]:
    server = start_console(endpoint)
    yield server
    server.stop()


def seed_single_table(client: Any, name: str = "app") -> None:
    """Users with orders under one partition each, and a singleton settings item."""
    client.create_table(
        TableName=name,
        KeySchema=[{"AttributeName": "PK", "KeyType": "HASH"}, {"AttributeName": "SK", "KeyType": "RANGE"}],
        AttributeDefinitions=[{"AttributeName": "PK", "AttributeType": "S"}, {"AttributeName": "SK", "AttributeType": "S"}],
        BillingMode="PAY_PER_REQUEST",
    )
    for user in range(1, 4):
        client.put_item(TableName=name, Item={
            "PK": {"S": f"USER#{user}"}, "SK": {"S": "PROFILE#"}, "name": {"S": f"User {user}"},
            "tags": {"SS": ["a", "b"]},
        })
        for order in range(1, 4):
            client.put_item(TableName=name, Item={
                "PK": {"S": f"USER#{user}"}, "SK": {"S": f"ORDER#2024-01-{order:02d}#{order:05d}"},
                "total": {"N": f"{order * 10}.5"}, "status": {"S": "SHIPPED" if order % 2 else "PENDING"},
            })
    client.put_item(TableName=name, Item={
        "PK": {"S": "SETTINGS#APP"}, "SK": {"S": "FLAGS#V1"}, "dark": {"BOOL": True},
        "schema_version": {"N": BIG_NUMBER}, "blob": {"B": b"\x00\x01hello"},
    })


def seed_numbers(client: Any, name: str = "numbers", count: int = 60) -> None:
    client.create_table(
        TableName=name,
        KeySchema=[{"AttributeName": "id", "KeyType": "HASH"}],
        AttributeDefinitions=[{"AttributeName": "id", "AttributeType": "N"}],
        BillingMode="PAY_PER_REQUEST",
    )
    for number in range(count):
        client.put_item(TableName=name, Item={"id": {"N": str(number)}, "v": {"S": "x" * (number % 5)}})


# --- dynastore serve in a subprocess (the browser tests) ---------------------------------

SERVE_COMMAND = [sys.executable, "-m", "dynastore"]
LISTEN_LINE = re.compile(r"listening on (http://127\.0\.0\.1:\d+)")
SECURED_KEYS = (
    "AKIDBROWSERADMIN:admin-secret-0123456789:111111111111:admin\n"
    "AKIDBROWSERREAD:read-secret-0123456789:111111111111:readonly\n"
)
ADMIN = ("AKIDBROWSERADMIN", "admin-secret-0123456789")
READER = ("AKIDBROWSERREAD", "read-secret-0123456789")


class ServedProcess:
    """``dynastore serve --in-memory --port 0 ARGUMENTS`` in a subprocess (its
    stderr in ``directory/stderr.log``), the console at ``url``."""

    def __init__(self, directory: Path, *arguments: str, environment: dict[str, str] | None = None,
                 key: tuple[str, str] = ("x", "x")) -> None:
        self.key = key
        self.log = directory / "stderr.log"
        with self.log.open("wb") as errors:
            self.process = subprocess.Popen(
                [*SERVE_COMMAND, "serve", "--in-memory", "--port", "0", *arguments],
                stdout=subprocess.PIPE, stderr=errors, cwd=directory,
                env=None if environment is None else {**os.environ, **environment},
            )
        self.endpoint = self._listen_url()
        self.url = f"{self.endpoint}/console/"

    def _listen_url(self) -> str:
        assert self.process.stdout is not None
        deadline = time.monotonic() + 20
        while time.monotonic() < deadline:
            ready, _, _ = select.select([self.process.stdout], [], [], 0.5)
            if ready:
                line = self.process.stdout.readline().decode()
                if not line:
                    break
                match = LISTEN_LINE.search(line)
                if match:
                    return match.group(1)
        self.stop()
        raise AssertionError(f"dynastore serve did not start: {self.log.read_text()}")

    def client(self, key: tuple[str, str] | None = None, region: str = "us-east-1") -> Any:
        import boto3

        key = key or self.key
        return boto3.client("dynamodb", endpoint_url=self.endpoint, region_name=region,
                            aws_access_key_id=key[0], aws_secret_access_key=key[1])

    def stop(self) -> None:
        if self.process.poll() is None:
            self.process.terminate()
            try:
                self.process.wait(timeout=10)
            except subprocess.TimeoutExpired:
                self.process.kill()
                self.process.wait()
        if self.process.stdout is not None:
            self.process.stdout.close()


@pytest.fixture(scope="module")
def secured(tmp_path_factory: pytest.TempPathFactory) -> Iterator[ServedProcess]:
    """``--credentials`` with an admin and a read-only key of one account;
    a table in each of two regions."""
    directory = tmp_path_factory.mktemp("secured")
    credentials = directory / "credentials"
    credentials.write_text(SECURED_KEYS)
    server = ServedProcess(directory, "--credentials", str(credentials), key=ADMIN)
    try:
        with urllib.request.urlopen(server.url + "config.json", timeout=10) as response:
            config = json.loads(response.read())
        assert config.get("signin") is True  # --credentials mounts the console with sign-in
        for region, table in (("us-east-1", "orders"), ("eu-west-1", "eu-only")):
            server.client(ADMIN, region).create_table(
                TableName=table, BillingMode="PAY_PER_REQUEST",
                KeySchema=[{"AttributeName": "id", "KeyType": "HASH"}],
                AttributeDefinitions=[{"AttributeName": "id", "AttributeType": "S"}])
        server.client(ADMIN).put_item(TableName="orders", Item={"id": {"S": "o-1"}, "total": {"N": "12.5"}})
        yield server
    finally:
        server.stop()


# --- headless Chromium ------------------------------------------------------------------

# On a developer machine a missing browser skips the browser tests; in CI
# (CI=true, where .ci/run installs Playwright and Debian's chromium) it fails
# them, so a broken install step cannot turn them into silent skips.
REQUIRED = bool(os.environ.get("CI"))
CHROMIUM = os.environ.get("DYNASTORE_CHROMIUM", "/usr/bin/chromium")
CHROMIUM_ARGS = [
    "--headless", "--no-sandbox", "--disable-gpu", "--disable-quic", "--no-first-run",
    "--disable-background-networking", "--disable-component-update", "--disable-sync",
]
SCREENSHOTS = Path(os.environ.get("DYNASTORE_CONSOLE_SCREENSHOTS", "/tmp/dynastore-console-screenshots"))
VIEWPORTS = {"1280x800": {"width": 1280, "height": 800}, "1920x1080": {"width": 1920, "height": 1080}}


def require_browser() -> Any:
    """Playwright's sync API; called at the top of a browser test module, it
    skips the module when Playwright or chromium is missing (fails it in CI)."""
    if REQUIRED:
        import playwright.sync_api as sync_api
    else:
        sync_api = pytest.importorskip("playwright.sync_api")
    if not shutil.which(CHROMIUM) and not Path(CHROMIUM).exists():
        if REQUIRED:
            raise RuntimeError(f"no chromium at {CHROMIUM}: .ci/run should have installed it")
        pytest.skip(f"no chromium at {CHROMIUM}", allow_module_level=True)
    return sync_api


@pytest.fixture(scope="module")
def browser() -> Iterator[Any]:
    sync_api = require_browser()
    with sync_api.sync_playwright() as playwright:
        launched = playwright.chromium.launch(executable_path=CHROMIUM, args=CHROMIUM_ARGS)
        yield launched
        launched.close()


class Console:
    """A page of the console plus the errors its scripts raised."""

    def __init__(self, page: Any, base_url: str, name: str) -> None:
        self.page = page
        self.base_url = base_url
        self.name = name
        self.errors: list[str] = []
        page.on("pageerror", lambda error: self.errors.append(str(error)))
        page.on("console", self._on_console)

    def _on_console(self, message: Any) -> None:
        # A DynamoDB error answer (e.g. ResourceNotFoundException) is a 4xx the page
        # handles; the browser still logs it. Anything else logged as an error counts.
        if message.type == "error" and "the server responded with a status of 4" not in message.text:
            self.errors.append(message.text)

    def open(self, hash_path: str) -> Any:
        self.page.goto(f"{self.base_url}#{hash_path}")
        self.page.wait_for_load_state("networkidle")
        return self.page

    def shot(self, label: str) -> Path:
        SCREENSHOTS.mkdir(parents=True, exist_ok=True)
        path = SCREENSHOTS / f"{self.name}-{label}.png"
        self.page.screenshot(path=str(path), full_page=False)
        return path

    def assert_fits(self) -> None:
        """Nothing wider than the window: the page itself never scrolls sideways."""
        overflow = self.page.evaluate("document.documentElement.scrollWidth - window.innerWidth")
        assert overflow <= 0, f"page is {overflow}px wider than the viewport"


def make_console(browser: Any, console: Any, request: Any, viewport: str = "1280x800", dark: bool = False) -> Iterator[Console]:
    context = browser.new_context(viewport=VIEWPORTS[viewport], color_scheme="dark" if dark else "light", accept_downloads=True)
    page = context.new_page()
    page.set_default_timeout(10_000)
    wrapper = Console(page, console.url, f"{request.node.name}-{viewport}{'-dark' if dark else ''}")
    yield wrapper
    context.close()
    assert wrapper.errors == []


@pytest.fixture()
def secured_ui(browser: Any, secured: ServedProcess, request: Any) -> Iterator[Console]:
    yield from make_console(browser, secured, request)


def sign_in(ui: Console, key: tuple[str, str], region: str | None = None) -> Any:
    page = ui.open("/")
    page.locator("#signin-form").wait_for()
    page.fill("#signin-key", key[0])
    page.fill("#signin-secret", key[1])
    if region:
        page.fill("#signin-region", region)
    page.click("#signin-submit")
    return page
