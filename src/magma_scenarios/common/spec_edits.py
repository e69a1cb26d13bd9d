"""Edits of a serialised task spec that every world's bench condition transforms share.

A spec here is ``BaseTask.to_spec()``'s dictionary: ``stages`` (each ``{"spec": {"type",
"arguments"}, ...}``), ``requests`` (each with ``first_stage`` and ``num_stages``) and the
``perfect_trace``. Each world's ``bench_conditions`` module writes its own
``execution_error``, ``interruption`` and ``mission_update``; :func:`apply_condition` turns a
condition name into the calls of those, the same way in every world.
"""

from __future__ import annotations

from collections.abc import Callable

from magma_core.json_types import JSONDict

#: a world's transform of one condition: (spec, at[, lag]) -> the interventions it made
Transform = Callable[..., list[JSONDict]]


def stage_type(entry: JSONDict) -> str:
    """The stage class path of one stage entry."""
    return entry["spec"]["type"]


def stage_args(entry: JSONDict) -> JSONDict:
    """The constructor arguments of one stage entry (edited in place)."""
    return entry["spec"]["arguments"]


def set_instruction(entry: JSONDict, text: str) -> None:
    """Put ``text`` before the stage's instruction (or make it the instruction)."""
    args = stage_args(entry)
    old = args["instruction"]
    args["instruction"] = text if old is None else f"{text} {old}"


def insert_stage(spec: JSONDict, position: int, entry: JSONDict) -> None:
    """Insert a stage, keeping the request chain's stage ranges true."""
    spec["stages"].insert(position, entry)
    for record in spec["requests"]:
        if record["first_stage"] >= position:
            record["first_stage"] += 1
        elif position < record["first_stage"] + record["num_stages"]:
            record["num_stages"] += 1


def apply_condition(condition: str, spec: JSONDict, options: JSONDict, *,
                    execution_error: Transform, interruption: Transform,
                    mission_update: Transform) -> tuple[JSONDict, list[JSONDict]]:
    """The ``condition`` transform of a clean task spec through a world's own transforms
    (``combined``: a mission update, then an execution error on the updated stage);
    options ``at`` and ``lag``. A transform that does not apply raises ``ValueError``."""
    if spec.get("perfect_trace") is None:
        raise ValueError("the task has no reference trace to perturb")
    at, lag = int(options.get("at", 0)), int(options.get("lag", 0))
    if condition == "execution_error":
        return spec, execution_error(spec, at)
    if condition == "interruption":
        return spec, interruption(spec, at)
    if condition == "mission_update":
        return spec, mission_update(spec, at, lag)
    if condition == "combined":
        updates = mission_update(spec, at, lag)
        errors = execution_error(spec, updates[0]["relevant_at_stage"])
        return spec, updates + errors
    raise ValueError(f"unknown condition {condition!r}")
