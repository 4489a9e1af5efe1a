"""Buckets as folders (dynastore/backups/buckets.py): what exports write and imports read."""

from __future__ import annotations

from pathlib import Path

import pytest

from dynastore.backups.buckets import BucketError, LocalBuckets, buckets_for, configure
from dynastore.database import Database


def test_an_object_appears_whole_and_lists_in_key_order(tmp_path: Path) -> None:
    buckets = LocalBuckets(tmp_path)
    assert not buckets.bucket_exists("b")
    with buckets.open_write("b", "AWSDynamoDB/01/data/z.json.gz") as out:
        out.write(b"zz")
        assert list(buckets.list_objects("b", "")) == []  # not visible while written
    with buckets.open_write("b", "AWSDynamoDB/01/manifest-summary.json") as out:
        out.write(b"{}")
    assert buckets.bucket_exists("b")
    assert [(o.key, o.size) for o in buckets.list_objects("b", "AWSDynamoDB/01/")] == [
        ("AWSDynamoDB/01/data/z.json.gz", 2), ("AWSDynamoDB/01/manifest-summary.json", 2)]
    assert list(buckets.list_objects("b", "AWSDynamoDB/02")) == []
    with buckets.open_read("b", "AWSDynamoDB/01/data/z.json.gz") as stream:
        assert stream.read() == b"zz"


def test_a_failed_write_leaves_nothing(tmp_path: Path) -> None:
    buckets = LocalBuckets(tmp_path)
    with pytest.raises(RuntimeError), buckets.open_write("b", "k") as out:
        out.write(b"half")
        raise RuntimeError("disk gone")
    assert list(buckets.list_objects("b", "")) == []


@pytest.mark.parametrize(("bucket", "key", "code"), [
    ("missing", "k", "NoSuchBucket"), ("b", "missing", "NoSuchKey"),
    ("b", "../escape", "InvalidKey"), ("../b", "k", "InvalidBucketName"),
])
def test_missing_and_invalid_names(tmp_path: Path, bucket: str, key: str, code: str) -> None:
    buckets = LocalBuckets(tmp_path)
    (tmp_path / "b").mkdir()
    with pytest.raises(BucketError) as raised, buckets.open_read(bucket, key):
        pass
    assert raised.value.code == code


def test_a_data_directory_keeps_its_buckets_inside_and_configure_wins(tmp_path: Path) -> None:
    database = Database.open(tmp_path / "data")
    try:
        default = buckets_for(database)
        assert isinstance(default, LocalBuckets) and default.root == tmp_path / "data" / "buckets"
        configure(database.storage, LocalBuckets(tmp_path / "elsewhere"))
        chosen = buckets_for(database)
        assert isinstance(chosen, LocalBuckets) and chosen.root == tmp_path / "elsewhere"
    finally:
        database.close()
