"""The bench condition ``paraphrase``: the clean task with every user instruction put in other
words by a simulated user (:mod:`magma_core.agents.user_simulation`), for any scenario.

Each stage's user instruction (a string argument ``instruction`` of its spec, else the words
the stage's constructor makes, carried by the stage entry's ``instruction`` key) and the matching user events of the
reference trace get the variant, seeded by the task's name and the stage index, so a recompiled
suite holds the same words. The option ``paraphraser`` (in the suite's ``condition_options``)
is ``builtin`` (default: the deterministic paraphraser, no model) or ``openai:MODEL@URL``. Each
rewritten stage is an intervention ``{"type": "paraphrase", "original", "variant"}``; a task
whose instructions no paraphrase changes does not take the condition (``ValueError``).
"""

from __future__ import annotations

import hashlib

from magma_core.agents.user_simulation import user_from_spec
from magma_core.json_types import JSONDict
from magma_core.simulation.data_structures import UserInstruction
from magma_core.simulation.stage import BaseTaskStage


def apply_paraphrase(spec: JSONDict, options: JSONDict) -> tuple[JSONDict, list[JSONDict]]:
    """``(paraphrased spec, interventions)`` of a clean task spec (edited in place)."""
    user = user_from_spec(options.get("paraphraser"))
    base = int(hashlib.sha256(str(spec.get("name", "")).encode()).hexdigest()[:8], 16)
    interventions = []
    replaced: dict[str, str] = {}
    for index, stage in enumerate(spec.get("stages") or []):
        arguments = (stage.get("spec") or {}).get("arguments") or {}
        text = arguments.get("instruction")
        in_arguments = isinstance(text, str) and bool(text.strip())
        if not in_arguments:  # words the stage's constructor makes: the entry carries them
            text = _built_instruction(stage)
            if text is None:
                continue
        variant = replaced.get(text) or user.paraphrase(text, base + index)
        if variant == text:
            continue
        replaced[text] = variant
        if in_arguments:
            arguments["instruction"] = variant
        else:
            stage["instruction"] = variant
        interventions.append({"type": "paraphrase", "injected_at_stage": index, "relevant_at_stage": index,
                              "original": text, "variant": variant, "user": user.name})
    for event in (spec.get("perfect_trace") or {}).get("events") or []:
        if event.get("type") == "user" and event.get("content") in replaced:
            event["content"] = replaced[event["content"]]
    if not interventions:
        raise ValueError("no user instruction of the task changes when paraphrased (only "
                         "imperatives and questions are; statements are kept as written)")
    return spec, interventions


def _built_instruction(entry: JSONDict) -> str | None:
    """The user's words of a stage entry whose spec arguments do not hold them (the stage
    makes them, e.g. from a target name): read from the stage the spec builds."""
    try:
        stage = BaseTaskStage.from_spec(entry["spec"])
    except (TypeError, ValueError, KeyError):
        return None
    instruction = getattr(stage.stage_input, "instruction", None)
    if type(instruction) is not UserInstruction or not (instruction.content or "").strip():
        return None
    return instruction.content
