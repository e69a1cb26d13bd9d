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
import dataclasses
import inspect
import random
from collections.abc import Callable
from typing import TYPE_CHECKING

from magma_core.json_types import JSONDict, JSONValue
from magma_core.serialization import encode_value
from magma_core.simulation.data_structures.task_state import TaskState
from magma_core.simulation.tasks.completion import materialize_completion_stages
from magma_core.simulation.tasks.generated import GeneratedTask, RequestRecord
from magma_core.simulation.tasks.perfect_trace import PerfectTrace, TraceEvent

if TYPE_CHECKING:  # named for the annotations only
    from magma_core.simulation.stage import BaseTaskStage
    from magma_core.simulation.tasks.definition import TaskDefinition
    from magma_core.simulation.tasks.requests import BaseRequest

#: Requests drawn at most this many times per task (a guard against zero-cost loops).
MAX_REQUESTS = 200


def generate_task(
    definition: TaskDefinition,
    seed: int,
    *,
    max_target_tool_calls: int | None = None,
    max_stages: int | None = None,
    start_state: TaskState | None = None,
    observer: Callable[[JSONDict], None] | None = None,
) -> GeneratedTask:
    """Generate the task of ``definition`` for ``seed`` (see the module docstring).

    ``max_target_tool_calls`` / ``max_stages`` default to the definition's. ``start_state``
    replaces the definition's starting state (e.g. after :func:`setup_state`). ``observer``
    sees each draw: ``{"weights": [(request_type, weight)], "request", "parameters",
    "stages", "kept"}`` (``magma scenarios test-requests`` prints them). With the
    definition's ``checkpoint_mode == "TSR"`` every request must give a perfect trace.
    ``ValueError`` when a request makes a stage without a target, makes no stage, lacks a
    trace in TSR mode, or when no request can be drawn before any stage exists.
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
    base_state: TaskState = (definition.starting_state if start_state is None else start_state).clone()
    tsr = str(getattr(definition, "checkpoint_mode", None) or "").upper() == "TSR"
    state = base_state.clone()
    stages: list[BaseTaskStage] = []
    events: list[TraceEvent] | None = []
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
        params = sample_parameters(request, state, rng)
        new = _request_stages(request, state, params, base_task.Tools_cls)
        cost = sum(s.target_tool_calls for s in new)
        too_long = cap is not None and len(stages) + len(new) > cap
        stop = bool(stages) and (total + cost > budget or too_long)
        if observer is not None:
            observer({"weights": [(r.get_request_type(), w) for r, w in zip(requests, weights, strict=True)],
                      "request": request, "parameters": params, "stages": new, "kept": not stop})
        if stop:
            break
        trace = request_trace(request, state, params)
        if trace is None and tsr:
            raise ValueError(f"request {request.get_request_type()} has no perfect trace; "
                             "the TSR checkpoint mode needs one from every request")
        if events is not None and trace is not None:
            events.extend(copy.deepcopy(trace))
        else:
            events = None
        records.append(
            RequestRecord(
                request_type=request.get_request_type(),
                parameters=encode_parameters(params),
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


def encode_parameters(params: object) -> JSONValue:
    """The request's parameters as stored with the task: the spec encoding where it has one;
    a typed parameter object (a dataclass, the predecessor's style) as its fields; anything
    else as its ``repr`` (the record is descriptive: the stages hold what runs)."""
    try:
        return encode_value(copy.deepcopy(params))
    except (TypeError, ValueError):
        pass
    if dataclasses.is_dataclass(params) and not isinstance(params, type):
        return {f.name: encode_parameters(getattr(params, f.name)) for f in dataclasses.fields(params)}
    if isinstance(params, (list, tuple)):
        return [encode_parameters(p) for p in params]
    if isinstance(params, dict):
        return {str(k): encode_parameters(v) for k, v in params.items()}
    return repr(params)


def sample_parameters(request: BaseRequest, state: TaskState, rng: random.Random) -> object:
    """``request.sample_parameters(state, rng)``; a predecessor-style request's
    ``sample_parameters(state)`` (which draws from the global ``random``) runs with the global
    generator seeded from ``rng`` and restored afterwards, so the task stays seeded."""
    method = request.sample_parameters
    try:
        takes = [p for p in inspect.signature(method).parameters.values()
                 if p.kind in (p.POSITIONAL_ONLY, p.POSITIONAL_OR_KEYWORD)]
    except (TypeError, ValueError):
        takes = []
    if len(takes) >= 2 or any(p.kind is p.VAR_POSITIONAL
                              for p in inspect.signature(method).parameters.values()):
        return method(state, rng)
    saved = random.getstate()
    random.seed(rng.getrandbits(64))
    try:
        return method(state)
    finally:
        random.setstate(saved)


def request_trace(request: BaseRequest, state: TaskState, params: object) -> list[TraceEvent] | None:
    """The request's reference events: ``perfect_trace`` (ours, a list of events) or the
    predecessor's ``build_perfect_trace`` (a ``PerfectTrace``), None when it has neither."""
    builder = getattr(request, "build_perfect_trace", None)
    if builder is not None and not _overrides(request, "perfect_trace"):
        trace = builder(state, params)
        if trace is None:
            return None
        return list(trace.events) if isinstance(trace, PerfectTrace) else list(trace)
    return request.perfect_trace(state, params)


def _overrides(request: BaseRequest, name: str) -> bool:
    from magma_core.simulation.tasks.requests import BaseRequest

    return getattr(type(request), name, None) is not getattr(BaseRequest, name, None)


def setup_state(definition: TaskDefinition, requests: list[BaseRequest], seed: int = 0) -> TaskState:
    """The definition's starting state after ``requests`` were applied in order (each sampled
    with ``random.Random(seed)``; their stages are discarded): the base of a request chain
    that starts from a prepared situation (``test-requests --setup``)."""
    rng = random.Random(seed)
    base: TaskState = definition.starting_state.clone()
    state = base.clone()
    for request in requests:
        params = sample_parameters(request, state, rng)
        state = request.apply_request(state, params)
        if request.force_state_recompute():
            state = state.recompute_from_base(base)
    return state


def _request_stages(request: BaseRequest, state: TaskState, params: object, tools_cls: type) -> list[BaseTaskStage]:
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
