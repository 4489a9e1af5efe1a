"""The console's DAX card in headless Chromium: on the table list of a
server serving DAX, with the caches' figures, and its Flush button.

Needs Playwright (pip) and Debian's chromium (apt); skipped when either is
missing, but in CI (CI=true) they must be there, as for tests/console/."""

from __future__ import annotations

import os
import shutil
from pathlib import Path
from typing import Any

import pytest

from tests.dax.conftest import DaxServerProcess, create_table, unique

REQUIRED = bool(os.environ.get("CI"))
if REQUIRED:
    import playwright.sync_api as sync_api
else:
    sync_api = pytest.importorskip("playwright.sync_api")

CHROMIUM = os.environ.get("DYNASTORE_CHROMIUM", "/usr/bin/chromium")
if not shutil.which(CHROMIUM) and not Path(CHROMIUM).exists():
    if REQUIRED:
        raise RuntimeError(f"no chromium at {CHROMIUM}: .ci/run should have installed it")
    pytest.skip(f"no chromium at {CHROMIUM}", allow_module_level=True)

CHROMIUM_ARGS = ["--headless", "--no-sandbox", "--disable-gpu", "--no-first-run",
                 "--disable-background-networking", "--disable-component-update", "--disable-sync"]


def test_the_dax_card_shows_the_caches_and_flushes_them(dax_server: DaxServerProcess, dax: Any, ddb: Any) -> None:
    name = create_table(ddb, sort_type=None)
    key = {"pk": {"S": unique()}}
    dax.put_item(TableName=name, Item={**key, "v": {"S": "x"}})
    dax.get_item(TableName=name, Key=key)
    errors: list[str] = []
    with sync_api.sync_playwright() as playwright:
        browser = playwright.chromium.launch(executable_path=CHROMIUM, args=CHROMIUM_ARGS)
        try:
            page = browser.new_page(viewport={"width": 1280, "height": 800})
            page.set_default_timeout(15_000)
            page.on("pageerror", lambda error: errors.append(str(error)))
            page.goto(f"{dax_server.endpoint}/console#/")
            page.locator("#dax-card").wait_for()
            assert page.locator("#dax-url").inner_text() == dax_server.dax_url
            item_row = page.locator("#dax-caches tr[data-cache='item'] td").all_inner_texts()
            assert int(item_row[0].replace(",", "")) >= 1  # entries
            assert int(item_row[2].replace(",", "")) >= 1  # hits
            page.click("#dax-flush")
            page.locator("text=Flushed").wait_for()
            # A locator's wait, not wait_for_function: the console's CSP
            # (script-src 'self') refuses the eval a string predicate needs.
            sync_api.expect(page.locator("#dax-caches tr[data-cache='item'] td").first).to_have_text("0")
        finally:
            browser.close()
    assert errors == []
    assert dax_server.admin("/_dynastore/dax")["itemCache"]["entries"] == 0
