"""``BaseToolsAPI``: a scenario's tool set, with one registry per concrete class."""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from typing import TYPE_CHECKING, ClassVar

from magma_core.json_types import JSONDict
from magma_core.simulation.data_structures import Observation, ToolExecution
from magma_core.simulation.tools.arguments import check_arguments
from magma_core.simulation.tools.registration import ToolRegistration, get_registration
from magma_core.simulation.tools.robot_init import defer_robot_init, run_deferred_init

if TYPE_CHECKING:  # named for the annotations only
    from mani_skill.agents.base_agent import BaseAgent


class BaseToolsAPI:
    """Subclass it and decorate tool methods with ``@register_tool``.

    Each subclass exposes only the tools decorated in its own body; an inherited tool must be
    redeclared to be exposed. The engine constructs the class without arguments, then binds
    the robots with :meth:`bind_robots`. A subclass whose ``__init__`` takes the
    predecessor's ``(agents, equivalence)`` works too: its ``__init__`` runs when the robots
    are bound, with the agents in index order and ``{robot name: index}``.
    """

    _tool_registry: ClassVar[dict[str, ToolRegistration]] = {}

    def __init_subclass__(cls, **kwargs: object) -> None:
        super().__init_subclass__(**kwargs)
        registry = {}
        for attribute in cls.__dict__.values():
            registration = get_registration(attribute)
            if registration is not None:
                registry[registration.name] = registration
        cls._tool_registry = registry
        defer_robot_init(cls, BaseToolsAPI.__init__)

    def __init__(self, agents: Sequence[BaseAgent] | None = None,
                 equivalence: Mapping[str, int] | None = None) -> None:
        self._robots: dict[str, BaseAgent] = {}
        if agents is not None:  # the predecessor's constructor: agents and name -> index
            names = sorted(equivalence or {}, key=lambda n: (equivalence or {})[n])
            if len(names) != len(agents):
                names = [f"robot_{i}" for i in range(len(agents))] if len(agents) > 1 else [""]
            self._robots = dict(zip(names, agents, strict=True))

    # -- robots ----------------------------------------------------------------------------
    def bind_robots(self, robots: Mapping[str, BaseAgent]) -> None:
        """Called by the engine: robot name -> the simulator's agent for that robot."""
        if not isinstance(robots, Mapping) or not all(isinstance(k, str) for k in robots):
            raise TypeError("bind_robots takes a mapping of robot name to agent")
        self._robots = dict(robots)
        run_deferred_init(self, self._robots)

    def robot_names(self) -> list[str]:
        return list(self._robots)

    def get_agent(self, robot_name: str = "") -> BaseAgent:
        """The bound agent named ``robot_name`` ("" is allowed when a single robot is bound)."""
        if not self._robots:
            raise RuntimeError(f"{type(self).__name__} has no robots bound yet")
        if robot_name in self._robots:
            return self._robots[robot_name]
        if robot_name == "" and len(self._robots) == 1:
            return next(iter(self._robots.values()))
        raise KeyError(f"Unknown robot {robot_name!r}; bound robots: {sorted(self._robots)}")

    # -- registry --------------------------------------------------------------------------
    @classmethod
    def get_tools(cls) -> list[ToolRegistration]:
        """This class's tools, in declaration order."""
        return list(cls._tool_registry.values())

    @classmethod
    def get_api_description(cls) -> list[JSONDict]:
        """What the agent sees of each tool."""
        return [r.api_description() for r in cls._tool_registry.values()]

    @classmethod
    def detection_tool_names(cls) -> list[str]:
        """Sorted names of the tools registered with ``is_detection=True``."""
        return sorted(r.name for r in cls._tool_registry.values() if r.is_detection)

    def _return_failed_tool(self, reason: str) -> ToolExecution:
        """A call refused before any motion (``BAD_CALL``), as the predecessor named it."""
        return _failed(reason)

    # -- calls -----------------------------------------------------------------------------
    def call_tool(
        self, name: str, obs: Observation, env_id: int, params: object
    ) -> ToolExecution:
        """Run tool ``name``; a bad call (unknown tool, bad arguments) is a failed execution.

        Exceptions raised by the tool method itself are scenario bugs and propagate.
        """
        registration = self._tool_registry.get(name) if isinstance(name, str) else None
        if registration is None:
            execution = _failed(f"{name} is not a known tool.")
            execution.function_name = str(name)
            return execution
        arguments, problem = check_arguments(registration, params)
        if arguments is None:
            execution = _failed(problem)
        else:
            execution = registration.function(self, obs, env_id, arguments)
            if not isinstance(execution, ToolExecution):
                raise TypeError(
                    f"tool {name} returned {type(execution).__name__}, expected ToolExecution"
                )
        return _apply_registration(execution, registration)


def _failed(reason: str) -> ToolExecution:
    execution = ToolExecution(poses=[], verifier=None)
    execution.fail(reason)
    return execution


def _apply_registration(execution: ToolExecution, registration: ToolRegistration) -> ToolExecution:
    execution.function_name = registration.name
    execution.compatible_error_supports = list(registration.error_supports)
    if execution.execution_group is None:
        execution.execution_group = registration.execution_group
    if registration.is_detection:
        execution.allowed_moving_actors = []
    return execution
