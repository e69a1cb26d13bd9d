"""The buttons world's tools: ``press(button)`` and ``detect_buttons()``.

``press`` comes down on the cap with the gripper closed, pushes it ``PRESS_DEPTH`` down and
lifts; the world counts the press (and toggles the light) while the cap is down. The
verifier compares the button's press count with its count before the call. Task attributes
name the buttons the agent knows (``buttons``); ``tools_constant["reach"]`` (robot name ->
buttons it reaches) is optional and refuses presses out of a robot's reach before motion.
"""

from __future__ import annotations

from magma_core.simulation.data_structures import (
    Observation,
    Pose,
    ToolErrorFlag,
    ToolExecution,
    ToolResult,
)
from magma_core.simulation.errors import BaseError
from magma_core.simulation.tools import BaseToolsAPI, register_tool
from magma_scenarios.buttons.world import BUTTONS, CAP_TOP_Z, STROKE, button_index

DOWN_QUAT = (0.0, 1.0, 0.0, 0.0)  # TCP pointing down
APPROACH = 0.08  # metres above the cap top when travelling
FINGER_BELOW_TCP = 0.007  # measured: closed fingertips push a cap ~7 mm past the TCP
PRESS_DEPTH = 0.75 * STROKE  # how far the cap is pushed: past half the stroke, short of the stop


def press_trajectory(x: float, y: float) -> list:
    """Close the gripper, come above the cap, push it down, come back up."""
    high = CAP_TOP_Z + APPROACH
    low = CAP_TOP_Z - PRESS_DEPTH + FINGER_BELOW_TCP
    return ["CLOSE", Pose((x, y, high), DOWN_QUAT), Pose((x, y, low), DOWN_QUAT),
            Pose((x, y, high), DOWN_QUAT)]


def _refuse(reason: str) -> ToolExecution:
    return ToolExecution([], None, reason=reason, reason_is_public=True)


def _light(on: bool) -> str:
    return "on" if on else "off"


class StuckButton(BaseError):
    """Injected error: the first press of the stage meets a stuck cap, before any motion."""

    def apply_pre_exec(self, tool_execution: ToolExecution, args: dict) -> bool | None:
        if args.get("stuck"):
            return False
        args["stuck"] = True
        tool_execution.fail("The button was stuck and did not move; it is free now.",
                            failure_flag=ToolErrorFlag.INJECTION_ERROR)
        return True

    def get_description(self, args: dict | None) -> str:
        return "A button may be stuck on the first press."


class ButtonTools(BaseToolsAPI):
    """What a Panda at the button panel can do."""

    @register_tool(
        description="Press a button of the panel once (it toggles the light of its colour).",
        params_spec={"button": {"description": "colour of the button, e.g. red", "type": str}},
        execution_group="arm",
        errors=[StuckButton],
    )
    def press(self, obs: Observation, env_id: int, params: dict) -> ToolExecution:
        known = list(obs.task_attributes.get("buttons", []))
        button = params["button"]
        if button not in known or button not in BUTTONS:
            return _refuse(f"Unknown button {button!r}. Known buttons: {', '.join(known)}.")
        reach = obs.add_constants.get("reach", {}).get(obs.selected_robot_name)
        if reach is not None and button not in reach:
            return _refuse(
                f"The {button} button is out of reach of {obs.selected_robot_name}; "
                f"it reaches {', '.join(reach)}."
            )
        if not obs.tool_batch_context.try_reserve("buttons", button, obs.selected_robot_name):
            return _refuse(f"The {button} button is already being pressed by another robot.")
        extra = obs.maniskill_obs["extra"]
        index = button_index(button)
        before = int(extra["press_count"][env_id, index])
        x, y = (float(v) for v in extra[f"button_{button}"][env_id, :2])

        def verify(after: dict) -> ToolResult:
            count = int(after["extra"]["press_count"][env_id, index])
            light = bool(after["extra"]["lights"][env_id, index])
            if count > before:
                return ToolResult(
                    ok=True, reason=f"Pressed the {button} button; the {button} light is {_light(light)}."
                )
            return ToolResult(ok=False, reason=f"The {button} button did not go down.")

        return ToolExecution(press_trajectory(x, y), verify, context={"button": button},
                             allowed_moving_actors=[])

    @register_tool(description="Look at the panel: each button and whether its light is on.",
                   is_detection=True)
    def detect_buttons(self, obs: Observation, env_id: int, params: dict) -> ToolExecution:
        known = [b for b in obs.task_attributes.get("buttons", []) if b in BUTTONS]

        def verify(after: dict) -> ToolResult:
            lights = after["extra"]["lights"][env_id]
            seen = [f"{b} (light {_light(bool(lights[button_index(b)]))})" for b in known]
            return ToolResult(ok=True, reason="Buttons: " + ", ".join(seen) + ".")

        return ToolExecution(["OK"], verify)
