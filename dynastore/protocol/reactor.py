"""A small epoll event loop: what the HTTP front process runs on (ADR 0003).

The front moves bytes between sockets and parses HTTP; of an event loop it
needs non-blocking sockets with write buffering and back-pressure, a timer
(the once-a-second tick) and a signal (SIGTERM), nothing else. asyncio
(which imports ssl, logging's handlers, concurrent.futures, subprocess,
inspect, typing) and uvloop made up 12 MiB of the front's 25 MiB RSS; this
module imports only the standard library's C-backed basics. The engine
process keeps asyncio and uvloop (ADR 0000).

The transports follow asyncio's protocol contract closely enough that
``http.HttpConnection`` and the front's link run on either loop unchanged:
``connection_made(transport)``, ``data_received(bytes)``,
``connection_lost(exc)`` (always called later, from the loop, never inside
``close``/``abort``), ``pause_writing``/``resume_writing`` around the write
buffer's high and low water marks; and ``write``, ``writelines``, ``close``
(after the buffer is flushed), ``abort`` (now, the buffer dropped),
``pause_reading``/``resume_reading``, ``set_write_buffer_limits``,
``get_extra_info("socket")``. An end of stream closes the transport, as an
asyncio protocol without ``eof_received`` does.

Level-triggered epoll; one ``recv`` per readable socket per turn (so one
busy client cannot starve the others); writes go out at once when the
socket takes them and are buffered (and watched for EPOLLOUT) when it does
not.
"""

from __future__ import annotations

import heapq
import logging
import select
import signal
import socket
import time
from collections import deque
from collections.abc import Callable, Iterable
from typing import Any

logger = logging.getLogger("dynastore.front")

READ_BYTES = 256 * 1024
"""Bytes taken from a socket per read (a link read carries many replies)."""
HIGH_WATER_BYTES = 64 * 1024
"""Write buffer above which the protocol is told to pause (asyncio's default)."""
LOW_WATER_BYTES = 16 * 1024
SEND_PARTS_MAX = 64
"""Buffers handed to one sendmsg (far below IOV_MAX, 1024 on Linux)."""

_IN = select.EPOLLIN
_OUT = select.EPOLLOUT
_BROKEN = select.EPOLLHUP | select.EPOLLERR


class TimerHandle:
    """A callback due at a time of the reactor's clock; ``cancel`` drops it."""

    __slots__ = ("_when", "callback", "cancelled")

    def __init__(self, when: float, callback: Callable[[], object]) -> None:
        self._when = when
        self.callback = callback
        self.cancelled = False

    def when(self) -> float:
        return self._when

    def cancel(self) -> None:
        self.cancelled = True


class Reactor:
    """Sockets, timers, signals and callbacks on one epoll set."""

    def __init__(self) -> None:
        self._epoll = select.epoll()
        self._transports: dict[int, SocketTransport] = {}
        self._readers: dict[int, Callable[[], object]] = {}
        self._timers: list[tuple[float, int, TimerHandle]] = []
        self._timer_sequence = 0
        self._soon: deque[tuple[Callable[..., object], tuple[Any, ...]]] = deque()
        self._signal_callbacks: dict[int, Callable[[], object]] = {}
        self._signal_wakeup: tuple[socket.socket, socket.socket] | None = None
        self._stopped = False

    # --- time and callbacks ---------------------------------------------------
    def time(self) -> float:
        return time.monotonic()

    def call_at(self, when: float, callback: Callable[[], object]) -> TimerHandle:
        handle = TimerHandle(when, callback)
        self._timer_sequence += 1
        heapq.heappush(self._timers, (when, self._timer_sequence, handle))
        return handle

    def call_later(self, delay: float, callback: Callable[[], object]) -> TimerHandle:
        return self.call_at(self.time() + delay, callback)

    def call_soon(self, callback: Callable[..., object], *arguments: Any) -> None:
        self._soon.append((callback, arguments))

    # --- descriptors ----------------------------------------------------------
    def add_reader(self, fd: int, callback: Callable[[], object]) -> None:
        """Call ``callback`` whenever ``fd`` is readable (level-triggered)."""
        if fd in self._readers:
            self._readers[fd] = callback
            return
        self._readers[fd] = callback
        self._epoll.register(fd, _IN)

    def remove_reader(self, fd: int) -> None:
        if self._readers.pop(fd, None) is not None:
            self._epoll.unregister(fd)

    def connect(self, sock: socket.socket, protocol: Any) -> SocketTransport:
        """Serve a connected socket with ``protocol`` (``connection_made`` is
        called before this returns)."""
        return SocketTransport(self, sock, protocol)

    def add_signal_handler(self, signal_number: int, callback: Callable[[], object]) -> None:
        """Run ``callback`` on the loop when the signal arrives."""
        if self._signal_wakeup is None:
            receiving, sending = socket.socketpair()
            receiving.setblocking(False)
            sending.setblocking(False)
            signal.set_wakeup_fd(sending.fileno(), warn_on_full_buffer=False)
            self._signal_wakeup = (receiving, sending)
            self.add_reader(receiving.fileno(), self._read_signals)
        self._signal_callbacks[signal_number] = callback
        # The Python-level handler does nothing: the wakeup descriptor carries
        # the signal's number to the loop, which runs the callback there.
        signal.signal(signal_number, _ignore_in_handler)

    def _read_signals(self) -> None:
        assert self._signal_wakeup is not None
        try:
            numbers = self._signal_wakeup[0].recv(4096)
        except (BlockingIOError, InterruptedError):
            return
        for number in numbers:
            callback = self._signal_callbacks.get(number)
            if callback is not None:
                self.call_soon(callback)

    # --- running ----------------------------------------------------------------
    def stop(self) -> None:
        """Return from ``run`` after the current turn."""
        self._stopped = True

    def run(self) -> None:
        """Turn until ``stop`` is called."""
        self._stopped = False
        epoll = self._epoll
        transports = self._transports
        readers = self._readers
        timers = self._timers
        soon = self._soon
        while not self._stopped:
            if soon:
                timeout = 0.0
            elif timers:
                timeout = max(0.0, timers[0][0] - time.monotonic())
            else:
                timeout = -1.0
            for fd, events in epoll.poll(timeout):
                transport = transports.get(fd)
                if transport is not None:
                    try:
                        transport._ready(events)
                    except Exception:
                        # As asyncio does: a protocol that fails loses its
                        # connection; the loop and the other connections go on.
                        logger.exception("a connection's protocol failed; closing it")
                        transport.abort()
                    continue
                reader = readers.get(fd)
                if reader is not None:
                    _run_callback(reader, ())
            if timers:
                now = time.monotonic()
                while timers and timers[0][0] <= now:
                    handle = heapq.heappop(timers)[2]
                    if not handle.cancelled:
                        _run_callback(handle.callback, ())
            # Only what was queued before this point: a callback that queues
            # another does not keep the loop from polling.
            for _ in range(len(soon)):
                callback, arguments = soon.popleft()
                _run_callback(callback, arguments)

    def close(self) -> None:
        """Drop every transport and descriptor (after ``run`` returned)."""
        for transport in list(self._transports.values()):
            transport.abort()
        if self._signal_wakeup is not None:
            signal.set_wakeup_fd(-1)
            for sock in self._signal_wakeup:
                sock.close()
            self._signal_wakeup = None
        self._epoll.close()


def _run_callback(callback: Callable[..., object], arguments: tuple[Any, ...]) -> None:
    try:
        callback(*arguments)
    except Exception:
        logger.exception("a callback failed: %r", callback)


def _ignore_in_handler(signal_number: int, frame: object) -> None:
    """The loop runs the signal's callback (Reactor.add_signal_handler)."""


class SocketTransport:
    """A connected, non-blocking socket between the reactor and a protocol."""

    __slots__ = (
        "_reactor", "_sock", "_fd", "_protocol", "_buffer", "_buffered", "_reading",
        "_closing", "_closed", "_mask", "_high_water", "_low_water", "_protocol_paused",
    )

    def __init__(self, reactor: Reactor, sock: socket.socket, protocol: Any) -> None:
        sock.setblocking(False)
        self._reactor = reactor
        self._sock = sock
        self._fd = sock.fileno()
        self._protocol = protocol
        self._buffer: deque[bytes | memoryview] = deque()
        self._buffered = 0
        self._reading = True
        self._closing = False
        self._closed = False
        self._high_water = HIGH_WATER_BYTES
        self._low_water = LOW_WATER_BYTES
        self._protocol_paused = False
        self._mask = _IN
        reactor._transports[self._fd] = self
        reactor._epoll.register(self._fd, _IN)
        protocol.connection_made(self)

    # --- asyncio.Transport's methods that the protocols here use -------------
    def get_extra_info(self, name: str, default: Any = None) -> Any:
        return self._sock if name == "socket" else default

    def is_closing(self) -> bool:
        return self._closing

    def get_write_buffer_size(self) -> int:
        return self._buffered

    def set_write_buffer_limits(self, high: int | None = None, low: int | None = None) -> None:
        self._high_water = HIGH_WATER_BYTES if high is None else high
        self._low_water = min(self._high_water, LOW_WATER_BYTES if low is None else low)

    def pause_reading(self) -> None:
        if self._reading:
            self._reading = False
            self._update_mask()

    def resume_reading(self) -> None:
        if not self._reading and not self._closing:
            self._reading = True
            self._update_mask()

    def write(self, data: bytes) -> None:
        self.writelines((data,))

    def writelines(self, parts: Iterable[bytes]) -> None:
        """Write ``parts`` in order without joining them (one sendmsg)."""
        if self._closing:
            return
        if type(parts) is not list and type(parts) is not tuple:
            parts = list(parts)
        if self._buffer or len(parts) > SEND_PARTS_MAX:
            # Behind what is already waiting (or too many for one sendmsg): queue.
            idle = not self._buffer
            for part in parts:
                if part:
                    self._buffer.append(part)
                    self._buffered += len(part)
            if idle:
                self._flush()
                self._update_mask()
            self._check_high_water()
            return
        try:
            sent = self._sock.sendmsg(parts)
        except (BlockingIOError, InterruptedError):
            sent = 0
        except OSError as error:
            self._lost(error)
            return
        for part in parts:  # what the socket did not take is buffered
            if sent >= len(part):
                sent -= len(part)
                continue
            rest = memoryview(part)[sent:] if sent else part
            sent = 0
            self._buffer.append(rest)
            self._buffered += len(rest)
        if self._buffer:
            self._update_mask()
            self._check_high_water()

    def close(self) -> None:
        """Stop reading; close once everything written has been sent."""
        if self._closing:
            return
        self._closing = True
        self._reading = False
        if self._buffer:
            self._update_mask()
        else:
            self._lost(None)

    def abort(self) -> None:
        """Close now; what was not sent yet is dropped."""
        self._closing = True
        self._lost(None)

    # --- the reactor's side -------------------------------------------------------
    def _ready(self, events: int) -> None:
        if self._reading and events & (_IN | _BROKEN):
            self._read()
            if self._closed:
                return
        if self._buffer and events & (_OUT | _BROKEN):
            self._flush()
            if self._closed:
                return
            self._update_mask()
            if self._protocol_paused and self._buffered <= self._low_water:
                self._protocol_paused = False
                self._protocol.resume_writing()
        elif events & _BROKEN and not self._reading and not self._closed:
            # Hung up or failed while not being read and with nothing to send:
            # level-triggered epoll would report it on every turn.
            self._lost(ConnectionResetError("connection lost"))

    def _read(self) -> None:
        try:
            data = self._sock.recv(READ_BYTES)
        except (BlockingIOError, InterruptedError):
            return
        except OSError as error:
            self._lost(error)
            return
        if data:
            self._protocol.data_received(data)
        else:  # end of stream: asyncio closes a transport whose protocol has no eof_received
            self.close()

    def _flush(self) -> None:
        """Send what the socket takes from the buffer; on success the buffer
        shrinks, on failure the transport is lost."""
        buffer = self._buffer
        while buffer:
            parts = list(buffer) if len(buffer) <= SEND_PARTS_MAX else [
                buffer[index] for index in range(SEND_PARTS_MAX)
            ]
            try:
                sent = self._sock.sendmsg(parts)
            except (BlockingIOError, InterruptedError):
                return
            except OSError as error:
                self._lost(error)
                return
            self._buffered -= sent
            while sent:
                head = buffer[0]
                if sent >= len(head):
                    sent -= len(head)
                    buffer.popleft()
                else:
                    buffer[0] = memoryview(head)[sent:]
                    sent = 0
                    return  # the socket is full
        if self._closing:
            self._lost(None)

    def _update_mask(self) -> None:
        if self._closed:
            return
        mask = (_IN if self._reading else 0) | (_OUT if self._buffer else 0)
        if mask != self._mask:
            self._mask = mask
            self._reactor._epoll.modify(self._fd, mask)

    def _check_high_water(self) -> None:
        if not self._protocol_paused and self._buffered > self._high_water:
            self._protocol_paused = True
            self._protocol.pause_writing()

    def _lost(self, error: Exception | None) -> None:
        if self._closed:
            return
        self._closed = True
        self._closing = True
        self._reading = False
        self._buffer.clear()
        self._buffered = 0
        reactor = self._reactor
        del reactor._transports[self._fd]
        reactor._epoll.unregister(self._fd)
        self._sock.close()
        reactor.call_soon(self._protocol.connection_lost, error)
