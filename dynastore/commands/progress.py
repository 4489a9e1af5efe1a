"""A job's progress bar and its one-line summary, for every command that
moves a table's items (backup and restore here; export and import reuse it).

    from dynastore.commands.progress import JobProgress, fail

    with JobProgress("Backing up orders", total_items=1000, total_bytes=2_000_000) as progress:
        while ...:
            progress.update(items=done_items, size_bytes=done_bytes)
        progress.done(f"Backed up orders to {arn}")   # the summary: items, bytes, time, rates

The bar (rich) goes to stderr and shows items and bytes done of the total,
the rate, and the time remaining; on a terminal it is redrawn in place,
elsewhere (a pipe, a CI log) it is not drawn and only the summary is
printed. The summary goes to stdout, so a script can read it. Totals may be
unknown (None) or grow as a job learns them; the bar's rate and ETA follow
bytes when the total size is known, items otherwise.

``fail(error)`` prints one clear line for an error (a DynamoDB error as
``TypeOfError: message``) and returns the exit code to use.
"""

from __future__ import annotations

import sys
import time
from types import TracebackType
from typing import Any, TextIO

EXIT_FAILED = 1
"""The exit code of a command whose job or call failed."""


def format_bytes(count: float) -> str:
    """1234567 -> '1.2 MB' (decimal units, as rich shows them)."""
    for unit in ("B", "kB", "MB", "GB", "TB"):
        if abs(count) < 1000 or unit == "TB":
            return f"{count:.0f} {unit}" if unit == "B" else f"{count:.1f} {unit}"
        count /= 1000
    raise AssertionError("unreachable")


def format_count(count: int) -> str:
    return f"{count:,}"


def summary_line(prefix: str, items: int, size_bytes: int, seconds: float) -> str:
    """'<prefix>: 1,000 items, 1.0 MB in 2.0 s (500 items/s, 500.0 kB/s)'."""
    rate_seconds = max(seconds, 1e-6)
    return (f"{prefix}: {format_count(items)} items, {format_bytes(size_bytes)} in {seconds:.1f} s "
            f"({format_count(round(items / rate_seconds))} items/s, {format_bytes(size_bytes / rate_seconds)}/s)")


def error_line(error: BaseException) -> str:
    """One line for ``error``: a DynamoDB error (botocore's ClientError) as
    ``Code: message``; anything else as its type's name and its text."""
    response = getattr(error, "response", None)
    if isinstance(response, dict) and isinstance(response.get("Error"), dict):
        details = response["Error"]
        code = details.get("Code") or type(error).__name__
        message = details.get("Message") or ""
        return f"{code}: {message}" if message else str(code)
    text = str(error)
    return f"{type(error).__name__}: {text}" if text else type(error).__name__


def fail(error: BaseException | str, stream: TextIO | None = None) -> int:
    """Print ``dynastore: error: ...`` (one line) on stderr; returns the exit code."""
    text = error if isinstance(error, str) else error_line(error)
    print(f"dynastore: error: {' '.join(text.split())}", file=stream or sys.stderr, flush=True)
    return EXIT_FAILED


class JobProgress:
    """A progress bar of items and bytes, then a summary (module docstring)."""

    def __init__(self, description: str, total_items: int | None = None, total_bytes: int | None = None,
                 *, stream: TextIO | None = None, out: TextIO | None = None) -> None:
        self.description = description
        self.total_items = total_items
        self.total_bytes = total_bytes
        self.items = 0
        self.size_bytes = 0
        self.started = time.monotonic()
        self._stream = stream or sys.stderr
        self._out = out or sys.stdout
        self._progress: Any = None
        self._task: Any = None

    # --- the bar -------------------------------------------------------------------
    def __enter__(self) -> JobProgress:
        from rich.console import Console
        from rich.progress import (
            BarColumn,
            Progress,
            TextColumn,
            TimeElapsedColumn,
            TimeRemainingColumn,
            TransferSpeedColumn,
        )

        console = Console(file=self._stream)
        self._progress = Progress(
            TextColumn("[bold]{task.description}"),
            BarColumn(),
            TextColumn("{task.fields[items]} items"),
            TextColumn("{task.fields[size]}"),
            TransferSpeedColumn(),
            TextColumn("{task.fields[item_rate]}"),
            TimeElapsedColumn(),
            TextColumn("ETA"),
            TimeRemainingColumn(),
            console=console,
            transient=True,
            disable=not console.is_terminal,
        )
        self._progress.start()
        self._task = self._progress.add_task(self.description, total=self._bar_total(), **self._fields())
        return self

    def __exit__(self, exc_type: type[BaseException] | None, exc: BaseException | None,
                 traceback: TracebackType | None) -> None:
        if self._progress is not None:
            self._progress.stop()
            self._progress = None

    def _bar_total(self) -> float | None:
        if self.total_bytes:
            return float(max(self.total_bytes, self.size_bytes))
        if self.total_items:
            return float(max(self.total_items, self.items))
        return None

    def _fields(self) -> dict[str, str]:
        items = format_count(self.items)
        if self.total_items is not None:
            items += f"/{format_count(max(self.total_items, self.items))}"
        size = format_bytes(self.size_bytes)
        if self.total_bytes is not None:
            size += f"/{format_bytes(max(self.total_bytes, self.size_bytes))}"
        elapsed = max(time.monotonic() - self.started, 1e-6)
        return {"items": items, "size": size, "item_rate": f"{format_count(round(self.items / elapsed))} items/s"}

    def update(self, *, items: int, size_bytes: int, total_items: int | None = None,
               total_bytes: int | None = None) -> None:
        """The job has done ``items`` items of ``size_bytes`` bytes so far."""
        self.items, self.size_bytes = items, size_bytes
        if total_items is not None:
            self.total_items = total_items
        if total_bytes is not None:
            self.total_bytes = total_bytes
        if self._progress is not None:
            completed = float(self.size_bytes if self.total_bytes else self.items)
            self._progress.update(self._task, completed=completed, total=self._bar_total(), **self._fields())

    # --- the end -------------------------------------------------------------------
    @property
    def seconds(self) -> float:
        return time.monotonic() - self.started

    def done(self, prefix: str, *, items: int | None = None, size_bytes: int | None = None) -> str:
        """Close the bar and print the summary line (returned too)."""
        if items is not None or size_bytes is not None:
            self.update(items=self.items if items is None else items,
                        size_bytes=self.size_bytes if size_bytes is None else size_bytes)
        self.__exit__(None, None, None)
        line = summary_line(prefix, self.items, self.size_bytes, self.seconds)
        print(line, file=self._out, flush=True)
        return line
