"""Where tables live: an (account, region) namespace, as on DynamoDB.

A table named ``Music`` in us-west-2 of account 111122223333 is another
table than ``Music`` in us-east-1, and neither exists for a client of
another account. Every namespace's tables, indexes, streams and dynastore's
own bookkeeping tables share one store; their storage names carry the
namespace as a prefix (``111122223333:us-west-2:Music``). The default
namespace (account 000000000000, us-east-1) has no prefix: a data directory
or database written before namespaces existed holds exactly its tables, so
it opens unchanged with them in the default namespace.

A ':' never occurs in a table name, an index name or dynastore's own storage
names, so the prefix can always be told apart.
"""

from __future__ import annotations

import re
from typing import NamedTuple

DEFAULT_ACCOUNT_ID = "000000000000"
DEFAULT_REGION = "us-east-1"
REGION_PATTERN = re.compile(r"[A-Za-z0-9-]{1,64}")
"""What dynastore takes as a region name from a credential scope (AWS's are
lower-case words and a digit; local tools use names like ``local``)."""
_PREFIX = re.compile(r"(\d{12}):([A-Za-z0-9-]{1,64}):")


class Namespace(NamedTuple):
    account_id: str
    region: str


DEFAULT_NAMESPACE = Namespace(DEFAULT_ACCOUNT_ID, DEFAULT_REGION)


def storage_prefix(namespace: Namespace) -> str:
    """The prefix of every storage name of ``namespace`` ('' for the default one)."""
    if namespace == DEFAULT_NAMESPACE:
        return ""
    return f"{namespace.account_id}:{namespace.region}:"


def namespace_of_storage_name(name: str) -> tuple[Namespace, str]:
    """The namespace a storage name belongs to, and the name within it."""
    match = _PREFIX.match(name)
    if match is None:
        return DEFAULT_NAMESPACE, name
    return Namespace(match.group(1), match.group(2)), name[match.end():]
