"""``RayCluster``: which Ray cluster a run, a benchmark or a generation scales out to, and
connecting to it.

``RayCluster()`` starts a local cluster (``num_cpus``: the machine's, unless given);
``RayCluster("auto")`` joins the cluster this machine belongs to (``ray start --head`` /
``ray start --address HEAD:6379``); ``RayCluster("HOST:PORT")`` or ``"ray://HOST:10001"`` an
existing one by its address. ``actors``: how many engine actors (None: one per CPU of the
cluster). Ray is an optional extra (``pip install 'magma[ray]'``): it is imported here and in
:mod:`~magma_core.runs.ray_driver` only, when a run asks for it.
"""

from __future__ import annotations

import logging
import os
from dataclasses import dataclass
from types import ModuleType
from typing import Any

from magma_core.user_error import UserError

LOCAL = "local"


@dataclass(frozen=True)
class RayCluster:
    """Where to run: ``address`` (None or ``"local"``: a new local cluster; ``"auto"``; an
    address), ``actors`` (None: one per CPU of the cluster), ``num_cpus`` of a local cluster
    (None: the machine's)."""

    address: str | None = None
    actors: int | None = None
    num_cpus: int | None = None

    def __post_init__(self) -> None:
        for key in ("actors", "num_cpus"):
            value = getattr(self, key)
            if value is not None and (not isinstance(value, int) or isinstance(value, bool)
                                      or value < 1):
                raise UserError(f"ray {key} must be a positive integer, got {value!r}")
        if self.address is not None and (not isinstance(self.address, str) or not self.address.strip()):
            raise UserError(f"--ray takes 'auto' or a cluster address, got {self.address!r}")

    @property
    def local(self) -> bool:
        """Whether this starts a new local cluster (rather than joining one)."""
        return self.address in (None, LOCAL)


def import_ray() -> ModuleType:
    """The ``ray`` module, or a :class:`UserError` saying how to install it."""
    try:
        import ray
    except ImportError:
        raise UserError("--ray needs Ray: pip install 'magma[ray]'") from None
    return ray


def connect(cluster: RayCluster) -> bool:
    """Connect this process to ``cluster``, once: a process stays on the first cluster it
    joins (a local one it started stops when it exits, or at :func:`disconnect`), so a
    benchmark's or a Python caller's successive runs share it. Returns whether this call
    connected. A cluster that cannot be reached is a :class:`UserError`."""
    ray = import_ray()
    if ray.is_initialized():
        return False
    options: dict[str, Any] = {"logging_level": logging.WARNING, "log_to_driver": False,
                               "include_dashboard": False}
    if cluster.local:
        options |= {"address": LOCAL, "num_cpus": cluster.num_cpus or os.cpu_count() or 1}
    else:
        options["address"] = cluster.address
    try:
        ray.init(**options)
    except (ConnectionError, RuntimeError, ValueError) as exc:
        where = "a local Ray cluster" if cluster.local else f"the Ray cluster at {cluster.address}"
        message = " ".join(str(exc).split())[:300]
        raise UserError(f"cannot start or reach {where}: {message}") from None
    return True


def disconnect() -> None:
    """Leave the cluster (a local cluster this process started stops with it)."""
    import_ray().shutdown()


def cluster_cpus() -> int:
    """The CPUs of the connected cluster (at least 1)."""
    return max(1, int(import_ray().cluster_resources().get("CPU", 1)))
