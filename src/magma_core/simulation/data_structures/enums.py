"""Enumerations shared by tools, stages and the engine."""

from enum import IntEnum, StrEnum


class ToolErrorFlag(StrEnum):
    """Why a tool call failed (NONE when it did not)."""

    NONE = "none"
    BAD_CALL = "bad_call"
    PLANNER_ERROR = "planner_error"
    INJECTION_ERROR = "injection_error"


class StageSuccess(IntEnum):
    """Outcome of a stage verification."""

    FINISH = 1
    ONGOING = 0
    FAILED = -1


class StageState(IntEnum):
    """Budget score of a stage."""

    OPTIMAL = 1
    ACCEPTABLE = 0
    UNASSESSED = 2
    EXCEEDED = -1
