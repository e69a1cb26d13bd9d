"""``--ray [ADDRESS]``: the option ``magma run``, ``magma bench run`` and ``magma gen`` share
to scale out on a Ray cluster (see :mod:`magma_core.runs.ray_cluster`)."""

from __future__ import annotations

import argparse
from typing import TYPE_CHECKING

if TYPE_CHECKING:  # named for the annotations only
    from magma_core.runs import RayCluster


def add_ray_option(parser: argparse.ArgumentParser) -> None:
    """Add ``--ray [ADDRESS]`` to ``parser``."""
    parser.add_argument(
        "--ray", nargs="?", const="local", default=None, metavar="ADDRESS",
        help="run in engine actors on a Ray cluster (pip install 'magma[ray]'): without "
        "ADDRESS a local cluster; 'auto' the cluster this machine joined (ray start); or "
        "HOST:PORT. --workers sets the number of actors (default: one per CPU of the cluster)",
    )


def ray_cluster_from(args: argparse.Namespace, actors: int | None = None) -> RayCluster | None:
    """The ``RayCluster`` the options ask for (``actors``: the engine actors, None: one per
    CPU), or None without ``--ray``."""
    if args.ray is None:
        return None
    from magma_core.runs.ray_cluster import RayCluster

    return RayCluster(address=args.ray, actors=actors)
