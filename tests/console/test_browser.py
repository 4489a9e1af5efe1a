"""The console in headless Chromium, against a real dynastore server: every flow
clicked through — create a table, browse and page, query, the single-table view and
key finder, the item editor (a set and a 38-digit number kept exactly, a conflicting
save refused with both versions shown), the expression builder, export, delete —
at 1280x800 and 1920x1080, light and dark. Screenshots land in
$DYNASTORE_CONSOLE_SCREENSHOTS (default /tmp/dynastore-console-screenshots).

Needs Playwright (pip) and Debian's chromium (apt); skipped when either is missing.
"""

from __future__ import annotations

import json
from collections.abc import Iterator
from pathlib import Path
from typing import Any
from urllib.parse import quote

import pytest

from tests.console.conftest import (
    ADMIN,
    BIG_NUMBER,
    READER,
    VIEWPORTS,
    Console,
    ServedProcess,
    make_console,
    require_browser,
    seed_numbers,
    seed_single_table,
    sign_in,
)

require_browser()  # skips this module without Playwright or chromium


@pytest.fixture(scope="module")
def seeded(client: Any) -> Any:
    seed_single_table(client)
    seed_numbers(client)
    return client


@pytest.fixture()
def ui(browser: Any, console: Any, seeded: Any, request: Any) -> Iterator[Console]:
    yield from make_console(browser, console, request)


def item_url(table: str, key: dict[str, Any]) -> str:
    return f"/t/{table}/item?key={quote(json.dumps(key))}"


# --- tables ---------------------------------------------------------------------------------
def test_tables_list_shows_counts_and_sizes(ui: Console, seeded: Any) -> None:
    table = seeded.describe_table(TableName="app")["Table"]
    page = ui.open("/")
    row = page.locator("#tables-grid tr[data-table='app']")
    row.wait_for()
    cells = row.locator("td").all_inner_texts()
    assert cells[4] == f"{table['ItemCount']:,}"
    assert cells[5].endswith(" B") or cells[5].endswith(" KB")
    ui.shot("tables")
    ui.assert_fits()


def test_create_table_then_delete_it_with_confirmation(ui: Console, seeded: Any) -> None:
    page = ui.open("/create")
    page.fill("#create-name", "shop")
    page.fill("#create-pk", "PK")
    page.fill("#create-sk", "SK")
    page.click("text=+ GSI")
    gsi = page.locator(".index-row").first
    gsi.locator("[data-role=name]").fill("GSI1")
    gsi.locator("[data-role=pk]").fill("GSI1PK")
    gsi.locator("[data-role=sk]").fill("SK")
    assert '"IndexName": "GSI1"' in page.locator("pre.codeblock").inner_text()
    ui.shot("create")
    page.click("#create-submit")
    page.wait_for_url("**/t/shop/items")
    page.locator("#sidebar a", has_text="shop").wait_for()
    table = seeded.describe_table(TableName="shop")["Table"]
    assert [i["IndexName"] for i in table["GlobalSecondaryIndexes"]] == ["GSI1"]
    page.click("text=Overview")
    page.click("text=Delete table…")
    page.click("button[data-action='Delete table']")  # wrong confirmation text: refused
    assert page.locator(".modal input.invalid").count() == 1
    page.fill(".modal input", "shop")
    page.click("button[data-action='Delete table']")
    page.wait_for_url(lambda url: url.endswith("#/"))
    assert "shop" not in seeded.list_tables()["TableNames"]


def test_overview_describes_the_table(ui: Console) -> None:
    page = ui.open("/t/app/overview")
    page.locator("text=Partition key").first.wait_for()
    text = page.locator("#view").inner_text()
    assert "PK (S)" in text and "SK (S)" in text and "On-demand" in text
    ui.shot("overview")


def test_overview_shows_ttl_and_stream(ui: Console, seeded: Any) -> None:
    seeded.create_table(
        TableName="sessions", BillingMode="PAY_PER_REQUEST",
        KeySchema=[{"AttributeName": "id", "KeyType": "HASH"}],
        AttributeDefinitions=[{"AttributeName": "id", "AttributeType": "S"}],
        StreamSpecification={"StreamEnabled": True, "StreamViewType": "NEW_IMAGE"},
    )
    seeded.update_time_to_live(TableName="sessions",
                               TimeToLiveSpecification={"Enabled": True, "AttributeName": "expires"})
    try:
        page = ui.open("/t/sessions/overview")
        page.locator("text=Partition key").first.wait_for()
        text = page.locator("#view").inner_text()
        assert "ENABLED on expires" in text
        assert "NEW_IMAGE" in text
    finally:
        seeded.delete_table(TableName="sessions")


# --- browse -------------------------------------------------------------------------------------
def test_scan_pages_forward_and_back(ui: Console) -> None:
    page = ui.open("/t/numbers/items")
    page.select_option("#browse-form select >> nth=1", "25")
    page.click("#browse-run")
    page.locator("#result-count", has_text="25 items").wait_for()
    assert "RCU" in page.inner_text("#result-capacity")
    first_page = page.inner_text("#items-grid tbody")
    page.click("#page-next")
    page.locator("text=page 2").wait_for()
    assert page.inner_text("#items-grid tbody") != first_page
    page.keyboard.press("n")
    page.locator("text=page 3 (last)").wait_for()
    assert page.is_disabled("#page-next")
    page.keyboard.press("p")
    page.locator("text=page 2").wait_for()
    page.click("#page-prev")
    page.locator("text=page 1").wait_for()
    assert page.inner_text("#items-grid tbody") == first_page
    ui.assert_fits()


def test_query_with_a_sort_key_condition_and_a_filter(ui: Console) -> None:
    page = ui.open("/t/app/items")
    page.click("#mode-query")
    page.fill("#query-pk", "USER#1")
    page.select_option("#query-sk-op", "begins_with")
    page.fill("#query-sk", "ORDER#")
    page.click("#browse-run")
    page.locator("#result-count", has_text="3 items").wait_for()
    headers = page.locator("#items-grid thead th").all_inner_texts()
    assert headers[:2] == ["PK", "SK"] and "total" in headers and "status" in headers
    page.click("#add-filter")
    row = page.locator(".filter-row").last
    row.locator("input.attr").fill("status")
    row.locator("input.val").fill("SHIPPED")
    page.click("#browse-run")
    page.locator("#result-count", has_text="2 items").wait_for()
    assert "scanned 3" in page.inner_text("#browse-results")
    ui.shot("query")
    page.keyboard.press("j")
    page.keyboard.press("Enter")
    page.wait_for_url("**/item?key=*")
    page.locator("#attr-table").wait_for()


def test_query_errors_are_shown(ui: Console) -> None:
    page = ui.open("/t/app/items")
    page.click("#mode-query")
    page.fill("#query-pk", "USER#1")
    page.select_option("#query-sk-op", "BETWEEN")
    page.fill("#query-sk", "z")
    page.fill("#query-sk2", "a")
    page.click("#browse-run")
    assert "ValidationException" in page.locator("#browse-error").inner_text()


# --- single-table view ------------------------------------------------------------------------
def test_single_table_view_groups_partitions_and_finds_a_singleton(ui: Console) -> None:
    page = ui.open("/t/app/collections")
    page.locator(".group[data-partition='USER#1']").wait_for()
    group = page.locator(".group[data-partition='USER#1']")
    assert group.locator(".entity", has_text="ORDER").count() == 3
    assert group.locator(".entity", has_text="PROFILE").count() == 1
    ui.shot("single-table")
    group.locator("button", has_text="Query").click()
    page.wait_for_url("**/t/app/items")
    page.locator("#result-count", has_text="4 items").wait_for()
    assert page.input_value("#query-pk") == "USER#1"
    page.goto(f"{ui.base_url}#/t/app/collections")
    page.locator(".group[data-partition='USER#1'] button", has_text="+ Item").click()
    page.locator("#attr-table").wait_for()
    assert values_of(page)["PK"] == "USER#1"
    page.goto(f"{ui.base_url}#/t/app/collections")
    page.fill("#find-pk", "SETTINGS#APP")
    page.fill("#find-sk", "FLAGS#V1")
    page.press("#find-sk", "Enter")
    page.wait_for_url("**/item?key=*")
    page.locator("#attr-table").wait_for()
    assert values_of(page)["schema_version"] == BIG_NUMBER
    page.goto(f"{ui.base_url}#/t/app/collections")
    page.fill("#find-pk", "SETTINGS#APP")
    page.fill("#find-sk", "FLAGS#NOPE")
    page.click("#find-go")
    page.locator("#find-create").wait_for()


# --- item editor --------------------------------------------------------------------------------
def values_of(page: Any) -> dict[str, str]:
    names = page.locator("#attr-table tbody td.name input").evaluate_all("els => els.map(e => e.value)")
    values = page.locator("#attr-table tbody .value").evaluate_all("els => els.map(e => e.value)")
    return dict(zip(names, values, strict=True))


def add_attribute(page: Any, name: str, type_: str, value: str) -> None:
    page.click("#add-attribute")
    row = page.locator("#attr-table tbody tr").last
    row.locator("td.name input").fill(name)
    row.locator("td.type select").select_option(type_)
    row.locator(".value").fill(value)


def test_item_editor_keeps_types_and_refuses_a_conflicting_save(ui: Console, seeded: Any) -> None:
    page = ui.open("/t/app/items")
    page.click("text=+ New item")
    page.locator("#attr-table").wait_for()
    page.locator("#attr-table tbody tr").nth(0).locator(".value").fill("USER#9")
    page.locator("#attr-table tbody tr").nth(1).locator(".value").fill("PROFILE#")
    add_attribute(page, "tags", "SS", "red\nblue")
    add_attribute(page, "balance", "N", BIG_NUMBER)
    add_attribute(page, "avatar", "B", "AAEC")
    add_attribute(page, "broken", "N", "12abc")
    page.click("#item-save")
    assert "not a number" in page.inner_text("#item-problem")  # validated before saving
    page.locator("#attr-table tbody tr").last.locator("button[title='Remove attribute']").click()
    page.click("#item-save")
    page.locator(".toast", has_text="Item saved").wait_for()
    key = {"PK": {"S": "USER#9"}, "SK": {"S": "PROFILE#"}}
    stored = seeded.get_item(TableName="app", Key=key)["Item"]
    assert stored["tags"] == {"SS": ["red", "blue"]} or sorted(stored["tags"]["SS"]) == ["blue", "red"]
    assert stored["balance"] == {"N": BIG_NUMBER}
    assert stored["avatar"] == {"B": b"\x00\x01\x02"}

    page.click("#view-plain")
    text = page.input_value("#item-text")
    assert f'"balance": {BIG_NUMBER}' in text and '"$SS"' in text and '{"$B": "AAEC"}' in text
    page.click("#view-dynamo")
    assert f'"N": "{BIG_NUMBER}"' in page.input_value("#item-text")
    page.click("#view-plain")
    page.fill("#item-text", page.input_value("#item-text").replace('"$SS": [', '"$SS": ["green", '))
    ui.shot("editor-plain")

    # Someone else writes the item meanwhile: our save must be refused, both versions shown.
    seeded.update_item(TableName="app", Key=key, UpdateExpression="SET balance = :b",
                       ExpressionAttributeValues={":b": {"N": "1"}})
    page.click("#item-save")
    page.locator("#conflict").wait_for()
    mine = page.inner_text("#conflict pre[data-side=mine]")
    theirs = page.inner_text("#conflict pre[data-side=theirs]")
    assert BIG_NUMBER in mine and '"balance": 1' in theirs and "green" in mine and "green" not in theirs
    assert seeded.get_item(TableName="app", Key=key)["Item"]["balance"] == {"N": "1"}
    ui.shot("conflict")
    page.click("#conflict-overwrite")
    page.locator("#conflict").wait_for(state="detached")
    page.locator("#item-save:not([disabled])").wait_for()
    stored = seeded.get_item(TableName="app", Key=key)["Item"]
    assert stored["balance"] == {"N": BIG_NUMBER} and "green" in stored["tags"]["SS"]


def test_conflict_when_an_attribute_was_added(ui: Console, seeded: Any) -> None:
    key = {"PK": {"S": "SETTINGS#APP"}, "SK": {"S": "FLAGS#V1"}}
    page = ui.open(item_url("app", key))
    page.locator("#attr-table").wait_for()
    seeded.update_item(TableName="app", Key=key, UpdateExpression="SET newflag = :t", ExpressionAttributeValues={":t": {"BOOL": True}})
    page.click("#item-save")
    page.locator("#conflict").wait_for()
    page.click("#conflict-load")
    assert "newflag" in values_of(page)


# --- expression builder ------------------------------------------------------------------------
def test_expression_builder_validates_runs_and_copies(ui: Console, seeded: Any) -> None:
    page = ui.open("/t/app/builder")
    page.click("#op-UpdateItem")
    page.fill("#builder-key-hash", "SETTINGS#APP")
    page.fill("#builder-key-range", "FLAGS#V1")
    update = page.locator(".filter-row").first
    update.locator("input.attr").fill("schema_version")
    update.locator("select").nth(1).select_option("N")
    update.locator("input.val").fill("7")
    page.click("#add-builder-condition")
    condition = page.locator(".filter-row").last
    condition.locator("input.attr").fill("dark")
    condition.locator("select").nth(1).select_option("BOOL")
    condition.locator("input.val").fill("true")
    assert page.inner_text("pre.expression >> nth=0") == "SET #schema_version = :schema_version"
    assert json.loads(page.inner_text("#builder-names")) == {"#schema_version": "schema_version", "#dark": "dark"}
    page.click("#builder-validate")
    page.locator("#builder-validation", has_text="Valid").wait_for()
    assert seeded.get_item(TableName="app", Key={"PK": {"S": "SETTINGS#APP"}, "SK": {"S": "FLAGS#V1"}})["Item"]["schema_version"] != {"N": "7"}
    code = page.inner_text("#builder-code")
    assert "client.update_item(" in code and 'ConditionExpression="#dark = :dark"' in code
    page.click("text=JS SDK v3")
    assert "new UpdateItemCommand(" in page.inner_text("#builder-code")
    page.click("text=AWS CLI")
    assert "aws dynamodb update-item" in page.inner_text("#builder-code")
    ui.shot("builder")
    page.click("#builder-run")
    page.locator("#builder-run-ok").wait_for()
    assert seeded.get_item(TableName="app", Key={"PK": {"S": "SETTINGS#APP"}, "SK": {"S": "FLAGS#V1"}})["Item"]["schema_version"] == {"N": "7"}
    # an invalid expression is reported by the server
    condition.locator("select").first.select_option("attribute_type")
    condition.locator("input.val").fill("XX")
    page.click("#builder-validate")
    assert "ValidationException" in page.locator("#builder-validation").inner_text()


def test_expression_builder_query(ui: Console) -> None:
    page = ui.open("/t/app/builder")
    page.click("#op-Query")
    page.fill("#builder-pk", "USER#2")
    page.select_option("#builder-sk-op", "begins_with")
    page.fill("#builder-sk", "ORDER#")
    assert page.inner_text("pre.expression >> nth=0") == "#PK = :PK AND begins_with(#SK, :SK)"
    page.keyboard.press("Control+Enter")
    page.locator("#builder-run-ok").wait_for()
    assert "3 items" in page.inner_text("#builder-result")


# --- export -------------------------------------------------------------------------------------
def test_export_this_page_as_dynamodb_json_and_csv(ui: Console) -> None:
    page = ui.open("/t/numbers/items")
    page.select_option("#browse-form select >> nth=1", "25")
    page.click("#browse-run")
    page.locator("#result-count", has_text="25 items").wait_for()
    with page.expect_download() as download:
        page.select_option("#export-menu", "page-json")
    lines = Path(download.value.path()).read_text().splitlines()
    assert len(lines) == 25 and all(json.loads(line)["Item"]["id"]["N"] for line in lines)
    with page.expect_download() as download:
        page.select_option("#export-menu", "page-csv")
    rows = Path(download.value.path()).read_text().splitlines()
    assert rows[0] == "id (N),v (S)" and len(rows) == 26


def test_the_whole_table_is_exported_on_the_server(ui: Console) -> None:
    """No page gathers every Scan page in memory any more: "Whole table" opens the
    Import / Export page, whose export runs on the server (tests/console/test_browser_io.py)."""
    page = ui.open("/t/numbers/items")
    page.click("#browse-run")
    page.locator("#result-count").wait_for()
    page.select_option("#export-menu", "table")
    page.wait_for_url("**/t/numbers/io")
    page.locator("#export-card button#export-start", has_text="Export table").wait_for()


def test_export_through_the_standalone_console(ui: Console, seeded: Any, embedded: Any, tmp_path: Path) -> None:
    """`dynastore console --endpoint URL`: the page starts the export over HTTP and reads
    its progress through the endpoint's admin route; this console does not see the
    server's buckets, so it names the S3 place only and offers no download."""
    from dynastore.backups import buckets

    buckets.configure(embedded.database.storage, buckets.LocalBuckets(tmp_path / "buckets"))
    page = ui.open("/t/numbers/io")
    page.locator("#pitr-enable").click()
    page.locator("#pitr-status", has_text="PITR on").wait_for()
    where = page.inner_text("#export-where")
    assert "s3://dynastore-exports/exports/numbers/AWSDynamoDB/" in where and "on the server" not in where
    page.click("#export-start")
    page.locator("#export-progress-status", has_text="COMPLETED").wait_for(timeout=30_000)
    count = seeded.describe_table(TableName="numbers")["Table"]["ItemCount"]
    assert f"COMPLETED: {count:,} items" in page.inner_text("#export-progress-status")
    page.locator("#exports-grid tbody tr", has_text="COMPLETED").wait_for()
    assert page.locator("#exports-grid button[data-files]").count() == 0
    assert list((tmp_path / "buckets" / "dynastore-exports").rglob("manifest-summary.json"))


def test_import_json_lines(ui: Console, seeded: Any, tmp_path: Path) -> None:
    source = tmp_path / "import.json"
    source.write_text("\n".join(json.dumps({"Item": {"id": {"N": str(1000 + n)}, "big": {"N": BIG_NUMBER}}}) for n in range(30)))
    page = ui.open("/t/numbers/io")
    page.set_input_files("#import-file", str(source))
    page.click("#import-start")
    page.locator("#import-summary", has_text="30 written, 0 failed").wait_for()
    assert seeded.get_item(TableName="numbers", Key={"id": {"N": "1029"}})["Item"]["big"] == {"N": BIG_NUMBER}
    bad = tmp_path / "bad.json"
    bad.write_text('{"Item": {"id": {"N": "1"}}}\n{"Item": {"id": {"N": "nope"}}}\n')
    page.set_input_files("#import-file", str(bad))
    page.click("#import-start")
    page.locator("#import-report", has_text="Nothing was imported: line 2").wait_for()
    assert seeded.get_item(TableName="numbers", Key={"id": {"N": "1"}})["Item"] == {"id": {"N": "1"}, "v": {"S": "x"}}


# --- capacity: partition heat and hot keys (issue 7) -----------------------------------------------
def test_capacity_page_shows_the_hot_key(ui: Console, seeded: Any, embedded: Any) -> None:
    page = ui.open("/t/app/capacity")
    page.click("#start-observing")
    page.locator("text=no request has touched this table").wait_for()
    try:
        for number in range(30):  # one hot counter, a few cold keys
            key = "COUNTER#views" if number % 3 else f"USER#{number}"
            seeded.update_item(TableName="app", Key={"PK": {"S": key}, "SK": {"S": "TOTAL"}},
                               UpdateExpression="ADD n :one", ExpressionAttributeValues={":one": {"N": "1"}})
        page.reload()
        page.locator("#partition-heat").wait_for()
        top = page.locator("#top-keys tbody tr").first.inner_text()
        assert "PK=COUNTER#views" in top and "20" in top
        assert page.locator("#partition-heat tbody tr").count() >= 2
        insights = page.locator('#key-insights .insights-target[data-target="Table"]')
        assert "PK=COUNTER#views" in insights.locator('[data-rule="PKC"] tbody tr').first.inner_text()
        assert "SK=TOTAL" in insights.locator('[data-rule="SKC"] tbody tr').first.inner_text()
        page.select_option("#insights-window", "60m")
        assert "PK=COUNTER#views" in insights.locator('[data-rule="PKC"] tbody tr').first.inner_text()
        ui.shot("capacity")
    finally:
        embedded.admin("POST", "/_dynastore/throughput", {"Mode": "off"})


def test_capacity_page_shows_gsi_partitions_and_index_top_keys(ui: Console, seeded: Any, embedded: Any) -> None:
    seeded.create_table(
        TableName="tickets", BillingMode="PAY_PER_REQUEST",
        KeySchema=[{"AttributeName": "id", "KeyType": "HASH"}],
        AttributeDefinitions=[{"AttributeName": "id", "AttributeType": "S"},
                              {"AttributeName": "state", "AttributeType": "S"}],
        GlobalSecondaryIndexes=[{"IndexName": "by-state", "KeySchema": [{"AttributeName": "state", "KeyType": "HASH"}],
                                 "Projection": {"ProjectionType": "KEYS_ONLY"}}])
    embedded.admin("POST", "/_dynastore/throughput", {"Mode": "observe"})
    try:
        for number in range(12):  # a status as GSI key: few values, one of them hot
            state = "OPEN" if number % 4 else "CLOSED"
            seeded.put_item(TableName="tickets", Item={"id": {"S": f"T{number}"}, "state": {"S": state}})
        page = ui.open("/t/tickets/capacity")
        page.locator("#index-heat-by-state").wait_for()
        assert page.locator("#index-heat-by-state tbody tr").count() >= 1
        gsi = page.locator('#key-insights .insights-target[data-target="GSI by-state"]')
        assert "state=OPEN" in gsi.locator('[data-rule="PKC"] tbody tr').first.inner_text()
        assert gsi.locator('[data-rule="SKC"]').count() == 0  # the GSI has no sort key
    finally:
        embedded.admin("POST", "/_dynastore/throughput", {"Mode": "off"})
        seeded.delete_table(TableName="tickets")


# --- every page at both sizes, light and dark -------------------------------------------------------
PAGES = ["/", "/create", "/t/app/items", "/t/app/collections", "/t/app/builder", "/t/app/overview", "/t/app/io",
         "/t/app/capacity", "/t/app/item?key=" + quote(json.dumps({"PK": {"S": "SETTINGS#APP"}, "SK": {"S": "FLAGS#V1"}}))]


@pytest.mark.parametrize("viewport", sorted(VIEWPORTS))
@pytest.mark.parametrize("dark", [False, True], ids=["light", "dark"])
def test_every_page_fits_the_window(browser: Any, console: Any, seeded: Any, request: Any, viewport: str, dark: bool) -> None:
    for ui in make_console(browser, console, request, viewport, dark):
        for index, path in enumerate(PAGES):
            page = ui.open(path)
            page.wait_for_timeout(150)
            assert page.evaluate("document.documentElement.dataset.theme") == ("dark" if dark else "light")
            ui.assert_fits()
            ui.shot(f"{index}-{path.strip('/').split('?')[0].replace('/', '-') or 'tables'}")


def test_keyboard_shortcuts_and_theme_toggle(ui: Console) -> None:
    page = ui.open("/t/app/items")
    page.keyboard.press("?")
    page.locator(".modal", has_text="Keyboard shortcuts").wait_for()
    page.keyboard.press("Escape")
    assert page.locator(".modal").count() == 0
    page.keyboard.press("4")
    page.wait_for_url("**/t/app/overview")
    before = page.evaluate("document.documentElement.dataset.theme")
    page.keyboard.press("Shift+D")
    assert page.evaluate("document.documentElement.dataset.theme") != before
    page.keyboard.press("g")
    page.keyboard.press("t")
    page.wait_for_url(lambda url: url.endswith("#/"))


# --- regions and signing in (issue 16) -------------------------------------------------------------
def test_region_picker_shows_each_regions_tables(ui: Console, endpoint: str) -> None:
    """Without sign-in the page names its region in X-Dynastore-Region; the proxy signs for it."""
    import boto3

    north = boto3.client("dynamodb", endpoint_url=endpoint, region_name="eu-north-1",
                         aws_access_key_id="x", aws_secret_access_key="x")
    north.create_table(TableName="nordic", BillingMode="PAY_PER_REQUEST",
                       KeySchema=[{"AttributeName": "id", "KeyType": "HASH"}],
                       AttributeDefinitions=[{"AttributeName": "id", "AttributeType": "S"}])
    try:
        page = ui.open("/")
        page.locator("#sidebar a", has_text="app").first.wait_for()
        assert page.input_value("#region-select") == "us-east-1"
        assert "eu-north-1" in page.locator("#region-select option").all_inner_texts()
        assert page.locator("#sidebar nav a", has_text="nordic").count() == 0
        page.select_option("#region-select", "eu-north-1")
        page.locator("#sidebar nav a", has_text="nordic").wait_for()
        assert page.locator("#sidebar nav a").all_inner_texts() == ["nordic"]
        page.locator("#tables-grid tr[data-table='nordic']").wait_for()
        assert page.locator("#tables-grid tr[data-table='app']").count() == 0
        page.reload()  # the choice is kept for the tab
        page.locator("#sidebar nav a", has_text="nordic").wait_for()
        assert page.input_value("#region-select") == "eu-north-1"
        page.select_option("#region-select", "__other__")
        page.fill("#region-input", "Not A Region")
        page.click(".modal button[data-action='Switch']")
        page.locator("#region-problem", has_text="looks like").wait_for()
        page.fill("#region-input", "ap-south-2")
        page.keyboard.press("Enter")
        page.locator(".modal").wait_for(state="detached")
        page.locator("#sidebar .side-title", has_text="Tables (0)").wait_for()
        assert page.input_value("#region-select") == "ap-south-2"
        assert page.evaluate("sessionStorage.getItem('dynastore.region')") == "ap-south-2"
        ui.assert_fits()
    finally:
        north.delete_table(TableName="nordic")


def test_sign_in_with_a_good_key_shows_the_tables(secured_ui: Console) -> None:
    page = sign_in(secured_ui, ADMIN)
    page.locator("#sidebar nav a", has_text="orders").wait_for()
    assert page.locator("#sidebar nav a").all_inner_texts() == ["orders"]
    assert page.inner_text("#who-account") == "111111111111"
    assert page.inner_text("#who-key") == ADMIN[0]
    assert page.locator("#who-readonly").count() == 0
    assert page.locator("#region-select option").all_inner_texts()[:2] == ["eu-west-1", "us-east-1"]
    secured_ui.shot("signed-in")
    stored = page.evaluate("JSON.stringify(sessionStorage)")
    assert ADMIN[1] in stored and page.evaluate("JSON.stringify(localStorage)").count(ADMIN[1]) == 0
    page.goto(f"{secured_ui.base_url}#/t/orders/items")  # the key is kept for the tab: no new sign-in
    page.locator("#result-count", has_text="1 item").wait_for()
    assert ADMIN[1] not in page.url
    page.click("#signout")
    page.locator("#signin-form").wait_for()
    assert page.evaluate("sessionStorage.length") == 0


def test_sign_in_without_crypto_subtle_uses_the_fallback_signer(secured_ui: Console) -> None:
    """An http:// page on another host than localhost has no crypto.subtle."""
    secured_ui.page.add_init_script("Object.defineProperty(globalThis.crypto, 'subtle', { get: () => undefined })")
    page = sign_in(secured_ui, ADMIN)
    page.locator("#sidebar nav a", has_text="orders").wait_for()
    assert page.evaluate("globalThis.crypto.subtle") is None


def test_a_wrong_secret_shows_invalid_signature(secured_ui: Console) -> None:
    page = sign_in(secured_ui, (ADMIN[0], "not-the-secret"))
    page.locator("#signin-error", has_text="InvalidSignatureException").wait_for()
    assert "signature we calculated does not match" in page.inner_text("#signin-error")
    assert page.evaluate("sessionStorage.getItem('dynastore.credentials')") is None
    secured_ui.shot("signin-error")
    page.fill("#signin-key", "AKIDNOSUCHKEY")
    page.click("#signin-submit")
    page.locator("#signin-error", has_text="UnrecognizedClientException").wait_for()
    assert page.locator("#sidebar nav a").count() == 0


def test_a_readonly_key_sees_disabled_edit_controls(secured_ui: Console) -> None:
    page = sign_in(secured_ui, READER)
    page.locator("#who-readonly").wait_for()
    assert page.inner_text("#who-key") == READER[0]
    assert page.is_disabled("#new-table")
    page.locator("#tables-grid tr[data-table='orders']").wait_for()
    assert page.locator("#tables-grid button", has_text="Delete").first.is_disabled()
    page.goto(f"{secured_ui.base_url}#{item_url('orders', {'id': {'S': 'o-1'}})}")
    page.locator("#attr-table").wait_for()
    assert page.is_disabled("#item-save") and page.is_disabled("#item-delete")
    page.goto(f"{secured_ui.base_url}#/t/orders/items")
    page.locator("#result-count", has_text="1 item").wait_for()
    assert page.locator("button", has_text="+ New item").is_disabled()
    page.goto(f"{secured_ui.base_url}#/t/orders/overview")
    page.locator("#delete-table").wait_for()
    assert page.is_disabled("#delete-table")
    page.goto(f"{secured_ui.base_url}#/t/orders/io")
    page.locator("#export-start").wait_for()
    for control in ("#export-start", "#import-s3-start", "#import-start", "#backup-create", "#restore-to-time"):
        assert page.is_disabled(control), control
    page.locator("#exports-note", has_text="No exports of this table yet").wait_for()  # ListExports is a read
    secured_ui.shot("readonly")
    secured_ui.assert_fits()
    # the server refuses the write anyway, and the page says why
    refused = page.evaluate("""() => window.dynastoreConsole.call("PutItem", {TableName: "orders", Item: {id: {S: "x"}}})
        .then(() => "written", (error) => error.code)""")
    assert refused == "AccessDeniedException"
    page.locator("#status-bar .err", has_text="AccessDeniedException").wait_for()


def test_signed_in_export_with_progress_and_a_signed_download(secured_ui: Console, secured: ServedProcess) -> None:
    """Signed in with an admin key: the page signs ExportTableToPointInTime, the progress
    routes and the DescribeExport that authorizes a download of the export's files."""
    page = sign_in(secured_ui, ADMIN)
    page.locator("#sidebar nav a", has_text="orders").wait_for()
    page.goto(f"{secured_ui.base_url}#/t/orders/io")
    page.locator("#pitr-enable").click()
    page.locator("#pitr-status", has_text="PITR on").wait_for()
    page.click("#export-start")
    page.locator("#export-progress-status", has_text="COMPLETED: 1 item,").wait_for(timeout=30_000)
    page.locator("#exports-grid button[data-files]").click()
    with page.expect_download() as download:
        page.locator("#export-files tr[data-file='manifest-summary.json'] button").click()
    summary = json.loads(Path(download.value.path()).read_text())
    assert summary["itemCount"] == 1 and summary["exportArn"].startswith("arn:aws:dynamodb:us-east-1:111111111111:")


def test_switching_region_shows_that_regions_tables_only(secured_ui: Console) -> None:
    page = sign_in(secured_ui, ADMIN)
    page.locator("#sidebar nav a", has_text="orders").wait_for()
    page.select_option("#region-select", "eu-west-1")
    page.locator("#sidebar nav a", has_text="eu-only").wait_for()
    assert page.locator("#sidebar nav a").all_inner_texts() == ["eu-only"]
    page.locator("#tables-grid tr[data-table='eu-only']").wait_for()
    assert page.locator("#tables-grid tr[data-table='orders']").count() == 0
    page.select_option("#region-select", "__other__")
    page.fill("#region-input", "sa-east-1")
    page.click(".modal button[data-action='Switch']")
    page.locator("#sidebar .side-title", has_text="Tables (0)").wait_for()
    page.select_option("#region-select", "us-east-1")
    page.locator("#sidebar nav a", has_text="orders").wait_for()
    assert page.locator("#sidebar nav a").all_inner_texts() == ["orders"]
