"""The seeded task generator: a ``TaskDefinition`` and a seed make one ``GeneratedTask``.

Algorithm (the predecessor's, with one seeded RNG): clone the starting state; while the
summed target tool calls are below the budget, pick a request among those with a positive
weight (weighted, with ``random.Random(seed)``), sample its parameters, create its stages,
stamp each with the request type, require exact targets, materialise completion stages,
stop when the stages would exceed the budget (or the stage cap), else append them, extend
the reference trace and let the request update the state. Same definition + same seed =>
the same task, byte for byte in its spec.
"""

from __future__ import annotations

import copy
import random
from typing import Any

from magma_core.serialization import encode_value
from magma_core.simulation.data_structures.task_state import TaskState
from magma_core.simulation.tasks.completion import materialize_completion_stages
from magma_core.simulation.tasks.generated import GeneratedTask, RequestRecord
from magma_core.simulation.tasks.perfect_trace import PerfectTrace

#: Requests drawn at most this many times per task (a guard against zero-cost loops).
MAX_REQUESTS = 200


def generate_task(
    definition: Any,
    seed: int,
    *,
    max_target_tool_calls: int | None = None,
    max_stages: int | None = None,
) -> GeneratedTask:
    """Generate the task of ``definition`` for ``seed`` (see the module docstring).

    ``max_target_tool_calls`` / ``max_stages`` default to the definition's. ``ValueError``
    when a request makes a stage without a target, makes no stage, or when no request can
    be drawn before any stage exists.
    """
    if isinstance(seed, bool) or not isinstance(seed, int):
        raise TypeError(f"seed must be an int, got {seed!r}")
    budget = definition.max_target_tool_calls if max_target_tool_calls is None else max_target_tool_calls
    cap = definition.max_stages if max_stages is None else max_stages
    if isinstance(budget, bool) or not isinstance(budget, int) or budget < 1:
        raise ValueError(f"max_target_tool_calls must be an int >= 1, got {budget!r}")
    if cap is not None and (isinstance(cap, bool) or not isinstance(cap, int) or cap < 1):
        raise ValueError(f"max_stages must be None or an int >= 1, got {cap!r}")
    base_task = definition.build_default_task()
    rng = random.Random(seed)
    base_state: TaskState = definition.starting_state.clone()
    state = base_state.clone()
    stages: list[Any] = []
    events: list[Any] | None = []
    records: list[RequestRecord] = []
    total = 0
    for _ in range(MAX_REQUESTS):
        if total >= budget:
            break
        requests = [r for r in definition.active_requests if r.sampling_weight(state) > 0]
        if not requests:
            if not stages:
                raise ValueError(f"{definition.name}: no request can be drawn from the start state")
            break
        weights = [float(r.sampling_weight(state)) for r in requests]
        request = rng.choices(requests, weights=weights, k=1)[0]
        params = request.sample_parameters(state, rng)
        new = _request_stages(request, state, params, base_task.Tools_cls)
        cost = sum(s.target_tool_calls for s in new)
        too_long = cap is not None and len(stages) + len(new) > cap
        if stages and (total + cost > budget or too_long):
            break
        trace = request.perfect_trace(state, params)
        if events is not None and trace is not None:
            events.extend(copy.deepcopy(trace))
        else:
            events = None
        records.append(
            RequestRecord(
                request_type=request.get_request_type(),
                parameters=encode_value(copy.deepcopy(params)),
                description=request.describe(params),
                first_stage=len(stages),
                num_stages=len(new),
            )
        )
        stages.extend(new)
        total += cost
        state = request.apply_request(state, params)
        if request.force_state_recompute():
            state = state.recompute_from_base(base_state)
        counters = state.properties
        counters["_generator_requests"] = counters.get("_generator_requests", 0) + 1
        counters["_generator_stages"] = len(stages)
        counters["_generator_target_tool_calls"] = total
    return GeneratedTask(
        maniskill_env_id=base_task.maniskill_env_id,
        Tools_cls=base_task.Tools_cls,
        situation_init=base_task.situation_init,
        stages=stages,
        initialization_parameters=base_task.initialization_parameters,
        task_metadata=base_task.task_metadata,
        tools_constant=base_task.tools_constant,
        name=f"{definition.name} #{seed}",
        randomized_config_path=base_task.randomized_config_path,
        seed=seed,
        definition=type(definition),
        max_target_tool_calls=budget,
        max_stages=cap,
        requests=records,
        trace=None if events is None else PerfectTrace(events),
        rules=definition.rules(state),
    )


def _request_stages(request: Any, state: TaskState, params: Any, tools_cls: type) -> list[Any]:
    """The request's stages: stamped with its type, exact targets checked, completion stages
    materialised."""
    name = request.get_request_type()
    created = list(request.create_stages(state, params))
    if not created:
        raise ValueError(f"request {name} created no stage")
    for stage in created:
        if stage.target_tool_calls is None:
            raise ValueError(
                f"request {name}: stage {type(stage).__name__} has no target_tool_calls; "
                "generated tasks need exact targets"
            )
        stage.request_type = name
    return materialize_completion_stages(created, tools_cls)
