"""HTTPS for ``dynastore serve``: the certificate settings, the server's
``ssl.SSLContext``, and the TLS transport of the front's reactor (ADR 0007).

The engine (asyncio, uvloop) serves TLS with the loop's own SSL transport
(``ssl=`` on ``create_server`` / ``connect_accepted_socket``). The front runs
on protocol/reactor.py, so its connections get ``TlsTransport`` here: a
``reactor.SocketTransport`` over a non-blocking ``ssl.SSLSocket``. Both
processes build their context from the same two files; the engine checks
them before it listens, so a bad certificate or key stops the server at
start with one line.

Nothing here is imported on a plain-HTTP server: the front imports this
module (and with it ssl, libssl and libcrypto) only when TLS is on.
"""

from __future__ import annotations

import logging
import os
import socket
import ssl
from collections.abc import Iterable, Mapping
from dataclasses import dataclass
from typing import Any

from dynastore.protocol.reactor import _BROKEN, _IN, _OUT, READ_BYTES, Reactor, SocketTransport

logger = logging.getLogger("dynastore.server")

CERT_VARIABLE = "DYNASTORE_TLS_CERT"
KEY_VARIABLE = "DYNASTORE_TLS_KEY"
WRITE_CHUNK_BYTES = 256 * 1024
"""The most handed to one SSL write (16 records of 16 KiB); a larger reply
body is written in slices of it, each retried unchanged until it is taken."""
COALESCE_BYTES = 64 * 1024
"""Parts written together below this size are joined into one SSL write (one
record, not one per part)."""


class TlsConfigurationError(Exception):
    """The certificate settings are incomplete, or a file is unreadable or invalid."""


@dataclass(frozen=True)
class TlsSettings:
    """The certificate chain and key files (absolute paths) and the context made from them."""

    cert_path: str
    key_path: str
    context: ssl.SSLContext


def settings_from(
    cert_path: str | None, key_path: str | None, environment: Mapping[str, str] = os.environ
) -> TlsSettings | None:
    """TLS settings from ``--tls-cert``/``--tls-key`` (or ``$DYNASTORE_TLS_CERT``
    / ``$DYNASTORE_TLS_KEY``); None when neither is set. Raises
    ``TlsConfigurationError`` when only one is, or a file cannot be used."""
    cert_path = cert_path or environment.get(CERT_VARIABLE) or None
    key_path = key_path or environment.get(KEY_VARIABLE) or None
    if cert_path is None and key_path is None:
        return None
    if key_path is None:
        raise TlsConfigurationError(f"--tls-cert needs --tls-key (or ${KEY_VARIABLE}) too")
    if cert_path is None:
        raise TlsConfigurationError(f"--tls-key needs --tls-cert (or ${CERT_VARIABLE}) too")
    cert_path, key_path = os.path.abspath(cert_path), os.path.abspath(key_path)
    return TlsSettings(cert_path, key_path, server_context(cert_path, key_path))


def server_context(cert_path: str, key_path: str) -> ssl.SSLContext:
    """A server context: the standard library's defaults for serving clients
    (ssl.Purpose.CLIENT_AUTH: no client certificate asked, no compression,
    OpenSSL's default ciphers), TLS 1.2 at least, no renegotiation, HTTP/1.1
    offered by ALPN."""
    for role, path in (("certificate", cert_path), ("key", key_path)):
        try:
            with open(path, "rb"):
                pass
        except OSError as error:
            raise TlsConfigurationError(
                f"cannot read the TLS {role} {path}: {error.strerror or error}"
            ) from error
    context = ssl.create_default_context(ssl.Purpose.CLIENT_AUTH)
    context.minimum_version = ssl.TLSVersion.TLSv1_2
    context.options |= ssl.OP_NO_RENEGOTIATION  # TLS 1.2 clients may not renegotiate (a DoS)
    context.set_alpn_protocols(["http/1.1"])
    try:
        context.load_cert_chain(cert_path, key_path, password=_no_passphrase)
    except (ssl.SSLError, ValueError, OSError) as error:
        raise TlsConfigurationError(
            f"invalid TLS certificate or key ({cert_path}, {key_path}): {error}"
        ) from error
    return context


def _no_passphrase() -> bytes:
    """An encrypted key would make OpenSSL ask on the terminal: refuse it instead."""
    raise ValueError("the key is encrypted; dynastore needs it without a passphrase")


def tls_socket_connector(context: ssl.SSLContext) -> Any:
    """``reactor.connect``'s TLS twin for the front: serve a handed-over
    socket with ``protocol`` over TLS (the handshake runs on the reactor)."""

    def connect(reactor: Reactor, sock: socket.socket, protocol: Any) -> TlsTransport:
        sock.setblocking(False)
        wrapped = context.wrap_socket(sock, server_side=True, do_handshake_on_connect=False)
        return TlsTransport(reactor, wrapped, protocol)

    return connect


def is_handshake_failure(error: BaseException | None) -> bool:
    """Whether a connection failed in a way a client causes (a plain-HTTP
    request to the TLS port, an untrusted certificate, a reset): worth a
    debug line at most."""
    return isinstance(error, (ssl.SSLError, ConnectionError, TimeoutError))


class TlsTransport(SocketTransport):
    """A ``SocketTransport`` over a non-blocking ``ssl.SSLSocket``.

    The handshake runs first, driven by readiness (``SSLWantReadError``:
    wait to read, ``SSLWantWriteError``: wait to write); if it fails (a
    plain-HTTP client, a client that does not trust the certificate) the
    connection is dropped and a debug line logged. ``connection_made`` is
    called at once, so the listener's idle and stalled-request timeouts
    bound a client that never finishes its handshake.

    Reads take every decrypted byte OpenSSL holds (``pending()``), so
    nothing waits inside the SSL object while epoll sees an idle socket.
    Writes keep the plain transport's buffer and water marks; an SSL write
    that could not finish is retried with the same bytes (OpenSSL's rule).
    Either direction may need the other (TLS 1.3's key updates): a read
    that wants to write waits for EPOLLOUT, a write that wants to read for
    EPOLLIN. ``close`` sends close_notify once the buffer is flushed;
    ``abort`` does not."""

    __slots__ = ("_handshaking", "_handshake_wants_write", "_read_wants_write",
                 "_write_wants_read", "_aborted")

    _sock: ssl.SSLSocket

    def __init__(self, reactor: Reactor, sock: ssl.SSLSocket, protocol: Any) -> None:
        self._handshaking = True
        self._handshake_wants_write = False
        self._read_wants_write = False
        self._write_wants_read = False
        self._aborted = False
        super().__init__(reactor, sock, protocol)
        if not self._closed:
            # The client has usually sent its ClientHello by the time the
            # socket is handed over: start now rather than a turn later.
            self._handshake()

    def get_extra_info(self, name: str, default: Any = None) -> Any:
        if name == "ssl_object":
            return self._sock
        if name == "peercert":
            return self._sock.getpeercert()
        return super().get_extra_info(name, default)

    def writelines(self, parts: Iterable[bytes]) -> None:
        if self._closing:
            return
        parts = [part for part in parts if part]
        if not parts:
            return
        total = sum(len(part) for part in parts)
        if len(parts) > 1 and total < COALESCE_BYTES:
            parts = [b"".join(parts)]
        idle = not self._buffer
        self._buffer.extend(parts)
        self._buffered += total
        if idle and not self._handshaking and not self._write_wants_read:
            self._flush()
            if self._closed:
                return
        self._update_mask()
        self._check_high_water()

    def abort(self) -> None:
        self._aborted = True
        super().abort()

    # --- the reactor's side -------------------------------------------------------
    def _ready(self, events: int) -> None:
        if self._handshaking:
            self._handshake()
            return
        if events & (_IN | _BROKEN):
            if self._write_wants_read and self._buffer:
                self._flush()
                if self._closed:
                    return
            if self._reading and not self._read_wants_write:
                self._read()
                if self._closed:
                    return
        if events & (_OUT | _BROKEN):
            if self._read_wants_write and self._reading:
                self._read()
                if self._closed:
                    return
            if self._buffer and not self._write_wants_read:
                self._flush()
                if self._closed:
                    return
        self._update_mask()
        if self._protocol_paused and self._buffered <= self._low_water:
            self._protocol_paused = False
            self._protocol.resume_writing()
        elif events & _BROKEN and not self._reading and not self._buffer and not self._closed:
            self._lost(ConnectionResetError("connection lost"))

    def _handshake(self) -> None:
        try:
            self._sock.do_handshake()
        except ssl.SSLWantReadError:
            self._handshake_wants_write = False
        except ssl.SSLWantWriteError:
            self._handshake_wants_write = True
        except (ssl.SSLError, OSError, ValueError) as error:
            logger.debug("TLS handshake failed: %s", error)
            self.abort()
            return
        else:
            self._handshaking = False
            if self._buffer:
                self._flush()
                if self._closed:
                    return
            if self._reading:  # the first request often comes with the handshake's end
                self._read()
                if self._closed:
                    return
        self._update_mask()

    def _read(self) -> None:
        self._read_wants_write = False
        sock = self._sock
        try:
            data = sock.recv(READ_BYTES)
            if data and sock.pending():
                parts = [data]
                while sock.pending():
                    parts.append(sock.recv(READ_BYTES))
                data = b"".join(parts)
        except ssl.SSLWantReadError:
            return
        except ssl.SSLWantWriteError:
            self._read_wants_write = True
            self._update_mask()
            return
        except (ssl.SSLError, OSError) as error:
            self._lost(error)
            return
        if data:
            self._protocol.data_received(data)
        else:  # close_notify or end of stream
            self.close()

    def _flush(self) -> None:
        self._write_wants_read = False
        buffer = self._buffer
        sock = self._sock
        while buffer:
            head = buffer[0]
            chunk = head if len(head) <= WRITE_CHUNK_BYTES else memoryview(head)[:WRITE_CHUNK_BYTES]
            try:
                sent = sock.send(chunk)
            except ssl.SSLWantWriteError:
                return
            except ssl.SSLWantReadError:
                self._write_wants_read = True
                return
            except (ssl.SSLError, OSError) as error:
                self._lost(error)
                return
            self._buffered -= sent
            if sent >= len(head):
                buffer.popleft()
            else:
                buffer[0] = memoryview(head)[sent:]
        if self._closing:
            self._lost(None)

    def _update_mask(self) -> None:
        if self._closed:
            return
        if self._handshaking:
            mask = _OUT if self._handshake_wants_write else _IN
        else:
            # A direction waiting on the other is watched only while it has
            # something to do (level-triggered epoll would report it forever).
            buffered = bool(self._buffer)
            wants_in = (self._reading and not self._read_wants_write) or (
                self._write_wants_read and buffered
            )
            wants_out = (buffered and not self._write_wants_read) or (
                self._read_wants_write and self._reading
            )
            mask = (_IN if wants_in else 0) | (_OUT if wants_out else 0)
        if mask != self._mask:
            self._mask = mask
            self._reactor._epoll.modify(self._fd, mask)

    def _lost(self, error: Exception | None) -> None:
        if self._closed:
            return
        if error is None and not self._aborted and not self._handshaking:
            try:  # close_notify, without waiting for the client's
                self._sock.unwrap()
            except (ssl.SSLError, OSError, ValueError):
                pass
        elif error is not None and is_handshake_failure(error):
            logger.debug("a TLS connection failed: %s", error)
        super()._lost(error)
