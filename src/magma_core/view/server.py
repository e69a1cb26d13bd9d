"""Serving the viewer app with uvicorn, on the loopback interface by default."""

from __future__ import annotations

import socket
from collections.abc import Callable
from pathlib import Path

import uvicorn

from magma_core.view.app import LOOPBACK_HOSTS, create_app


def bind(host: str, port: int) -> socket.socket:
    """A listening socket on ``host:port`` (``port`` 0 picks a free one); raises ``OSError``."""
    family = socket.AF_INET6 if ":" in host else socket.AF_INET
    sock = socket.socket(family, socket.SOCK_STREAM)
    sock.setsockopt(socket.SOL_SOCKET, socket.SO_REUSEADDR, 1)
    try:
        sock.bind((host, port))
    except OSError:
        sock.close()
        raise
    return sock


def url_of(sock: socket.socket) -> str:
    host, port = sock.getsockname()[:2]
    return f"http://[{host}]:{port}" if ":" in host else f"http://{host}:{port}"


def serve(
    folder: str | Path,
    *,
    port: int = 8765,
    host: str = "127.0.0.1",
    on_ready: Callable[[str], None] | None = None,
) -> None:
    """Serve the viewer over ``folder/magma.db`` until interrupted; ``on_ready(url)`` is
    called once the socket listens."""
    sock = bind(host, port)
    try:
        # bound beyond loopback on purpose: any Host name may reach it
        hosts = LOOPBACK_HOSTS if host in LOOPBACK_HOSTS else ("*",)
        config = uvicorn.Config(
            create_app(folder, allowed_hosts=hosts), log_level="warning", access_log=False
        )
        if on_ready is not None:
            on_ready(url_of(sock))
        uvicorn.Server(config).run(sockets=[sock])
    finally:
        sock.close()
