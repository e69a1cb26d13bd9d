"""A benchmark item's task, frozen as the generator's task spec (``magma.task/1``).

One format for every task a suite holds: a definition's generated task is written as it is
(:func:`~magma_core.simulation.tasks.task_to_json`), and a preset is first wrapped as a
:class:`~magma_core.simulation.tasks.GeneratedTask` (seed 0, no definition, no request chain),
so items, condition transforms and loading deal with one spec. Loading imports only the
classes the spec names; nothing is evaluated.
"""

from __future__ import annotations

import json

from magma_core.json_types import JSONDict
from magma_core.simulation.tasks import BaseTask, GeneratedTask, task_from_json, task_to_json


def as_generated(task: BaseTask) -> GeneratedTask:
    """``task`` as a ``GeneratedTask`` (itself when it is one), carrying its reference trace."""
    if isinstance(task, GeneratedTask):
        return task
    return GeneratedTask(
        seed=0,
        trace=task.perfect_trace(),
        maniskill_env_id=task.maniskill_env_id,
        Tools_cls=task.Tools_cls,
        situation_init=task.situation_init,
        stages=list(task.stages),
        initialization_parameters=task.initialization_parameters,
        task_metadata=task.task_metadata,
        tools_constant=task.tools_constant,
        name=task.name,
        randomized_config_path=task.randomized_config_path,
    )


def task_to_spec(task: BaseTask) -> JSONDict:
    """The frozen spec of ``task``: the JSON :func:`task_to_json` writes, as a dict."""
    return json.loads(task_to_json(as_generated(task)))


def task_from_spec(spec: JSONDict) -> GeneratedTask:
    """Rebuild the task of a frozen spec; ``TypeError``/``ValueError`` naming what is wrong."""
    return task_from_json(json.dumps(spec))
