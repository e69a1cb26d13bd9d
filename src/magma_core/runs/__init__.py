"""Runs: the front door for running episodes of a preset with an agent.

``run(RunSpec(...)) -> RunResult`` is what ``magma run`` and Python callers use;
:mod:`~magma_core.runs.assembly` builds the task, agent, judge and engine, the
:class:`~magma_core.runs.loop.RunLoop` drives the engine, and finished episodes go to the
run store (:mod:`magma_core.store`).
"""

from magma_core.runs.agent_requests import Pacing, SlotAnswer, SlotPipeline
from magma_core.runs.entry import RunPlan, run
from magma_core.runs.loop import AgentOutage, LoopLimits
from magma_core.runs.spec import RunResult, RunSpec
from magma_core.user_error import UserError

__all__ = ["AgentOutage", "LoopLimits", "Pacing", "RunPlan", "RunResult", "RunSpec", "SlotAnswer",
           "SlotPipeline", "UserError", "run"]
