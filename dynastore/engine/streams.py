"""DynamoDB Streams, the pure part: record building, view types, sequence
numbers, shard ids and lineage, shard iterators.

No storage, no clock: callers pass ``now`` and the sequence number. The
stateful half (where records live, the shard list, the counter) is
dynastore.streams_api.store; the one write path (dynastore/write_path.py)
has it number the records inside the item change's commit.

Sequence numbers are decimal strings of exactly 21 digits (DynamoDB's are 21
to 40), issued from one counter per stream starting at ``FIRST_SEQUENCE``:
their text order is their numeric order, so a stream's records can be stored
with the sequence number as the sort key and read back in commit order.
"""

from __future__ import annotations

import base64
import binascii
import hashlib
import hmac
import re
from dataclasses import dataclass
from typing import Any

import orjson

from dynastore import limits
from dynastore.types.size import item_size

VIEW_TYPES = ("KEYS_ONLY", "NEW_IMAGE", "OLD_IMAGE", "NEW_AND_OLD_IMAGES")
STREAM_EXTENSION = "stream"
"""TableSchema.extensions key of the table's current stream:
{"arn", "label", "view_type", "storage_id"}; absent when streams are off."""
STREAM_STORAGE_MARKER = "/stream/"

# Candidates for dynastore/limits.py.
STREAM_RETENTION_SECONDS = limits.STREAM_RETENTION_SECONDS
"""Records older than this are trimmed, as in DynamoDB."""
SHARD_MAX_RECORDS = limits.STREAM_SHARD_MAX_RECORDS
"""A shard is closed and a child opened after this many records..."""
SHARD_MAX_AGE_SECONDS = limits.STREAM_SHARD_MAX_AGE_SECONDS
"""...or once it is this old (DynamoDB rolls shards over every few hours)."""
ITERATOR_LIFETIME_SECONDS = limits.STREAM_ITERATOR_LIFETIME_SECONDS
"""A shard iterator expires 15 minutes after it is returned."""
GET_RECORDS_MAX_LIMIT = limits.GET_RECORDS_MAX_LIMIT
GET_RECORDS_MAX_BYTES = limits.GET_RECORDS_MAX_BYTES
DESCRIBE_STREAM_MAX_LIMIT = limits.DESCRIBE_STREAM_MAX_LIMIT
LIST_STREAMS_MAX_LIMIT = limits.LIST_STREAMS_MAX_LIMIT

FIRST_SEQUENCE = 10**20
SEQUENCE_DIGITS = 21
EVENT_VERSION = "1.1"
EVENT_SOURCE = "aws:dynamodb"
SERVICE_IDENTITY = {"PrincipalId": "dynamodb.amazonaws.com", "Type": "Service"}
"""userIdentity of a TTL deletion (GetRecords' wire shape: Identity)."""


def stream_storage_name(table_name: str, label: str) -> str:
    """Catalogue name of a stream's storage table; '/' never occurs in a table name."""
    return f"{table_name}{STREAM_STORAGE_MARKER}{label}"


def stream_label(now: float) -> str:
    """DynamoDB's StreamLabel: the creation time, ISO 8601 to the millisecond (UTC)."""
    millis_total = int(now * 1000)
    seconds, millis = divmod(millis_total, 1000)
    days, second_of_day = divmod(seconds, 86400)
    year, month, day = _civil_from_days(days)
    hour, rest = divmod(second_of_day, 3600)
    minute, second = divmod(rest, 60)
    return f"{year:04d}-{month:02d}-{day:02d}T{hour:02d}:{minute:02d}:{second:02d}.{millis:03d}"


def _civil_from_days(days: int) -> tuple[int, int, int]:
    """(year, month, day) of a day count since 1970-01-01 (proleptic
    Gregorian; Howard Hinnant's algorithm -- this package reads no clock
    and imports no time module)."""
    days += 719468
    era = days // 146097
    day_of_era = days - era * 146097
    year_of_era = (day_of_era - day_of_era // 1460 + day_of_era // 36524 - day_of_era // 146096) // 365
    day_of_year = day_of_era - (365 * year_of_era + year_of_era // 4 - year_of_era // 100)
    shifted_month = (5 * day_of_year + 2) // 153
    day = day_of_year - (153 * shifted_month + 2) // 5 + 1
    month = shifted_month + 3 if shifted_month < 10 else shifted_month - 9
    return year_of_era + era * 400 + (month <= 2), month, day


def stream_arn(table_arn: str, label: str) -> str:
    return f"{table_arn}/stream/{label}"


def table_name_of_stream_arn(arn: str) -> str | None:
    """``arn:aws:dynamodb:r:a:table/<name>/stream/<label>`` -> name."""
    _, _, resource = arn.partition(":table/")
    name, marker, label = resource.partition("/stream/")
    return name if marker and name and label else None


STREAM_ARN_PATTERN = re.compile(
    r"arn:[a-z0-9-]+:dynamodb:[^:/|]+:[^:/|]+:table/[a-zA-Z0-9_.-]+/stream/[^|]+"
)
"""What a stream ARN looks like; anything else is refused with "Invalid
StreamArn" before any lookup (a well-formed ARN of no stream is "not found")."""


def is_stream_arn(text: Any) -> bool:
    return isinstance(text, str) and STREAM_ARN_PATTERN.fullmatch(text) is not None


def format_sequence(number: int) -> str:
    return f"{number:0{SEQUENCE_DIGITS}d}"


def parse_sequence(text: Any) -> int | None:
    """The number a SequenceNumber names, or None if it is not one of ours."""
    if not isinstance(text, str) or not text.isdigit() or not text.isascii():
        return None
    return int(text)


def exact_sequence(text: Any) -> int | None:
    """The number of a SequenceNumber given back exactly as it was issued
    (no added or dropped leading zeros), else None."""
    number = parse_sequence(text)
    return number if number is not None and format_sequence(number) == text else None


SHARD_ID_PATTERN = re.compile(r"shardId-[0-9]{20}-[0-9a-f]{8}")
"""DynamoDB's shard ids: the shard's creation time in milliseconds as 20
digits and 8 hex characters (the API reference's DescribeStream example,
``shardId-00000001414562045508-2bac9cd2``, and Lambda's DDBStreamBatchInfo
captures). Shards stored before 0.2 keep their ``shardId-`` + 21-digit ids:
records are filed under the id, and clients hold it in checkpoints."""


def shard_id_for(start: int, parent: str | None, created: float) -> str:
    """A shard id in DynamoDB's form. The digits are the creation time; the
    hex tag digests the parent (or the stream) and the first sequence number,
    so two shards of one stream opened in the same millisecond still differ."""
    created_millis = max(0, int(created * 1000))
    tag = hashlib.sha1(f"{parent or 'root'}|{start}".encode(), usedforsecurity=False).hexdigest()[:8]
    return f"shardId-{created_millis:020d}-{tag}"


# --- records ---------------------------------------------------------------------


def canonical(value: Any) -> Any:
    """An attribute value where set order does not matter (for change detection)."""
    if isinstance(value, dict):
        return {
            key: frozenset(inner) if key in ("SS", "NS", "BS") else canonical(inner)
            for key, inner in value.items()
        }
    if isinstance(value, list):
        return [canonical(element) for element in value]
    return value


def change_event(
    old_item: dict[str, Any] | None, new_item: dict[str, Any] | None, may_hold_sets: bool = True
) -> str | None:
    """INSERT, MODIFY or REMOVE; None when the write changed nothing.
    ``may_hold_sets=False`` skips the order-insensitive comparison of sets."""
    if old_item is None:
        return "INSERT" if new_item is not None else None
    if new_item is None:
        return "REMOVE"
    if old_item == new_item or (may_hold_sets and canonical(old_item) == canonical(new_item)):
        return None
    return "MODIFY"


def event_id(stream: str, sequence: int) -> str:
    """A stable 32-hex-digit eventID (DynamoDB's are opaque hex strings)."""
    return hashlib.md5(f"{stream}|{sequence}".encode(), usedforsecurity=False).hexdigest()


def build_record(
    *,
    stream: str,
    event: str,
    keys: dict[str, Any],
    old_item: dict[str, Any] | None,
    new_item: dict[str, Any] | None,
    view_type: str,
    sequence: int,
    now: float,
    region: str,
    by_service: bool = False,
    old_size: int | None = None,
    new_size: int | None = None,
) -> dict[str, Any]:
    """One GetRecords ``Record``, images chosen by the stream's view type.
    ``old_size``/``new_size`` are the images' DynamoDB sizes when the caller
    knows them already (stored rows carry theirs)."""
    body: dict[str, Any] = {"ApproximateCreationDateTime": int(now), "Keys": keys}
    size = item_size(keys)
    if new_item is not None and view_type in ("NEW_IMAGE", "NEW_AND_OLD_IMAGES"):
        body["NewImage"] = new_item
        size += item_size(new_item) if new_size is None else new_size
    if old_item is not None and view_type in ("OLD_IMAGE", "NEW_AND_OLD_IMAGES"):
        body["OldImage"] = old_item
        size += item_size(old_item) if old_size is None else old_size
    body["SequenceNumber"] = format_sequence(sequence)
    body["SizeBytes"] = size
    body["StreamViewType"] = view_type
    record: dict[str, Any] = {
        "eventID": event_id(stream, sequence),
        "eventName": event,
        "eventVersion": EVENT_VERSION,
        "eventSource": EVENT_SOURCE,
        "awsRegion": region,
        "dynamodb": body,
    }
    if by_service:
        record["userIdentity"] = dict(SERVICE_IDENTITY)
    return record


# --- shards and iterators ---------------------------------------------------------


@dataclass
class Shard:
    """One shard of a stream. ``end`` is its last sequence number once closed
    (None while open, or when it closed without records); ``trimmed`` is the
    highest sequence number already removed by the 24-hour retention."""

    shard_id: str
    parent: str | None
    start: int
    created: float
    closed: bool = False
    end: int | None = None
    trimmed: int = 0
    closed_at: float | None = None

    def to_json(self) -> bytes:
        # Sequence numbers exceed 64 bits: JSON carries them as text.
        raw: dict[str, Any] = {
            "shard_id": self.shard_id, "parent": self.parent, "start": str(self.start),
            "created": self.created, "trimmed": str(self.trimmed),
        }
        if self.closed:
            raw["closed_at"] = self.closed_at
            raw["end"] = None if self.end is None else str(self.end)
        return orjson.dumps(raw)

    @classmethod
    def from_json(cls, data: bytes) -> Shard:
        raw = orjson.loads(data)
        closed = "closed_at" in raw
        end = raw.get("end")
        return cls(raw["shard_id"], raw["parent"], int(raw["start"]), raw["created"],
                   closed=closed, end=None if end is None else int(end),
                   trimmed=int(raw.get("trimmed", 0)), closed_at=raw.get("closed_at"))

    def describe(self) -> dict[str, Any]:
        """A ``Shard`` of DescribeStream."""
        numbers: dict[str, str] = {"StartingSequenceNumber": format_sequence(self.start)}
        if self.closed:
            numbers["EndingSequenceNumber"] = format_sequence(
                self.end if self.end is not None else self.start
            )
        shard: dict[str, Any] = {"ShardId": self.shard_id, "SequenceNumberRange": numbers}
        if self.parent is not None:
            shard["ParentShardId"] = self.parent
        return shard


def retention_cutoff(now: float) -> float:
    """Records created before this moment are past the 24-hour retention."""
    return now - STREAM_RETENTION_SECONDS


def record_expired(record: bytes, now: float) -> bool:
    """Whether a stored GetRecords ``Record`` is past retention: gone for
    readers, whether or not the trimmer has removed it yet (the trimmer's own
    rule, store.StreamStore.trim)."""
    created = orjson.loads(record)["dynamodb"]["ApproximateCreationDateTime"]
    return bool(created < retention_cutoff(now))


def may_hold_expired(shard: Shard, now: float) -> bool:
    """Whether any record of the shard can be past retention (none can be
    older than the shard itself): readers decode records only then."""
    return shard.created < retention_cutoff(now)


def shard_expired(shard: Shard, now: float) -> bool:
    """A closed shard whose every record is past retention: it is gone from
    the stream (DescribeStream no longer lists it) even before the trimmer
    removes it."""
    return shard.closed and shard.closed_at is not None and shard.closed_at < retention_cutoff(now)


def stream_expired(status: str, disabled_at: float | None, now: float) -> bool:
    """A stream disabled more than 24 hours ago: every shard and record of it
    is past retention, so it is gone (ListStreams and DescribeStream no longer
    know it)."""
    return status != "ENABLED" and disabled_at is not None and disabled_at < retention_cutoff(now)


@dataclass(frozen=True)
class IteratorPosition:
    """What a shard iterator encodes: read records with sequence > ``after``."""

    stream: str
    shard_id: str
    after: int
    issued: float


ITERATOR_VERSION = "|1|"
"""A shard iterator is ``<stream ARN>|1|<base64>``, as DynamoDB's are."""
ITERATOR_TAG_BYTES = 16
_ITERATOR_KEY = b"dynastore shard iterator v1"
"""Keys the iterator's integrity tag. Not a secret (every server of a store
must accept every other's iterators): the tag makes an edited, truncated or
re-prefixed iterator invalid instead of a position nobody issued."""


def _iterator_tag(stream: str, payload: bytes) -> bytes:
    return hashlib.blake2b(stream.encode() + b"|" + payload, key=_ITERATOR_KEY,
                           digest_size=ITERATOR_TAG_BYTES).digest()


def encode_iterator(position: IteratorPosition) -> str:
    payload = orjson.dumps([position.shard_id, str(position.after), position.issued])
    token = base64.b64encode(_iterator_tag(position.stream, payload) + payload).decode()
    return f"{position.stream}{ITERATOR_VERSION}{token}"


def decode_iterator(text: Any) -> IteratorPosition | None:
    """The position a shard iterator names, or None unless it is exactly an
    iterator this module issued (any change to it makes it invalid)."""
    if not isinstance(text, str) or not text.isascii():
        return None
    stream, _, token = text.partition(ITERATOR_VERSION)
    if not token or not is_stream_arn(stream):
        return None
    try:
        raw = base64.b64decode(token.encode(), validate=True)
    except (ValueError, binascii.Error):
        return None
    if base64.b64encode(raw).decode() != token or len(raw) <= ITERATOR_TAG_BYTES:
        return None
    tag, payload = raw[:ITERATOR_TAG_BYTES], raw[ITERATOR_TAG_BYTES:]
    if not hmac.compare_digest(tag, _iterator_tag(stream, payload)):
        return None
    try:
        shard_id, after, issued = orjson.loads(payload)
    except (ValueError, TypeError, orjson.JSONDecodeError):
        return None
    after_number = parse_sequence(after)
    if not isinstance(shard_id, str) or after_number is None or not isinstance(issued, int | float):
        return None
    return IteratorPosition(stream, shard_id, after_number, float(issued))


LATEST_STREAM_EXTENSION = "stream_latest"
"""TableSchema.extensions key of the last stream once disabled: {"arn", "label"}
(DescribeTable keeps showing LatestStreamArn/LatestStreamLabel)."""


def stream_description(extensions: dict[str, Any]) -> dict[str, Any]:
    """StreamSpecification, LatestStreamLabel and LatestStreamArn of a
    TableDescription (nothing for a table that never had a stream)."""
    current = extensions.get(STREAM_EXTENSION)
    if current is not None:
        return {
            "StreamSpecification": {"StreamEnabled": True, "StreamViewType": current["view_type"]},
            "LatestStreamLabel": current["label"],
            "LatestStreamArn": current["arn"],
        }
    latest = extensions.get(LATEST_STREAM_EXTENSION)
    if latest is None:
        return {}
    return {"LatestStreamLabel": latest["label"], "LatestStreamArn": latest["arn"]}
