"""Tags: keys and values checked as DynamoDB checks them, the per-resource
limit, and the Tags list as the tagging operations answer it."""

from __future__ import annotations

import unicodedata
from collections.abc import Mapping, Sequence
from typing import Any

from dynastore import limits
from dynastore.errors import ValidationException

TAG_PUNCTUATION = frozenset("_.:/=+-@")


def _valid_tag_text(text: str) -> bool:
    """AWS's tag pattern ^([\\p{L}\\p{Z}\\p{N}_.:/=+\\-@]*)$: letters, separators,
    numbers and a little punctuation, of any script."""
    return all(
        character in TAG_PUNCTUATION or unicodedata.category(character)[0] in "LZN"
        for character in text
    )


def check_tag_key(key: Any) -> str:
    if key is None:
        raise ValidationException("The Tag Key provided is invalid, Key: null")
    if not 1 <= len(key) <= limits.TAG_KEY_MAX_LENGTH or not _valid_tag_text(key):
        raise ValidationException(f"The Tag Key provided is invalid, Key: {key}")
    if key.lower().startswith("aws:"):
        raise ValidationException(f"Tag Key cannot be prefixed with aws:, Key: {key}")
    return str(key)


def check_tag_value(value: Any) -> str:
    if value is None:
        raise ValidationException("The Tag Value provided is invalid, Value: null")
    if len(value) > limits.TAG_VALUE_MAX_LENGTH or not _valid_tag_text(value):
        raise ValidationException(f"The Tag Value provided is invalid, Value: {value}")
    return str(value)


def too_many_tags() -> ValidationException:
    return ValidationException(
        "Number of Tags exceed the current limit for the provided ResourceArn"
    )


def validate_tags(
    tags: Sequence[Mapping[str, Any]], *, required: bool = True
) -> tuple[tuple[str, str], ...]:
    """A Tags list as (key, value) pairs, checked as DynamoDB checks it (all or nothing)."""
    if not tags and required:
        raise ValidationException("Atleast one Tag needs to be provided as Input.")
    pairs: dict[str, str] = {}
    for tag in tags:
        key = check_tag_key(tag.get("Key"))
        value = check_tag_value(tag.get("Value"))
        if key in pairs:
            raise ValidationException(
                f"Duplicate Tag Keys provided as input: Duplicate Tag Key found {key}"
            )
        pairs[key] = value
    if len(pairs) > limits.TAGS_PER_RESOURCE:
        raise too_many_tags()
    return tuple(pairs.items())


def merge_tags(
    current: Sequence[tuple[str, str]], added: Sequence[tuple[str, str]]
) -> tuple[tuple[str, str], ...]:
    """TagResource upserts; the 50-tag limit applies to the merged set."""
    merged = dict(current)
    merged.update(added)
    if len(merged) > limits.TAGS_PER_RESOURCE:
        raise too_many_tags()
    return tuple(merged.items())


def validate_tag_keys(keys: Sequence[Any]) -> list[str]:
    if not keys:
        raise ValidationException("Atleast one Tag Key needs to be provided as Input.")
    checked = [check_tag_key(key) for key in keys]
    if len(checked) > limits.TAGS_PER_RESOURCE:
        raise too_many_tags()
    return checked


def tags_description(tags: Sequence[tuple[str, str]]) -> list[dict[str, str]]:
    return [{"Key": key, "Value": value} for key, value in tags]
