"""Where exports are written and imports are read: S3 buckets, or folders.

DynamoDB's ExportTableToPointInTime writes to an S3 bucket and ImportTable
reads from one. dynastore maps a bucket either to a folder on disk (the
default: a bucket ``B`` is the folder ``<buckets dir>/B``, and an object key
``a/b/c`` is the file ``<buckets dir>/B/a/b/c``) or, with
``dynastore serve --s3-endpoint URL``, to a real bucket of any S3-compatible
store reached through boto3's S3 client.

The buckets directory is ``<data-dir>/buckets`` for a SQLite store and
``./dynastore-buckets`` otherwise (in memory, PostgreSQL); ``--buckets-dir
DIR`` moves it. Several servers over one PostgreSQL database each see their
own disk: give them a shared folder or an S3 endpoint.

Interface (memory bounded by a chunk, never by an object)::

    buckets = buckets_for(database)
    buckets.bucket_exists("my-bucket")                  # bool
    with buckets.open_write("my-bucket", "AWSDynamoDB/01/data/x.json.gz") as out:
        out.write(chunk)                                # a binary file
    with buckets.open_read("my-bucket", key) as stream:
        stream.read(65536)
    for info in buckets.list_objects("my-bucket", "AWSDynamoDB/01/"):
        info.key, info.size                             # key order

A server configures its store's buckets once at start
(``configure(storage, LocalBuckets(path))`` or ``S3Buckets(endpoint)``);
every namespace's Database over that storage then sees the same buckets.
"""

from __future__ import annotations

import importlib
import os
import tempfile
import weakref
from collections.abc import Iterator
from contextlib import contextmanager
from pathlib import Path
from typing import TYPE_CHECKING, Any, BinaryIO, NamedTuple, Protocol

if TYPE_CHECKING:
    from dynastore.database import Database

DEFAULT_BUCKETS_DIR = "dynastore-buckets"
"""The buckets folder of a store that has no data directory (memory, PostgreSQL)."""

SPOOL_BYTES = 8 * 1024 * 1024
"""How much of an object bound for S3 is kept in memory before spilling to a
temporary file; boto3 then uploads it in parts."""


class ObjectInfo(NamedTuple):
    key: str
    size: int


class BucketError(Exception):
    """A bucket or object could not be read or written; ``code`` is S3's
    error code where known (NoSuchBucket, NoSuchKey, AccessDenied), which
    DynamoDB reports as an export's or import's FailureCode."""

    def __init__(self, code: str, message: str) -> None:
        super().__init__(message)
        self.code = code
        self.message = message


class Buckets(Protocol):
    def bucket_exists(self, bucket: str) -> bool: ...

    def open_write(self, bucket: str, key: str) -> Any:
        """A context manager giving a binary file; the object appears, whole,
        when the block ends without an exception (never half-written)."""

    def open_read(self, bucket: str, key: str) -> Any:
        """A context manager giving a binary file to read; BucketError
        NoSuchBucket / NoSuchKey when missing."""

    def list_objects(self, bucket: str, prefix: str) -> Iterator[ObjectInfo]: ...

    def describe(self) -> str:
        """Where the buckets are, for a log line."""


class LocalBuckets:
    """Buckets as folders under ``root``. A bucket folder is created by the
    first write into it, so no set-up step is needed locally; reads of a
    missing folder are NoSuchBucket, as on S3."""

    def __init__(self, root: Path | str) -> None:
        self.root = Path(root)

    def describe(self) -> str:
        return f"folders under {self.root}"

    def _bucket_dir(self, bucket: str) -> Path:
        if not bucket or "/" in bucket or bucket in (".", ".."):
            raise BucketError("InvalidBucketName", f"The specified bucket is not valid: {bucket}")
        return self.root / bucket

    def _object_path(self, bucket: str, key: str) -> Path:
        parts = [part for part in key.split("/") if part]
        if not parts or any(part in (".", "..") for part in parts):
            raise BucketError("InvalidKey", f"The specified key is not valid: {key}")
        return self._bucket_dir(bucket).joinpath(*parts)

    def bucket_exists(self, bucket: str) -> bool:
        return self._bucket_dir(bucket).is_dir()

    @contextmanager
    def open_write(self, bucket: str, key: str) -> Iterator[BinaryIO]:
        path = self._object_path(bucket, key)
        path.parent.mkdir(parents=True, exist_ok=True)
        # Written beside its final name and renamed at the end, so a reader
        # (or a crash) never sees half an object.
        descriptor, temporary = tempfile.mkstemp(dir=path.parent, prefix=".partial-")
        try:
            with os.fdopen(descriptor, "wb") as out:
                yield out
            os.replace(temporary, path)
        except BaseException:
            Path(temporary).unlink(missing_ok=True)
            raise

    @contextmanager
    def open_read(self, bucket: str, key: str) -> Iterator[BinaryIO]:
        if not self.bucket_exists(bucket):
            raise BucketError("NoSuchBucket", f"The specified bucket does not exist: {bucket}")
        path = self._object_path(bucket, key)
        try:
            stream = path.open("rb")
        except (FileNotFoundError, IsADirectoryError):
            raise BucketError("NoSuchKey", f"The specified key does not exist: {key}") from None
        with stream:
            yield stream

    def list_objects(self, bucket: str, prefix: str) -> Iterator[ObjectInfo]:
        bucket_dir = self._bucket_dir(bucket)
        if not bucket_dir.is_dir():
            raise BucketError("NoSuchBucket", f"The specified bucket does not exist: {bucket}")
        found = []
        for directory, _, files in os.walk(bucket_dir):
            for name in files:
                if name.startswith(".partial-"):
                    continue
                path = Path(directory) / name
                key = path.relative_to(bucket_dir).as_posix()
                if key.startswith(prefix):
                    found.append(ObjectInfo(key, path.stat().st_size))
        found.sort()
        yield from found


class S3Buckets:
    """Buckets of an S3-compatible store through boto3 (``pip install boto3``;
    the ``s3`` extra). Credentials and region come from boto3's usual chain."""

    def __init__(self, endpoint_url: str, region: str | None = None) -> None:
        try:
            # By name: boto3 ships no type stubs, and mypy --strict follows
            # this module from dynastore/engine (tests/test_typing.py).
            boto3: Any = importlib.import_module("boto3")
        except ImportError:  # pragma: no cover - depends on the installation
            raise SystemExit(
                "dynastore: --s3-endpoint needs boto3: pip install 'dynastore[s3]'"
            ) from None
        self.endpoint_url = endpoint_url
        self._client = boto3.client(
            "s3", endpoint_url=endpoint_url,
            region_name=region or os.environ.get("AWS_DEFAULT_REGION") or "us-east-1",
        )

    def describe(self) -> str:
        return f"S3 at {self.endpoint_url}"

    def _error(self, error: Exception) -> BucketError:
        response = getattr(error, "response", None) or {}
        details = response.get("Error", {})
        code = str(details.get("Code") or type(error).__name__)
        if code == "404":
            code = "NoSuchKey"
        return BucketError(code, str(details.get("Message") or error))

    def bucket_exists(self, bucket: str) -> bool:
        try:
            self._client.head_bucket(Bucket=bucket)
        except Exception as error:  # botocore's ClientError, or a connection failure
            if self._error(error).code in ("NoSuchBucket", "NoSuchKey", "NotFound"):
                return False
            raise self._error(error) from error
        return True

    @contextmanager
    def open_write(self, bucket: str, key: str) -> Iterator[BinaryIO]:
        with tempfile.SpooledTemporaryFile(max_size=SPOOL_BYTES) as spool:
            yield spool  # type: ignore[misc]
            spool.seek(0)
            try:
                self._client.upload_fileobj(spool, bucket, key)
            except Exception as error:
                raise self._error(error) from error

    @contextmanager
    def open_read(self, bucket: str, key: str) -> Iterator[BinaryIO]:
        try:
            body = self._client.get_object(Bucket=bucket, Key=key)["Body"]
        except Exception as error:
            raise self._error(error) from error
        try:
            yield body
        finally:
            body.close()

    def list_objects(self, bucket: str, prefix: str) -> Iterator[ObjectInfo]:
        paginator = self._client.get_paginator("list_objects_v2")
        try:
            for page in paginator.paginate(Bucket=bucket, Prefix=prefix):
                for entry in page.get("Contents", []):
                    yield ObjectInfo(entry["Key"], int(entry["Size"]))
        except Exception as error:
            raise self._error(error) from error


_CONFIGURED: weakref.WeakKeyDictionary[Any, Buckets] = weakref.WeakKeyDictionary()


def configure(storage: Any, buckets: Buckets) -> None:
    """Use ``buckets`` for every namespace of ``storage`` (a server, at start)."""
    _CONFIGURED[storage] = buckets


def default_buckets_dir(storage: Any) -> Path:
    """``<data-dir>/buckets`` for a SQLite store, else ./dynastore-buckets."""
    directory = getattr(storage, "directory", None)
    if isinstance(directory, Path):
        return directory / "buckets"
    return Path(DEFAULT_BUCKETS_DIR).resolve()


def buckets_for(database: Database) -> Buckets:
    """The buckets this database's exports and imports use."""
    buckets = _CONFIGURED.get(database.storage)
    if buckets is None:
        buckets = LocalBuckets(default_buckets_dir(database.storage))
        _CONFIGURED[database.storage] = buckets
    return buckets
