"""The console's Replicas page (issue 20) in headless Chromium: a regional
table made global from the page, the replicas with their status, the lag
of what is still queued, overwrites seen (last writer wins), pause and
resume of a region, and opening the table in another region. Skipped
without Playwright or chromium, as tests/console/test_browser.py is."""

from __future__ import annotations

from collections.abc import Iterator
from typing import Any

import pytest

from tests.console.conftest import Console
from tests.console.test_browser import seeded, ui

__all__ = ["seeded", "ui"]  # fixtures, shared with test_browser.py (browser is conftest's)

TABLE = "ledger"


@pytest.fixture()
def ledger(embedded: Any) -> Iterator[dict[str, Any]]:
    clients = {region: embedded.client(region_name=region) for region in ("us-east-1", "us-west-2")}
    clients["us-east-1"].create_table(
        TableName=TABLE, BillingMode="PAY_PER_REQUEST", KeySchema=[{"AttributeName": "id", "KeyType": "HASH"}],
        AttributeDefinitions=[{"AttributeName": "id", "AttributeType": "S"}])
    yield clients
    embedded.admin("POST", "/_dynastore/replication", {"resume": "us-west-2"})
    for source, target in (("us-east-1", "us-west-2"), ("us-west-2", "us-east-1")):
        embedded.admin("POST", "/_dynastore/replication",
                       {"lag_ms": None, "from": source, "to": target})
    for client in reversed(list(clients.values())):  # the replica first: its source waits for it to go
        try:
            client.delete_table(TableName=TABLE)
        except client.exceptions.ResourceNotFoundException:
            pass


def cell(page: Any, region: str, role: str) -> str:
    return str(page.locator(f"#replicas-grid tr[data-region='{region}'] td[data-role='{role}']").inner_text())


def test_the_replicas_page_shows_lag_overwrites_and_partitions(
    ui: Console, embedded: Any, ledger: dict[str, Any]
) -> None:
    page = ui.open(f"/t/{TABLE}/replicas")
    page.locator("#replicas-regional", has_text="regional table").wait_for()
    page.fill("#replica-region", "us-west-2")
    page.click("#replica-add")
    page.locator("#replicas-grid tr[data-region='us-west-2']").wait_for()
    assert "eventual consistency" in page.inner_text("#replicas-facts")
    for source, target in (("us-east-1", "us-west-2"), ("us-west-2", "us-east-1")):
        embedded.admin("POST", "/_dynastore/replication",
                       {"lag_ms": 60000, "from": source, "to": target})
    east, west = ledger["us-east-1"], ledger["us-west-2"]
    east.put_item(TableName=TABLE, Item={"id": {"S": "balance"}, "n": {"N": "70"}})
    embedded.advance_clock(0.01)
    west.put_item(TableName=TABLE, Item={"id": {"S": "balance"}, "n": {"N": "50"}})
    page.click("#replicas-refresh")
    page.locator("#replicas-grid tr[data-region='us-west-2'] td[data-role='lag']", has_text=" s").wait_for()
    ui.shot("replicas-lagging")
    embedded.advance_clock(61)
    page.click("#replicas-refresh")
    page.locator("#replicas-grid tr[data-region='us-west-2'] td[data-role='lag']", has_text="caught up").wait_for()
    assert cell(page, "us-east-1", "overwrites") == "1"  # us-east-1's write of 70 was overwritten by the later 50
    assert east.get_item(TableName=TABLE, Key={"id": {"S": "balance"}})["Item"]["n"] == {"N": "50"}
    page.click("#replicas-grid tr[data-region='us-west-2'] button:text-is('Pause')")
    page.locator("#replicas-grid tr[data-region='us-west-2'] .pill", has_text="paused").wait_for()
    page.click("#replicas-grid tr[data-region='us-west-2'] button:text-is('Resume')")
    page.locator("#replicas-grid tr[data-region='us-west-2'] button:text-is('Pause')").wait_for()
    ui.assert_fits()
    page.click("#replicas-grid tr[data-region='us-west-2'] button:text-is('Open there')")
    page.locator("#replicas-grid tr[data-region='us-east-1']").wait_for()
    assert page.input_value("#region-select") == "us-west-2"
    page.evaluate("sessionStorage.setItem('dynastore.region', 'us-east-1')")
