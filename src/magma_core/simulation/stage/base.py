"""``BaseTaskStage``: one step of a task — its input, goals, budgets, verification and effects.

A concrete stage sets ``target_tool_calls`` and ``max_tool_calls`` (class attributes, or
instance attributes set before ``super().__init__``) and passes its goals and input::

    class PlaceCube(BaseTaskStage):
        target_tool_calls = 2
        max_tool_calls = 4

        def __init__(self) -> None:
            super().__init__(
                goals=[At("cube", "goal_region")],
                stage_goal_description="The cube is on the goal region.",
                stage_input=StageInput(UserInstruction("Put the cube on the goal."), True),
            )

        def _to_spec_arguments(self) -> dict:
            return {}
"""

from __future__ import annotations

import dataclasses
from collections.abc import Iterator, Sequence
from typing import TYPE_CHECKING, TypeVar

import torch

from magma_core.json_types import JSONDict
from magma_core.serialization import contract_base, object_from_spec, object_to_spec
from magma_core.simulation.data_structures import Log, StageInput, StageState, StageSuccess
from magma_core.simulation.data_structures.state_tree import StateTree
from magma_core.simulation.errors.base import BaseError
from magma_core.simulation.goals.base import SCORE_DTYPE, BaseGoal, check_score
from magma_core.simulation.stage.environment_transition import BaseStageEnvironmentTransition
from magma_core.simulation.stage.parameters import (
    StageErrorParameters,
    StageGlobalParameters,
    TextOnlyValidationMode,
)
from magma_core.simulation.stage.scorers import BaseScorer

if TYPE_CHECKING:
    from _typeshed import DataclassInstance

_T = TypeVar("_T", bound="DataclassInstance")

_BUDGETS = ("target_tool_calls", "max_tool_calls")


@contract_base
class BaseTaskStage:
    """A stage: goals and log checks decide completion; budgets score its efficiency."""

    target_tool_calls: int | None
    max_tool_calls: int | None
    #: Materialised error arguments (``{error name: its arguments}``, one entry per possible
    #: error): when set, the stage's errors are these instead of a draw (a replay imposes an
    #: episode's errors exactly). None: drawn with the slot's RNG.
    active_error_arguments_override: dict[str, JSONDict] | None = None
    #: A rule-based check of a text-only stage's answer (a ``BaseScorer``, see
    #: :mod:`magma_core.simulation.stage.scorers`): when set, it validates the answer instead
    #: of the judge, and the stage needs no ``--judge``. None: the judge (or SAY_ONLY).
    scorer: BaseScorer | None = None

    def __init__(
        self,
        goals: Sequence[BaseGoal] | None,
        stage_goal_description: str,
        stage_input: StageInput,
        global_parameters: StageGlobalParameters | None = None,
        error_parameters: StageErrorParameters | None = None,
        entry_transition: BaseStageEnvironmentTransition | None = None,
    ) -> None:
        name = type(self).__name__
        self._init_budgets()
        goals = [] if goals is None else list(goals)
        for goal in goals:
            if not isinstance(goal, BaseGoal):
                raise TypeError(f"{name}: goals must be BaseGoal instances, got {goal!r}")
        if not isinstance(stage_goal_description, str):
            raise TypeError(f"{name}: stage_goal_description must be a str")
        if not isinstance(stage_input, StageInput):
            raise TypeError(f"{name}: stage_input must be a StageInput, got {stage_input!r}")
        if entry_transition is not None and not isinstance(
            entry_transition, BaseStageEnvironmentTransition
        ):
            raise TypeError(
                f"{name}: entry_transition must be a BaseStageEnvironmentTransition or None"
            )
        self.goals: list[BaseGoal] = goals
        self.stage_goal_description = stage_goal_description
        self.stage_input = stage_input
        self.global_parameters = self._own_copy(
            global_parameters, "global_parameters", StageGlobalParameters
        )
        self.error_parameters = self._own_copy(
            error_parameters, "error_parameters", StageErrorParameters
        )
        self.entry_transition = entry_transition
        self._request_type: str | None = None

    def _init_budgets(self) -> None:
        name = type(self).__name__
        missing = [b for b in _BUDGETS if not hasattr(self, b)]
        if missing:
            raise TypeError(
                f"{name} must define {' and '.join(missing)} (class attributes, or set before "
                "calling BaseTaskStage.__init__); use None for an unknown value"
            )
        target, maximum = self.target_tool_calls, self.max_tool_calls
        for budget, value in zip(_BUDGETS, (target, maximum), strict=True):
            if value is not None and (isinstance(value, bool) or not isinstance(value, int)):
                raise TypeError(f"{name}.{budget} must be an int or None, got {value!r}")
        if target is None and maximum is None:
            raise ValueError(f"{name}: target_tool_calls and max_tool_calls cannot both be None")
        if target is not None and target < 0:
            raise ValueError(f"{name}.target_tool_calls must be >= 0, got {target}")
        if maximum is None:
            maximum = 2 * target  # type: ignore[operator]
        if maximum < 0:
            raise ValueError(f"{name}.max_tool_calls must be >= 0, got {maximum}")
        if target is not None and target > maximum:
            raise ValueError(
                f"{name}: target_tool_calls ({target}) exceeds max_tool_calls ({maximum})"
            )
        self.target_tool_calls, self.max_tool_calls = target, maximum

    def _own_copy(self, given: object, attribute: str, cls: type[_T]) -> _T:
        """The argument, else a class-level value, else defaults — copied, never shared."""
        value = given if given is not None else getattr(self, attribute, None)
        if value is None:
            return cls()
        if not isinstance(value, cls):
            raise TypeError(f"{type(self).__name__}.{attribute} must be a {cls.__name__}")
        return dataclasses.replace(value)

    # -- declarations ----------------------------------------------------------------------
    @property
    def request_type(self) -> str | None:
        """The request that generated this stage (None when unknown). Settable once."""
        return self._request_type

    @request_type.setter
    def request_type(self, value: str) -> None:
        if not isinstance(value, str) or not value.strip():
            raise ValueError("request_type must be a non-empty str")
        value = value.strip()
        if self._request_type is not None and self._request_type != value:
            raise RuntimeError(
                f"request_type is already {self._request_type!r}; cannot change it to {value!r}"
            )
        self._request_type = value

    def set_request_type(self, value: str) -> None:
        self.request_type = value

    def is_text_only(self) -> bool:
        """A text-only stage is validated on the agent's message, not on the world."""
        return self.global_parameters.verification_prompt is not None

    def is_linked_to_prev(self) -> bool:
        return self.stage_input.linked_to_prev

    def has_log_verification(self) -> bool:
        """Whether the class overrides ``verif_log_completion``."""
        return type(self).verif_log_completion is not BaseTaskStage.verif_log_completion

    # -- validation ------------------------------------------------------------------------
    def validate(self) -> None:
        """Check the declaration as a whole; ``TypeError`` naming the class and the rule."""
        broken = list(self._broken_rules())
        if broken:
            raise TypeError(f"{type(self).__name__}: " + "; ".join(broken))

    def _broken_rules(self) -> Iterator[str]:
        gp, ep = self.global_parameters, self.error_parameters
        text_only = self.is_text_only()
        if not isinstance(gp.text_only_validation, TextOnlyValidationMode):
            yield "text_only_validation must be a TextOnlyValidationMode"
        elif gp.text_only_validation is not TextOnlyValidationMode.JUDGE and not text_only:
            yield f"text_only_validation={gp.text_only_validation.value} needs a verification_prompt"
        if gp.allow_tools_before_answer and not text_only:
            yield "allow_tools_before_answer needs a verification_prompt (a text-only stage)"
        if not isinstance(gp.allowed_tools, list) or not all(
            isinstance(t, str) for t in gp.allowed_tools
        ):
            yield "allowed_tools must be a list of tool names"
        if gp.allowed_tools and not gp.allow_tools_before_answer:
            yield "allowed_tools needs allow_tools_before_answer=True"
        if self.scorer is not None and not isinstance(self.scorer, BaseScorer):
            yield f"scorer must be a BaseScorer (magma_core.simulation.stage.scorers), got {self.scorer!r}"
        elif self.scorer is not None and not text_only:
            yield "a scorer checks a text answer: it needs a text-only stage (a verification_prompt)"
        if text_only and self.goals:
            yield "a text-only stage (verification_prompt set) must have no goals"
        if text_only and self.has_log_verification():
            yield "a text-only stage must not override verif_log_completion"
        if not text_only and not self.goals and not self.has_log_verification():
            yield "a stage without goals must override verif_log_completion (or be text-only)"
        if not all(isinstance(e, BaseError) for e in ep.possible_errors):
            yield "possible_errors must hold BaseError instances"
        else:
            names = [e.get_name() for e in ep.possible_errors]
            duplicates = sorted({n for n in names if names.count(n) > 1})
            if duplicates:
                yield f"error names must be unique within a stage, duplicated: {duplicates}"
            override = self.active_error_arguments_override
            if override is not None:
                if not isinstance(override, dict):
                    yield "active_error_arguments_override must be a dict {error name: arguments}"
                elif set(override) != set(names):
                    yield ("active_error_arguments_override must name every possible error exactly "
                           f"(possible: {sorted(names)}, given: {sorted(map(str, override))})")
        bounds = (ep.min_active_errors, ep.max_active_errors)
        if not all(type(b) is int and b >= 0 for b in bounds):
            yield f"min/max_active_errors must be ints >= 0, got {bounds}"
        elif bounds[0] > bounds[1]:
            yield f"min_active_errors ({bounds[0]}) exceeds max_active_errors ({bounds[1]})"

    # -- verification ----------------------------------------------------------------------
    def verif_env_completion(
        self, obs: dict[str, object], num_envs: int | None = None
    ) -> torch.Tensor:
        """The element-wise minimum of the goals' scores; ones when there are no goals."""
        if not self.goals:
            n = _batch_size(obs) if num_envs is None else num_envs
            return torch.ones(n, dtype=SCORE_DTYPE, device=_device(obs))
        scores = [check_score(g.verify(obs), num_envs, f"{g.get_name()}.verify") for g in self.goals]
        if len({s.shape[0] for s in scores}) != 1:
            raise ValueError(f"{type(self).__name__}: goals disagree on the number of envs")
        return torch.stack(scores).amin(dim=0)

    def verif_log_completion(self, stage_log: list[Log], full_log: list[Log]) -> int:
        """Per-env log check (1/0/-1) on this stage's logs and the whole history. Default 1."""
        return 1

    @staticmethod
    def combine_stage_completion(env_score: int, log_score: int) -> int:
        """-1 if either is -1, 1 if both are 1, else 0."""
        if env_score == -1 or log_score == -1:
            return -1
        return 1 if env_score == 1 and log_score == 1 else 0

    def verify_completion(
        self, obs: dict[str, object], stage_logs: Sequence[list[Log]], full_logs: Sequence[list[Log]]
    ) -> torch.Tensor:
        """Completion per env (1 done, 0 ongoing, -1 failed) for the envs in ``obs``.

        ``stage_logs[i]`` / ``full_logs[i]`` are env i's logs of this stage / of the episode.
        An attribute edit (ADD/REMOVE) in a non-additive stage fails that env.
        """
        n = len(stage_logs)
        if len(full_logs) != n:
            raise ValueError(f"{n} stage log lists but {len(full_logs)} full log lists")
        env_scores = self.verif_env_completion(obs, num_envs=n)
        additive = self.global_parameters.additive_stage
        out = []
        for i in range(n):
            if not additive and any(log.action is not None for log in stage_logs[i]):
                out.append(-1)
                continue
            log_score = self.verif_log_completion(stage_logs[i], full_logs[i])
            if log_score not in (-1, 0, 1):
                raise ValueError(
                    f"{type(self).__name__}.verif_log_completion returned {log_score!r}, "
                    "expected -1, 0 or 1"
                )
            out.append(self.combine_stage_completion(int(env_scores[i]), int(log_score)))
        return torch.tensor(out, dtype=SCORE_DTYPE, device=env_scores.device)

    def get_stage_state(
        self, effective_tool_calls: int, stage_success: StageSuccess | int
    ) -> StageState:
        """The budget score, from tool calls net of forgiven ones."""
        stage_success = StageSuccess(stage_success)
        if (stage_success is not StageSuccess.FINISH and self.max_tool_calls is not None
                and effective_tool_calls >= self.max_tool_calls):
            return StageState.EXCEEDED
        if self.target_tool_calls is None:
            return StageState.UNASSESSED
        if effective_tool_calls <= self.target_tool_calls:
            return StageState.OPTIMAL
        return StageState.ACCEPTABLE

    # -- effects ---------------------------------------------------------------------------
    def build_init_state(self, env_state: StateTree, env_ids: torch.Tensor) -> StateTree:
        """The env state at stage entry: the entry transition applied to ``env_ids``."""
        if self.entry_transition is None:
            return env_state
        new_state = self.entry_transition.apply(env_state, env_ids)
        if not isinstance(new_state, dict):
            raise TypeError(
                f"{type(self.entry_transition).__name__}.apply must return the env state dict, "
                f"got {type(new_state).__name__}"
            )
        return new_state

    # -- serialization ---------------------------------------------------------------------
    def to_spec(self) -> JSONDict:
        """The spec; ``_to_spec_arguments`` must be defined on the concrete class itself."""
        cls = type(self)
        if "_to_spec_arguments" not in cls.__dict__:
            raise NotImplementedError(
                f"{cls.__name__} must define its own _to_spec_arguments() to be serialised"
            )
        return object_to_spec(self, self._to_spec_arguments())  # type: ignore[attr-defined]

    @classmethod
    def from_spec(cls, spec: JSONDict) -> BaseTaskStage:
        return object_from_spec(spec, cls)

    def __repr__(self) -> str:
        return (
            f"{type(self).__name__}(goals={len(self.goals)}, target={self.target_tool_calls}, "
            f"max={self.max_tool_calls}, text_only={self.is_text_only()})"
        )


def _first_tensor(obs: object) -> torch.Tensor | None:
    if isinstance(obs, torch.Tensor):
        return obs
    if isinstance(obs, dict):
        if isinstance(obs.get("pose"), torch.Tensor):
            return obs["pose"]
        for value in obs.values():
            found = _first_tensor(value)
            if found is not None:
                return found
    return None


def _batch_size(obs: object) -> int:
    tensor = _first_tensor(obs)
    if tensor is None:
        raise ValueError("Cannot tell the number of envs: the observation holds no tensor")
    return tensor.shape[0] if tensor.ndim >= 1 else 1


def _device(obs: object) -> torch.device:
    tensor = _first_tensor(obs)
    return tensor.device if tensor is not None else torch.device("cpu")
