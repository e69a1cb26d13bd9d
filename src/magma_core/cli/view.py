"""``magma view [--out DIR] [--port 8765]``: the web viewer over a run store (127.0.0.1)."""

from __future__ import annotations

import argparse
from pathlib import Path

from magma_core.cli.out_folder import OUT_HELP, default_out
from magma_core.cli.serve_agent import _port
from magma_core.user_error import UserError


def register(sub: argparse._SubParsersAction) -> None:
    parser = sub.add_parser("view", help="browse stored runs and replay episodes in a web page")
    parser.add_argument("--out", type=Path, default=default_out(), help=OUT_HELP)
    parser.add_argument("--host", default="127.0.0.1", help="address to bind (default 127.0.0.1; another address exposes the store to the network)")
    parser.add_argument(
        "--port", type=_port, default=8765, help="port (default 8765; 0 picks a free one)"
    )
    parser.set_defaults(func=run)


def run(args: argparse.Namespace) -> int:
    from magma_core.view.server import serve

    if args.out.exists() and not args.out.is_dir():
        raise UserError(f"--out {args.out} is not a folder")
    store = args.out / "magma.db"

    def ready(url: str) -> None:
        where = store if store.exists() else f"{store} (not created yet; the page fills in live)"
        print(f"MAGMA viewer on {url}  store: {where}", flush=True)

    try:
        serve(args.out, port=args.port, host=args.host, on_ready=ready)
    except OSError as exc:
        raise UserError(f"cannot listen on {args.host}:{args.port}: {exc.strerror or exc}") from None
    return 0
