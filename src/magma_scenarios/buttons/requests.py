"""The buttons scenario's requests: what a user may ask at the panel, as stages plus traces.

| request | stages |
| --- | --- |
| ``PressSequence`` | press two or three buttons in a given order: the first press, then the rest |
| ``SetLights`` | exactly the named lights on, the others off: one press per light to change |
| ``ForbidButton`` | a rule for the rest of the task ("never press blue"): acknowledged; later stages check it |
| ``LightsQuestion`` | which lights are on? (text-only: JUDGE, or SAY_ONLY with ``judged=False``) |

The task state keeps each light (relation ``lights``), the number of presses so far
(property ``presses``: ``PressedInOrder`` counts from there) and the forbidden buttons.
No task presses more than :data:`~magma_scenarios.buttons.world.MAX_PRESSES` times.
"""

from __future__ import annotations

import random

from magma_core.simulation.data_structures import ToolCall
from magma_core.simulation.stage import BaseTaskStage
from magma_core.simulation.tasks import (
    BaseRequest,
    MessageEvent,
    RuleRenderer,
    TaskState,
    ToolCallEvent,
    TraceEvent,
    UserEvent,
)
from magma_scenarios.buttons.stages import (
    ButtonsStage,
    LightOff,
    LightOn,
    NeverPressed,
    PressedInOrder,
)
from magma_scenarios.buttons.world import BUTTONS, MAX_PRESSES
from magma_scenarios.common.stages import Acknowledge, AnswerQuestion


def starting_state() -> TaskState:
    """Every light off, nothing pressed, nothing forbidden."""
    return TaskState(attributes={"buttons": list(BUTTONS)},
                     relations={"lights": {b: False for b in BUTTONS}},
                     properties={"presses": 0, "forbidden": []})


def allowed(state: TaskState) -> list[str]:
    return [b for b in BUTTONS if b not in state.properties["forbidden"]]


def _presses(buttons: list[str]) -> list[TraceEvent]:
    return [ToolCallEvent([ToolCall("press", {"button": b})]) for b in buttons]


def _rules(state: TaskState) -> list[BaseTaskStage]:
    return [NeverPressed(b) for b in state.properties["forbidden"]]


def _pressed(state: TaskState, buttons: list[str]) -> TaskState:
    for b in buttons:
        state.relations["lights"][b] = not state.relations["lights"][b]
    state.properties["presses"] += len(buttons)
    return state


def _room(state: TaskState) -> int:
    return MAX_PRESSES - state.properties["presses"]


class PressSequence(BaseRequest[dict]):
    """Press two or three distinct allowed buttons in a given order."""

    def sampling_weight(self, state: TaskState) -> float:
        return 2.0 if len(allowed(state)) >= 2 and _room(state) >= 2 else 0.0

    def sample_parameters(self, state: TaskState, rng: random.Random) -> dict:
        k = min(rng.choice([2, 3]), len(allowed(state)), _room(state))
        sequence = rng.sample(allowed(state), k)
        names = ", then ".join(f"the {b} button" for b in sequence)
        return {"sequence": sequence, "start": state.properties["presses"],
                "text": f"Press {names}."}

    def create_stages(self, state: TaskState, params: dict) -> list[BaseTaskStage]:
        """Two stages: the first press, then the rest (work in progress)."""
        seq, start = params["sequence"], params["start"]
        first = [PressedInOrder(seq[:1], start=start), *_rules(state)]
        rest = [PressedInOrder(seq, start=start), *_rules(state)]
        return [ButtonsStage(first, f"Pressed {seq[0]} first.", params["text"], presses=1),
                ButtonsStage(rest, f"Pressed {', '.join(seq)} in that order.", None,
                             presses=len(seq) - 1, flag_answer_to_user=True)]

    def perfect_trace(self, state: TaskState, params: dict) -> list[TraceEvent]:
        seq = params["sequence"]
        return [UserEvent(params["text"]), *_presses(seq), MessageEvent(f"Pressed {', '.join(seq)}.")]

    def apply_request(self, state: TaskState, params: dict) -> TaskState:
        return _pressed(state, params["sequence"])

    def describe(self, params: dict) -> str:
        return f"PressSequence {params['sequence']} from press {params['start']}"


class SetLights(BaseRequest[dict]):
    """Exactly a given set of lights on (the others off), changing at least one."""

    def _options(self, state: TaskState) -> list[list[str]]:
        lights, free = state.relations["lights"], set(allowed(state))
        out = []
        for mask in range(1 << len(BUTTONS)):
            wanted = [b for i, b in enumerate(BUTTONS) if mask >> i & 1]
            change = [b for b in BUTTONS if lights[b] != (b in wanted)]
            if change and set(change) <= free and len(change) <= min(3, _room(state)):
                out.append(wanted)
        return out

    def sampling_weight(self, state: TaskState) -> float:
        return 2.0 if self._options(state) else 0.0

    def sample_parameters(self, state: TaskState, rng: random.Random) -> dict:
        wanted = rng.choice(self._options(state))
        lights = state.relations["lights"]
        change = [b for b in BUTTONS if lights[b] != (b in wanted)]
        text = (f"Make sure exactly these lights are on: {', '.join(wanted)}." if wanted
                else "Switch every light off.")
        return {"on": wanted, "change": change, "text": text}

    def create_stages(self, state: TaskState, params: dict) -> list[BaseTaskStage]:
        goals = [LightOn(b) if b in params["on"] else LightOff(b) for b in BUTTONS]
        on = ", ".join(params["on"]) or "none"
        return [ButtonsStage([*goals, *_rules(state)], f"Lights on: {on}; the others off.",
                             params["text"], presses=len(params["change"]), flag_answer_to_user=True)]

    def perfect_trace(self, state: TaskState, params: dict) -> list[TraceEvent]:
        on = ", ".join(params["on"]) or "no light"
        return [UserEvent(params["text"]), *_presses(params["change"]), MessageEvent(f"Now {on} is on.")]

    def apply_request(self, state: TaskState, params: dict) -> TaskState:
        return _pressed(state, params["change"])

    def describe(self, params: dict) -> str:
        return f"SetLights on={params['on']} pressing {params['change']}"


class ForbidButton(BaseRequest[dict]):
    """A rule for the rest of the task: never press a button not pressed yet (one per task)."""

    def _options(self, state: TaskState) -> list[str]:
        if state.properties["forbidden"] or state.properties["presses"]:
            return []  # NeverPressed counts the whole episode: only before any press
        return list(BUTTONS)

    def sampling_weight(self, state: TaskState) -> float:
        return 1.0 if self._options(state) else 0.0

    def sample_parameters(self, state: TaskState, rng: random.Random) -> dict:
        button = rng.choice(self._options(state))
        return {"button": button, "text": f"A rule from now on: never press the {button} button."}

    def create_stages(self, state: TaskState, params: dict) -> list[BaseTaskStage]:
        return [Acknowledge(params["text"])]

    def perfect_trace(self, state: TaskState, params: dict) -> list[TraceEvent]:
        return [UserEvent(params["text"]),
                MessageEvent(f"Understood: I will never press the {params['button']} button.")]

    def apply_request(self, state: TaskState, params: dict) -> TaskState:
        state.properties["forbidden"] = [*state.properties["forbidden"], params["button"]]
        return state

    def describe(self, params: dict) -> str:
        return f"ForbidButton {params['button']}"


class LightsQuestion(BaseRequest[dict]):
    """Which lights are on? Judged against the lights (``judged=True``) or SAY_ONLY."""

    def __init__(self, judged: bool = True) -> None:
        self.judged = judged

    def sampling_weight(self, state: TaskState) -> float:
        return 1.0 if state.properties["presses"] else 0.0

    def sample_parameters(self, state: TaskState, rng: random.Random) -> dict:
        on = [b for b in BUTTONS if state.relations["lights"][b]]
        fact = f"the lights on are {', '.join(on)}" if on else "no light is on"
        return {"fact": fact, "text": "Which lights are on right now?"}

    def create_stages(self, state: TaskState, params: dict) -> list[BaseTaskStage]:
        return [AnswerQuestion(params["text"], f"The answer says that {params['fact']}.",
                               say_only=not self.judged)]

    def perfect_trace(self, state: TaskState, params: dict) -> list[TraceEvent]:
        fact = params["fact"]
        return [UserEvent(params["text"]), MessageEvent(fact[0].upper() + fact[1:] + ".")]

    def describe(self, params: dict) -> str:
        return f"LightsQuestion: {params['fact']}"


class ButtonsRules(RuleRenderer):
    """The rules a buttons task's state imposes (forbidden buttons)."""

    def rules(self, state: TaskState) -> list[str]:
        return [f"Never press the {b} button." for b in state.properties.get("forbidden", [])]
