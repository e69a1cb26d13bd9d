"""Skills: the authoring contract for multi-step behaviours (layer 2).

The agent calls *skills*; a skill emits one tool call at a time for its robot and reacts to
each result. A skill is a ``BaseSkill`` subclass with its own ``spec`` (a ``SkillSpec``); the
engine creates a fresh instance per call, calls ``start()`` and then ``tick(status)`` with each
result, until the skill answers a ``MessTick``. Every plain tool not used by a skill is
exposed as a one-call ``MonoToolSkill``; ``cancel_current_action`` is reserved (the engine
handles it). Skills run in ``magma_core.simulation.executor`` (layer 5).
"""

from magma_core.simulation.skills.base import (
    CANCEL_CURRENT_ACTION,
    BaseSkill,
    CallTick,
    CancelCurrentActionSkill,
    MessTick,
    MonoToolSkill,
    RobotToolStatus,
    SkillSpec,
    agent_tools,
    build_mono_tool_skill_class,
)

__all__ = [
    "CANCEL_CURRENT_ACTION",
    "BaseSkill",
    "CallTick",
    "CancelCurrentActionSkill",
    "MessTick",
    "MonoToolSkill",
    "RobotToolStatus",
    "SkillSpec",
    "agent_tools",
    "build_mono_tool_skill_class",
]
