"""The buttons scenario's task definitions: chains of requests at the panel.

``PanelTasks`` asks questions validated SAY_ONLY (runs without a judge); ``PanelTasksJudged``
has a judge check each answer against the lights.
"""

from __future__ import annotations

from magma_core.simulation.data_structures import SituationInit
from magma_core.simulation.tasks import TaskDefinition
from magma_scenarios.buttons.requests import (
    ButtonsRules,
    ForbidButton,
    LightsQuestion,
    PressSequence,
    SetLights,
    starting_state,
)
from magma_scenarios.buttons.tools import ButtonTools
from magma_scenarios.buttons.world import BUTTONS, ENV_ID


class PanelTasks(TaskDefinition):
    """Press sequences, light settings, a rule and questions (up to 12 presses)."""

    name = "PanelTasks"
    maniskill_env_id = ENV_ID
    Tools_cls = ButtonTools
    situation_init = SituationInit({"buttons": list(BUTTONS)})
    starting_state = starting_state()
    active_requests = [PressSequence(), SetLights(), ForbidButton(), LightsQuestion(judged=False)]
    RuleRenderer_cls = ButtonsRules
    randomized_config_path = "randomization.yaml"
    max_target_tool_calls = 12
    max_stages = 14


class PanelTasksJudged(PanelTasks):
    """``PanelTasks`` whose questions a judge validates (needs ``--judge``)."""

    name = "PanelTasksJudged"
    active_requests = [PressSequence(), SetLights(), ForbidButton(), LightsQuestion(judged=True)]
