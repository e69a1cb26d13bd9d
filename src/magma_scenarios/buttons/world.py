"""The buttons world's layout, without the simulator: ids, sizes and places (table frame, m).

A panel of push buttons stands on the table in front of the robot. Each button is an
articulation: a fixed housing and a cap on a vertical prismatic joint whose drive pulls it
back up (a spring). Pressing a button toggles the light of the same colour; lights, press
counts and the order of presses are non-physical state kept in ``magma_extra_state``.

``magma_scenarios.buttons.env`` builds the worlds from these; tools, goals and presets import
this module and never pay for ManiSkill.
"""

from __future__ import annotations

__all__ = [
    "BUTTONS",
    "BUTTON_CENTERS",
    "BUTTON_CENTERS_DUO",
    "CAP_HALF_SIZE",
    "CAP_TOP_Z",
    "DUO_ENV_ID",
    "ENV_ID",
    "HOUSING_HALF_SIZE",
    "MAX_PRESSES",
    "STROKE",
    "button_index",
]

ENV_ID = "MagmaButtons-v1"
DUO_ENV_ID = "MagmaButtonsDuo-v1"
BUTTONS = ("red", "green", "blue", "yellow")
HOUSING_HALF_SIZE = (0.03, 0.03, 0.015)  # fixed base of each button, resting on the table
CAP_HALF_SIZE = (0.02, 0.02, 0.01)  # the moving cap, on top of the housing
STROKE = 0.02  # the cap travels this far down; pressed when it is down by more than half
CAP_TOP_Z = 2 * HOUSING_HALF_SIZE[2] + 2 * CAP_HALF_SIZE[2]  # cap top at rest
MAX_PRESSES = 16  # length of the recorded press order
BUTTON_CENTERS = {
    "red": (0.05, -0.18),
    "green": (0.05, -0.06),
    "blue": (0.05, 0.06),
    "yellow": (0.05, 0.18),
}
# With two robots (at y = -0.35 and y = +0.35) the panel is longer: each robot reaches its side.
BUTTON_CENTERS_DUO = {
    "red": (0.05, -0.30),
    "green": (0.05, -0.12),
    "blue": (0.05, 0.12),
    "yellow": (0.05, 0.30),
}


def button_index(name: str) -> int:
    """Index of a button (its column in the ``lights`` / ``press_count`` tensors)."""
    return BUTTONS.index(name)
