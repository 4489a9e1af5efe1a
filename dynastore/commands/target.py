"""Where a command works: a running server, or a data directory opened here.

    --endpoint URL   a DynamoDB-compatible endpoint (dynastore serve): boto3
                     calls DynamoDB's API, and the job's progress comes from
                     GET /_dynastore/backups/jobs, signed with SigV4
                     (botocore) so it reaches the region's tables and passes
                     ``serve --credentials`` (an ``admin`` key is needed then);
    --data-dir DIR   a SQLite data directory (no server may have it open),
                     opened through the embedded API (dynastore.open); the
                     background jobs run in this process, stepped on an event
                     loop of the command's while it waits (``pause``).

Credentials: --access-key-id / --secret-access-key, else the usual AWS
environment (variables, profile, ...), else a dummy key (a server without
``--credentials`` accepts any signed request). Region: --region, else the
AWS configuration's, else us-east-1.
"""

from __future__ import annotations

import argparse
import time
from typing import Any

DEFAULT_REGION = "us-east-1"
DUMMY_KEY = ("dynastore", "dynastore")
JOBS_PATH = "/_dynastore/backups/jobs"  # dynastore/backups/admin.py's ADMIN_JOBS_PATH (not imported: lazy)
HTTP_TIMEOUT_SECONDS = 30.0


def add_target_arguments(parser: argparse.ArgumentParser) -> None:
    where = parser.add_mutually_exclusive_group(required=True)
    where.add_argument("--endpoint", metavar="URL", help="a running server's URL (http://127.0.0.1:8000)")
    where.add_argument("--data-dir", metavar="DIR",
                       help="a SQLite data directory, opened here (no server may have it open)")
    parser.add_argument("--region", default=None, help=f"AWS region (default: the AWS configuration's, "
                        f"else {DEFAULT_REGION})")
    parser.add_argument("--access-key-id", default=None, help="access key (default: the AWS environment's)")
    parser.add_argument("--secret-access-key", default=None, help="its secret")


class Target:
    """A boto3 ``client`` of the place, its jobs' progress, and a way to wait."""

    def __init__(self, client: Any, credentials: Any, region: str) -> None:
        self.client = client
        self.credentials = credentials
        self.region = region

    def jobs(self) -> list[dict[str, Any]]:
        """The backups being made and the restores in progress or failed
        (GET /_dynastore/backups/jobs's ``Jobs``)."""
        raise NotImplementedError

    def pause(self, seconds: float) -> None:
        time.sleep(seconds)

    def close(self) -> None:
        pass

    def signed_headers(self, method: str, url: str) -> dict[str, str]:
        from botocore.auth import SigV4Auth
        from botocore.awsrequest import AWSRequest

        request = AWSRequest(method=method, url=url, headers={"Content-Type": "application/json"})
        SigV4Auth(self.credentials, "dynamodb", self.region).add_auth(request)
        return dict(request.headers.items())


class EndpointTarget(Target):
    def __init__(self, client: Any, credentials: Any, region: str, endpoint: str) -> None:
        super().__init__(client, credentials, region)
        self.endpoint = endpoint.rstrip("/")

    def jobs(self) -> list[dict[str, Any]]:
        import json
        import urllib.error
        import urllib.request

        url = self.endpoint + JOBS_PATH
        request = urllib.request.Request(url, headers=self.signed_headers("GET", url))
        try:
            with urllib.request.urlopen(request, timeout=HTTP_TIMEOUT_SECONDS) as reply:
                answer = json.loads(reply.read())
        except urllib.error.HTTPError as error:
            raise JobsUnavailable(_admin_error(error)) from None
        return list(answer.get("Jobs", []))


class DataDirTarget(Target):
    def __init__(self, client: Any, credentials: Any, region: str, embedded: Any, loop: Any) -> None:
        super().__init__(client, credentials, region)
        self.embedded = embedded
        self.loop = loop

    def jobs(self) -> list[dict[str, Any]]:
        import json

        url = "http://dynastore.embedded" + JOBS_PATH
        headers = {name.lower().encode("latin-1"): value.encode("latin-1")
                   for name, value in self.signed_headers("GET", url).items()}
        status, _, body, _ = self.embedded.handle_locked(b"GET", JOBS_PATH.encode(), headers, b"")
        answer = json.loads(body)
        if status != 200:
            raise JobsUnavailable(str(answer.get("message") or answer))
        return list(answer.get("Jobs", []))

    def pause(self, seconds: float) -> None:
        """Wait while the jobs take their steps (on this loop: see open_target)."""
        import asyncio

        self.loop.run_until_complete(asyncio.sleep(seconds))

    def close(self) -> None:
        self.embedded.close()
        self.loop.close()


class JobsUnavailable(Exception):
    """The jobs' progress could not be read (e.g. the key is not an admin key)."""


def _admin_error(error: Any) -> str:
    import json

    try:
        answer = json.loads(error.read())
        text = answer.get("message") or answer.get("Message") or str(answer)
        kind = str(answer.get("__type", "")).rpartition("#")[2]
    except (ValueError, AttributeError):
        text, kind = str(error), ""
    return f"{kind}: {text}" if kind else f"HTTP {error.code}: {text}"


def _credentials(arguments: argparse.Namespace) -> tuple[Any, str]:
    """(botocore frozen credentials, region) as the module docstring says."""
    import boto3

    session = boto3.Session(aws_access_key_id=arguments.access_key_id,
                            aws_secret_access_key=arguments.secret_access_key,
                            region_name=arguments.region)
    region = arguments.region or session.region_name or DEFAULT_REGION
    found = session.get_credentials()
    if found is None:
        from botocore.credentials import Credentials

        found = Credentials(*DUMMY_KEY)
    return found.get_frozen_credentials(), region


def client_config() -> Any:
    from botocore.config import Config

    # A command's calls are few: retry the throttled and the transient ones.
    return Config(retries={"max_attempts": 5, "mode": "standard"}, connect_timeout=10, read_timeout=60)


def open_target(arguments: argparse.Namespace) -> Target:
    credentials, region = _credentials(arguments)
    keys = {"aws_access_key_id": credentials.access_key, "aws_secret_access_key": credentials.secret_key,
            "aws_session_token": credentials.token, "region_name": region}
    if arguments.endpoint:
        from urllib.parse import urlsplit

        import boto3

        parts = urlsplit(arguments.endpoint)
        if parts.scheme not in ("http", "https") or not parts.netloc:
            raise ValueError(f"--endpoint must be an http(s) URL: {arguments.endpoint}")
        client = boto3.client("dynamodb", endpoint_url=arguments.endpoint, config=client_config(), **keys)
        return EndpointTarget(client, credentials, region, arguments.endpoint)
    import asyncio

    import dynastore

    embedded = dynastore.open(arguments.data_dir)
    # The jobs are scheduled on this loop, and take their steps while the
    # command waits (pause): so the bar moves (without a loop, a backup
    # would be made whole inside CreateBackup). A namespace's Database takes
    # the loop from the default one's (dynastore/namespaces.py).
    loop = asyncio.new_event_loop()
    embedded.database.background_loop = loop
    client = embedded.client(config=client_config(), **keys)
    return DataDirTarget(client, credentials, region, embedded, loop)
