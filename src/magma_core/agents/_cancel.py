"""Cancelling HTTP requests in flight: shut down the sockets a client is blocked on.

Closing an httpx client from another thread does not wake a thread blocked reading a reply
(a local model may take minutes to answer). :func:`cancellable_transport` gives an
``httpx.HTTPTransport`` whose connections are tracked; :meth:`SocketTracker.shutdown_all`
shuts them down, so every blocked read returns at once with an error.
"""

from __future__ import annotations

import socket
import threading
from typing import Any

import httpcore
import httpx


class _TrackedStream(httpcore.NetworkStream):
    """A network stream that tells its tracker about itself and about its TLS successor."""

    def __init__(self, stream: httpcore.NetworkStream, tracker: SocketTracker) -> None:
        self._stream = stream
        self._tracker = tracker
        tracker._add(self)

    def read(self, max_bytes: int, timeout: float | None = None) -> bytes:
        return self._stream.read(max_bytes, timeout)

    def write(self, buffer: bytes, timeout: float | None = None) -> None:
        self._stream.write(buffer, timeout)

    def close(self) -> None:
        self._tracker._discard(self)
        self._stream.close()

    def start_tls(self, ssl_context: Any, server_hostname: str | None = None,
                  timeout: float | None = None) -> httpcore.NetworkStream:
        self._tracker._discard(self)
        return _TrackedStream(self._stream.start_tls(ssl_context, server_hostname, timeout), self._tracker)

    def get_extra_info(self, info: str) -> Any:
        return self._stream.get_extra_info(info)

    def shutdown(self) -> None:
        sock = self._stream.get_extra_info("socket")
        if isinstance(sock, socket.socket):
            try:
                sock.shutdown(socket.SHUT_RDWR)
            except OSError:  # already closed
                pass


class SocketTracker(httpcore.NetworkBackend):
    """httpcore's synchronous backend, remembering the streams it opened."""

    def __init__(self) -> None:
        self._backend = httpcore.SyncBackend()
        self._streams: set[_TrackedStream] = set()
        self._lock = threading.Lock()

    def connect_tcp(self, host: str, port: int, timeout: float | None = None,
                    local_address: str | None = None, socket_options: Any = None) -> httpcore.NetworkStream:
        stream = self._backend.connect_tcp(host, port, timeout, local_address, socket_options)
        return _TrackedStream(stream, self)

    def connect_unix_socket(self, path: str, timeout: float | None = None,
                            socket_options: Any = None) -> httpcore.NetworkStream:
        return _TrackedStream(self._backend.connect_unix_socket(path, timeout, socket_options), self)

    def sleep(self, seconds: float) -> None:
        self._backend.sleep(seconds)

    def shutdown_all(self) -> int:
        """Shut down every open connection; return how many there were."""
        with self._lock:
            streams = list(self._streams)
        for stream in streams:
            stream.shutdown()
        return len(streams)

    def _add(self, stream: _TrackedStream) -> None:
        with self._lock:
            self._streams.add(stream)

    def _discard(self, stream: _TrackedStream) -> None:
        with self._lock:
            self._streams.discard(stream)


def cancellable_transport() -> tuple[httpx.BaseTransport, SocketTracker | None]:
    """An HTTP transport and the tracker of its sockets (None where this httpx keeps its
    connection pool elsewhere: then requests cannot be cancelled, only abandoned)."""
    transport = httpx.HTTPTransport()
    pool = getattr(transport, "_pool", None)
    if not hasattr(pool, "_network_backend"):
        return transport, None
    tracker = SocketTracker()
    pool._network_backend = tracker  # httpcore reads it for each new connection
    return transport, tracker
