"""Replay the control-plane error texts captured on the live service
(tests/api/ack_captures.py) against an endpoint and report each difference.

    python tools/compare_captures.py                  # a fresh in-memory server
    python tools/compare_captures.py --endpoint URL   # any endpoint

Prints one line per capture (MATCH, ORDER or DIFF, the label, what was expected and
what came back) and a count at the end; exits 1 when any differs.
"""

from __future__ import annotations

import argparse
import sys
import uuid
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parent.parent))

from tests.api.ack_captures import (  # noqa: E402
    CAPTURES,
    EXACT,
    SAME_ERRORS,
    compare,
    fill,
    prepare,
    replay,
    tear_down,
)
from tests.api.conftest import make_client, start_server, stop_server  # noqa: E402


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--endpoint", help="the endpoint to check (default: a fresh dynastore --in-memory)")
    arguments = parser.parse_args()
    process = None
    endpoint = arguments.endpoint
    if endpoint is None:
        process, endpoint = start_server("--in-memory")
    try:
        return report(make_client(endpoint))
    finally:
        if process is not None:
            stop_server(process)


def report(client: object) -> int:
    prefix = f"cap-{uuid.uuid4().hex[:8]}"
    names = prepare(client, prefix)
    differing = reordered = 0
    try:
        for number, capture in enumerate(CAPTURES):
            new_name = f"{prefix}-new{number}"
            got = replay(client, capture, names, new_name)
            verdict = compare(capture, got, {**names, "NEW": new_name})
            if verdict == EXACT:
                print(f"MATCH {capture.label}")
                continue
            if verdict == SAME_ERRORS:
                reordered += 1
                print(f"ORDER {capture.label}: the same errors in another order\n      got      {got}")
                continue
            differing += 1
            expected = (capture.code, fill(capture.message, {**names, "NEW": new_name}))
            print(f"DIFF  {capture.label} [{capture.operation}, {capture.shape}]\n"
                  f"      expected {expected}{' (prefix)' if capture.prefix else ''}\n      got      {got}")
    finally:
        tear_down(client, names)
    exact = len(CAPTURES) - differing - reordered
    print(f"{len(CAPTURES)} captures: {exact} match, {reordered} list the same errors in another order, "
          f"{differing} differ")
    return 1 if differing else 0


if __name__ == "__main__":
    sys.exit(main())
