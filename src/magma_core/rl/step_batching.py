"""Steps that arrive together, executed together: the ``astep`` path of the live environment.

:class:`StepBatcher` gathers the ``astep`` calls of one event-loop turn into one
:meth:`~magma_core.rl.env.TrainingEnv.step` (one engine submit), run in a worker thread so the
loop goes on generating other rollouts meanwhile, as ``magma run``'s loop executes decisions
that arrive together.
"""

from __future__ import annotations

import asyncio
from typing import TYPE_CHECKING, Any

from magma_core.rl.rollouts import Rollout, StepResult

if TYPE_CHECKING:
    from magma_core.rl.env import TrainingEnv


class StepBatcher:
    """Gathers the ``astep`` calls of one event-loop turn into one :meth:`TrainingEnv.step`,
    run in a worker thread so the loop goes on (generating other rollouts) meanwhile."""

    def __init__(self, env: TrainingEnv) -> None:
        self.env = env
        self.pending: dict[Rollout, tuple[Any, asyncio.Future]] = {}
        self.scheduled = False

    async def step(self, rollout: Rollout, message: Any) -> StepResult:
        loop = asyncio.get_running_loop()
        future: asyncio.Future = loop.create_future()
        self.pending[rollout] = (message, future)
        if not self.scheduled:
            self.scheduled = True
            loop.call_soon(lambda: loop.create_task(self._flush()))
        return await future

    async def _flush(self) -> None:
        self.scheduled = False
        batch, self.pending = self.pending, {}
        try:
            results = await asyncio.to_thread(self.env.step, {r: m for r, (m, _) in batch.items()})
        except BaseException as exc:  # noqa: BLE001 - handed to every waiting step
            for _, future in batch.values():
                if not future.done():
                    future.set_exception(exc)
            return
        for rollout, (_, future) in batch.items():
            if not future.done():
                future.set_result(results[rollout])
