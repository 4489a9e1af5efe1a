"""The console's Redis page in headless Chromium: keys by pattern and type, the
value viewer, the command editor, hot keys (against a real server process)."""

from __future__ import annotations

import os
import shutil
import time
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import pytest

from tests.redis.conftest import Served, start_dynastore

sync_api = pytest.importorskip("playwright.sync_api")
CHROMIUM = os.environ.get("DYNASTORE_CHROMIUM", "/usr/bin/chromium")
CHROMIUM_ARGS = ["--headless", "--no-sandbox", "--disable-gpu", "--no-first-run"]
if not shutil.which(CHROMIUM) and not Path(CHROMIUM).exists():
    if os.environ.get("CI") == "true":
        raise RuntimeError(f"no chromium at {CHROMIUM}: .ci/run should have installed it")
    pytest.skip(f"no chromium at {CHROMIUM}", allow_module_level=True)


def until(condition: Any, timeout_s: float = 10.0) -> None:
    """Poll a page condition (the page's CSP forbids wait_for_function's eval)."""
    deadline = time.monotonic() + timeout_s
    while not condition():
        if time.monotonic() > deadline:
            raise AssertionError("the page never got there")
        time.sleep(0.05)


@pytest.fixture(scope="module")
def server() -> Iterator[Served]:
    served = start_dynastore("--in-memory")
    yield served
    served.stop()


@pytest.fixture(scope="module")
def page(server: Served) -> Iterator[Any]:
    with sync_api.sync_playwright() as playwright:
        browser = playwright.chromium.launch(executable_path=CHROMIUM, args=CHROMIUM_ARGS)
        context = browser.new_context(viewport={"width": 1280, "height": 800})
        opened = context.new_page()
        opened.set_default_timeout(10_000)
        errors: list[str] = []
        opened.on("pageerror", lambda error: errors.append(str(error)))
        yield opened
        browser.close()
        assert errors == []


def test_the_redis_page_lists_views_and_edits_keys(server: Served, page: Any) -> None:
    r = server.client()
    r.hset("session:1", mapping={"user": "ada", "cart": "3"})
    r.expire("session:1", 1800)
    r.zadd("leaderboard", {"ada": 10, "bob": 7})
    r.set("counter", 5)
    for _ in range(20):
        r.incr("counter")
    page.goto(f"http://127.0.0.1:{server.http_port}/console#/redis")
    page.wait_for_selector("#redis-keys table")
    keys = page.inner_text("#redis-keys")
    assert "session:1" in keys and "leaderboard" in keys and "counter" in keys
    page.fill("#redis-pattern", "session:*")
    page.click("text=Find")
    until(lambda: "leaderboard" not in page.inner_text("#redis-keys"))
    page.click("#redis-keys >> text=session:1")
    page.wait_for_selector("#redis-value table")
    value = page.inner_text("#redis-value").lower()
    assert "ada" in value and "hash" in value and "listpack" in value
    page.fill("#redis-value textarea", "HSET session:1 cart 4\nEXPIRE session:1 60")
    page.click("#redis-value button.primary")
    until(lambda: "EXPIRE" in page.inner_text(".redis-output"))
    assert r.hget("session:1", "cart") == b"4"
    assert 0 < r.ttl("session:1") <= 60
    assert "counter" in page.inner_text("#redis-hot-keys")
    r.close()
