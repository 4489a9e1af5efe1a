"""A process's copy of the catalogue keeps in step with what the store kept (issue 15).

Database.tables is the process's copy of every table's definition. A change
made inside a transaction that is then rolled back must not outlive it in
the copy (the store kept the definition from before), and on a store other
servers share, a reload of the catalogue that runs while another request of
the same process is changing a table must not put the older definition back
over the one being written (two servers' backups and PITR switches lost a
held view that way under load: tests/api/test_backups_two_servers.py).
"""

from __future__ import annotations

import threading
from collections.abc import Iterator
from dataclasses import replace
from pathlib import Path

import pytest

from dynastore.database import Database
from dynastore.ops import dispatch
from tests.storage.test_contract import BACKENDS, open_backend


class Boom(Exception):
    pass


def create_table(database: Database, name: str = "tbl") -> None:
    dispatch(database, "CreateTable", {
        "TableName": name, "BillingMode": "PAY_PER_REQUEST",
        "AttributeDefinitions": [{"AttributeName": "pk", "AttributeType": "S"}],
        "KeySchema": [{"AttributeName": "pk", "KeyType": "HASH"}],
    })


@pytest.fixture(params=BACKENDS)
def database(request: pytest.FixtureRequest, tmp_path: Path) -> Iterator[Database]:
    database = Database(open_backend(request.param, tmp_path, request))
    create_table(database)
    yield database
    database.storage.close()


def test_a_rolled_back_change_is_taken_back_from_the_copy(database: Database) -> None:
    before = database.table("tbl")
    with pytest.raises(Boom), database.storage.transaction():
        changed = database.update_table(replace(before, status="UPDATING"))
        assert database.table("tbl") is changed  # the change's own transaction sees it
        raise Boom
    assert database.table("tbl") is before
    # The store agrees, and the next change is a compare-and-set on its generation.
    assert database.update_table(replace(before, status="UPDATING")).generation == before.generation + 1


def test_a_nested_change_caught_inside_is_taken_back_and_the_rest_kept(database: Database) -> None:
    before = database.table("tbl")
    with database.storage.transaction():
        with pytest.raises(Boom), database.storage.transaction():
            database.update_table(replace(before, status="UPDATING"))
            raise Boom
        assert database.table("tbl") is before
        kept = database.update_table(replace(before, status="DELETING"))
    assert database.table("tbl") is kept


def test_a_rolled_back_drop_leaves_the_table_in_the_copy(database: Database) -> None:
    before = database.table("tbl")
    with pytest.raises(Boom), database.storage.transaction():
        database.drop_table("tbl")
        assert "tbl" not in database.tables
        raise Boom
    assert database.table("tbl") is before
    assert database.storage.table_statistics(before.table_id) == (0, 0)  # still there


@pytest.fixture
def shared(request: pytest.FixtureRequest) -> Iterator[Database]:
    url = request.getfixturevalue("postgres_server").new_schema()
    database = Database.open(url)
    create_table(database)
    yield database
    database.storage.close()


def change_in_another_thread(database: Database, fail: bool) -> tuple[threading.Thread, threading.Event,
                                                                       threading.Event]:
    """A thread (a request of its own: its own connection) that changes the
    table and holds its transaction open until told to end it."""
    written, finish = threading.Event(), threading.Event()
    before = database.table("tbl")

    def change() -> None:
        try:
            with database.storage.transaction():
                database.update_table(replace(before, status="UPDATING"))
                written.set()
                finish.wait(30)
                if fail:
                    raise Boom
        except Boom:
            pass

    thread = threading.Thread(target=change)
    thread.start()
    assert written.wait(30)
    return thread, written, finish


def test_a_reload_beside_a_change_in_flight_keeps_the_newer_copy(shared: Database) -> None:
    before = shared.table("tbl")
    thread, _, finish = change_in_another_thread(shared, fail=False)
    try:
        shared.reload_catalogue()  # reads the committed rows: the generation from before
        assert shared.table("tbl").status == "UPDATING"
    finally:
        finish.set()
        thread.join(30)
    after = shared.table("tbl")
    assert (after.status, after.generation) == ("UPDATING", before.generation + 1)
    shared.reload_catalogue()
    assert shared.table("tbl").generation == before.generation + 1


def test_a_change_in_flight_rolled_back_after_a_reload_leaves_the_stores_copy(shared: Database) -> None:
    before = shared.table("tbl")
    thread, _, finish = change_in_another_thread(shared, fail=True)
    try:
        shared.reload_catalogue()
    finally:
        finish.set()
        thread.join(30)
    assert shared.table("tbl") == before
    # The copy it went back to might have been older than the store's: the
    # next refresh reads the catalogue again, whatever notifications say.
    assert shared.refresh_catalogue() is True
    assert shared.table("tbl") == before


def test_a_refresh_that_waited_for_another_load_still_sees_a_change_made_before_it(
        request: pytest.FixtureRequest) -> None:
    """Server A's request asks for a current catalogue while another of its
    requests is loading it; that load may have read its rows before server
    B's CreateTable committed. Once it is done, the waiting request checks
    again and sees the table (it used to take the other load as current)."""
    url = request.getfixturevalue("postgres_server").new_schema()
    a, b = Database.open(url), Database.open(url)
    try:
        a.refresh_catalogue(check=True)
        held = threading.Event()
        release = threading.Event()

        def stale_load() -> None:  # stands for a load whose rows were read before B's change
            with a._catalogue_lock:
                held.set()
                release.wait(30)

        thread = threading.Thread(target=stale_load)
        thread.start()
        assert held.wait(30)
        create_table(b, "made-on-b")
        threading.Timer(0.2, release.set).start()
        assert a.refresh_catalogue(check=True) is True
        thread.join(30)
        assert "made-on-b" in a.tables
    finally:
        a.storage.close()
        b.storage.close()
