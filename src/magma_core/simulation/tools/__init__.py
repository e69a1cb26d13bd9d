"""Tools: the actions an agent can call, declared with ``@register_tool`` on a ``BaseToolsAPI``.

A tool method ``(self, obs, env_id, params) -> ToolExecution`` prepares a trajectory and a
verifier; ``BaseToolsAPI.call_tool`` validates the agent's arguments first and turns any bad
call into a failed ``ToolExecution`` (``BAD_CALL``), never an exception.
"""

from magma_core.simulation.errors.base import ToolErrorSupport
from magma_core.simulation.tools.base import BaseToolsAPI
from magma_core.simulation.tools.registration import ToolRegistration, register_tool

__all__ = ["BaseToolsAPI", "ToolErrorSupport", "ToolRegistration", "register_tool"]
