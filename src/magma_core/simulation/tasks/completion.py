"""Completion-answer materialisation: a flagged stage is followed by an explicit answer stage.

A stage whose input has ``flag_answer_to_user=True`` ends a user request that needs a final
user-facing answer. Before running, the engine turns each such flag into an explicit
``CompletionAnswerStage`` inserted right after the stage, so no running stage carries it.
"""

from __future__ import annotations

import copy
import dataclasses
from collections.abc import Sequence
from typing import TYPE_CHECKING

from magma_core.simulation.data_structures import StageInput
from magma_core.simulation.stage import CompletionAnswerStage, TextOnlyValidationMode

if TYPE_CHECKING:  # named for the annotations only
    from magma_core.simulation.stage import BaseTaskStage


def detection_tool_names(tools_cls: type) -> list[str]:
    """The names of the tools registered with ``is_detection=True`` on ``tools_cls``, sorted."""
    lister = getattr(tools_cls, "get_detection_tools", None)
    if callable(lister):
        return sorted(str(name) for name in lister())
    names = []
    for tool in getattr(tools_cls, "get_tools", lambda: [])():
        if getattr(tool, "is_detection", False):
            names.append(str(tool.name))
    return sorted(names)


def materialize_completion_stages(stages: Sequence[BaseTaskStage], tools_cls: type) -> list[BaseTaskStage]:
    """New stage list with a ``CompletionAnswerStage`` after every flagged stage.

    The inserted stage allows the tool class's detection tools before the answer, inherits
    the flagged stage's ``reset_at_end`` (and request type); the flagged stage's copy has its
    flag cleared and ``reset_at_end`` off. Every returned stage is a new object: the given
    stages are never modified.
    """

    detectors = detection_tool_names(tools_cls)
    out: list[BaseTaskStage] = []
    for stage in stages:
        new = copy.copy(stage)
        new.global_parameters = dataclasses.replace(stage.global_parameters)
        if not stage.stage_input.flag_answer_to_user:
            out.append(new)
            continue
        source_input = stage.stage_input
        new.stage_input = StageInput(
            source_input.instruction,
            flag_answer_to_user=False,
            linked_to_prev=source_input.linked_to_prev,
        )
        reset_at_end = bool(stage.global_parameters.reset_at_end)
        new.global_parameters = dataclasses.replace(stage.global_parameters, reset_at_end=False)
        completion = CompletionAnswerStage(allowed_tools=detectors, reset_at_end=reset_at_end)
        request_type = getattr(stage, "request_type", None)
        if request_type:
            completion.request_type = request_type
        out.extend([new, completion])
    return out


def judged_stage_indices(stages: Sequence[BaseTaskStage]) -> list[int]:
    """Indices of the text-only stages whose answers a judge validates (JUDGE mode, no
    ``scorer``: a stage with a scorer is validated by it and needs no judge)."""

    return [
        i
        for i, stage in enumerate(stages)
        if stage.is_text_only()
        and stage.global_parameters.text_only_validation is TextOnlyValidationMode.JUDGE
        and getattr(stage, "scorer", None) is None
    ]
