"""The change log of dynastore/backups/pitr.py: the table as of any time
equals a replay of the writes up to then, on the memory and SQLite stores."""

from __future__ import annotations

import random
from pathlib import Path
from typing import Any

import orjson
import pytest

import dynastore
from dynastore.backups import pitr
from dynastore.database import Database


@pytest.fixture(params=["memory", "sqlite"])
def db(request: pytest.FixtureRequest, tmp_path: Path) -> Any:
    with dynastore.open(None if request.param == "memory" else tmp_path / "data") as embedded:
        yield embedded


def _database(db: Any) -> Database:
    return db.database  # type: ignore[no-any-return]


def _table(client: Any, name: str = "Tab", sort_key: bool = True) -> None:
    keys = [{"AttributeName": "pk", "KeyType": "HASH"}]
    attributes = [{"AttributeName": "pk", "AttributeType": "S"}]
    if sort_key:
        keys.append({"AttributeName": "sk", "KeyType": "RANGE"})
        attributes.append({"AttributeName": "sk", "AttributeType": "N"})
    client.create_table(TableName=name, KeySchema=keys, AttributeDefinitions=attributes,
                        BillingMode="PAY_PER_REQUEST")


def _as_of(database: Database, at: float, max_rows: int = 7) -> dict[tuple[str, str], Any]:
    schema = database.table("Tab")
    found: dict[tuple[str, str], Any] = {}
    for page in pitr.pages_as_of(database, schema, at, max_rows=max_rows):
        assert len(page.rows) <= max_rows
        for row in page.rows:
            item = orjson.loads(row.item)
            key = (item["pk"]["S"], item["sk"]["N"])
            assert key not in found
            found[key] = item
    return found


def test_as_of_equals_replay(db: Any) -> None:
    client = db.client()
    database = _database(db)
    _table(client)
    rng = random.Random(19)
    state: dict[tuple[str, str], Any] = {}

    def write_some(count: int) -> None:
        for _ in range(count):
            key = (f"p{rng.randrange(6)}\x00x" if rng.random() < 0.2 else f"p{rng.randrange(6)}",
                   str(rng.randrange(8)))
            item = {"pk": {"S": key[0]}, "sk": {"N": key[1]}}
            if rng.random() < 0.3:
                client.delete_item(TableName="Tab", Key=item)
                state.pop(key, None)
            else:
                item["v"] = {"N": str(rng.randrange(1000))}
                client.put_item(TableName="Tab", Item=item)
                state[key] = item

    write_some(30)
    client.update_continuous_backups(TableName="Tab", PointInTimeRecoverySpecification={
        "PointInTimeRecoveryEnabled": True}) if "UpdateContinuousBackups" in _implemented() else \
        pitr.enable(database, database.table("Tab"), 35)
    snapshots = []
    for _ in range(8):
        db.advance_clock(1.5)
        snapshots.append((database.now(), {k: dict(v) for k, v in state.items()}))
        db.advance_clock(0.5)
        write_some(25)
    for at, expected in snapshots:
        assert _as_of(database, at) == expected
    assert _as_of(database, database.now()) == state
    window = pitr.restorable_window(database, database.table("Tab"))
    assert window is not None and window[0] <= snapshots[0][0]


def test_changes_between(db: Any) -> None:
    client = db.client()
    database = _database(db)
    _table(client)
    for n in range(5):
        client.put_item(TableName="Tab", Item={"pk": {"S": "a"}, "sk": {"N": str(n)}})
    since = pitr.hold(database, "Tab", "test")
    db.advance_clock(1)
    client.delete_item(TableName="Tab", Key={"pk": {"S": "a"}, "sk": {"N": "1"}})
    client.put_item(TableName="Tab", Item={"pk": {"S": "b"}, "sk": {"N": "1"}})
    client.put_item(TableName="Tab", Item={"pk": {"S": "a"}, "sk": {"N": "2"}, "x": {"S": "y"}})
    db.advance_clock(1)
    until = database.now()
    db.advance_clock(1)
    client.put_item(TableName="Tab", Item={"pk": {"S": "a"}, "sk": {"N": "3"}, "x": {"S": "later"}})
    page = pitr.read_changes_page(database, database.table("Tab"), since, until)
    assert page.position is None
    summary = {(orjson.loads((c.before or c.after).item)["pk"]["S"], c.sk): (
        c.before is not None, None if c.after is None else orjson.loads(c.after.item).get("x"))
        for c in page.changes}
    assert len(summary) == 3
    assert sorted(summary.values(), key=str) == sorted(
        [(True, None), (False, None), (True, {"S": "y"})], key=str)
    pitr.release(database, "Tab", "test")
    assert pitr.change_log(database.table("Tab")) is None


def test_prune_keeps_what_views_need(db: Any) -> None:
    client = db.client()
    database = _database(db)
    _table(client, sort_key=False)
    client.put_item(TableName="Tab", Item={"pk": {"S": "a"}, "v": {"N": "0"}})
    pitr.enable(database, database.table("Tab"), 1)
    for n in range(1, 6):
        db.advance_clock(6 * 3600)
        client.put_item(TableName="Tab", Item={"pk": {"S": "a"}, "v": {"N": str(n)}})
    schema = database.table("Tab")
    early, _ = pitr.restorable_window(database, schema) or (0, 0)
    before = {k: v for k, v in _as_of_single(database, early).items()}
    assert pitr.prune(database, schema) is None
    assert _as_of_single(database, early) == before
    assert database.storage.table_statistics(int(pitr.change_log(schema)["storage_id"]))[0] < 5


def _as_of_single(database: Database, at: float) -> dict[str, Any]:
    rows = [row for page in pitr.pages_as_of(database, database.table("Tab"), at) for row in page.rows]
    return {orjson.loads(row.item)["pk"]["S"]: orjson.loads(row.item) for row in rows}


def _implemented() -> frozenset[str]:
    from dynastore.ops import IMPLEMENTED

    return IMPLEMENTED
