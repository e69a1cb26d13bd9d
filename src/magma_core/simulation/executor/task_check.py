"""The checks a task passes before it runs: the one place they are made.

``Executor`` calls :func:`stages_to_run` when it is built, and drivers call it before they
start worker processes, so a task that is invalid or needs a judge it lacks is refused once,
with one message, whoever runs it.
"""

from __future__ import annotations

from typing import TYPE_CHECKING

from magma_core.simulation.tasks import (
    BaseTask,
    judged_stage_indices,
    materialize_completion_stages,
)
from magma_core.user_error import UserError

if TYPE_CHECKING:  # named for the annotations only
    from magma_core.simulation.data_structures.verdict import Judge
    from magma_core.simulation.stage import BaseTaskStage


class MissingJudgeError(UserError, ValueError):
    """The task has stages a judge validates, and no judge was given."""


def stages_to_run(task: BaseTask, judge: Judge | None) -> list[BaseTaskStage]:
    """``task.validate()``, then the stages as run (answer flags materialised into completion
    stages; the task itself is not modified). Raises :class:`MissingJudgeError` when the task
    has JUDGE text-only stages and ``judge`` is None."""
    task.validate()
    stages = materialize_completion_stages(task.stages, task.Tools_cls)
    judged = judged_stage_indices(stages)
    if judged and judge is None:
        raise MissingJudgeError(
            f"task {task.name!r} has text-only stages validated by a judge (stages {judged}) "
            "but no judge was given: pass --judge openai:MODEL[@BASE_URL] or --judge none "
            "(Python: judge=...)"
        )
    return stages
