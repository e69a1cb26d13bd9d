"""``GenSpec`` (what to grow) and ``GenResult`` (what came of it): gen's front-door values.

A ``GenSpec`` holds plain values only, like :class:`~magma_core.runs.RunSpec`, so that it can
be sent to Ray actors as it is; each builds its own task, agent, judge and engine from it.
"""

from __future__ import annotations

from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

from magma_core.agents.spec import model_facts
from magma_core.gen.coaching.manager import CoachingSettings
from magma_core.gen.settings import GenSettings
from magma_core.runs.agent_requests import Pacing
from magma_core.runs.limits import LoopLimits
from magma_core.runs.ray_cluster import RayCluster
from magma_core.runs.spec import RunSpec
from magma_core.store import default_out
from magma_core.user_error import UserError


@dataclass(frozen=True)
class GenSpec:
    """One generation: ``trees`` T trees of ``target`` (a preset, or a definition whose tree
    seeds ``seed + t`` generate the tasks) grown with ``agent``.

    ``branches`` B candidates per situation, ``max_per_stage`` K continuations per stage's
    finishers, ``max_nodes`` M candidates in all trees (with ``ray``: ceil(M / T) per tree),
    ``limits`` the run loop's (a branch ends as an episode would), ``slots`` simulator slots
    (per actor with ``ray``). Stored in ``out/magma.db`` under ``name`` (default
    ``gen-TARGET``); the same name resumes it. The agent options are :class:`RunSpec`'s.
    """

    target: str
    agent: str = "noisy-trace"
    judge: str | None = None
    branches: int = 2
    slots: int = 4
    max_per_stage: int = 10
    max_nodes: int = 200
    trees: int = 1
    seed: int = 0
    limits: LoopLimits = field(default_factory=LoopLimits)
    name: str | None = None
    out: Path = field(default_factory=default_out)  # $MAGMA_OUT, else runs
    backend: str = "auto"
    randomized: bool = False
    agent_options: dict[str, Any] = field(default_factory=dict)
    pacing: Pacing = field(default_factory=Pacing)
    agent_timeout: float | None = None
    ray: RayCluster | None = None  # grow the trees in engine actors on this Ray cluster
    coaching: CoachingSettings | None = None  # repair failed branches (magma_core.gen.coaching)
    target_args: dict[str, Any] = field(default_factory=dict)  # the target's constructor kwargs
    skills: tuple[str, ...] | None = None  # skill names of the scenario (("all",): every one)
    user: str | None = None  # a simulated user puts each tree's instructions in its words
    #: restore each candidate into a freshly built scene (the same bytes with any slot count);
    #: False keeps each slot's scene: about 35 ms less per candidate, worlds then depend on the
    #: slot's past (``--reuse-scenes``)
    fresh_scenes: bool = True
    #: store each executed candidate's control steps (opt-in; see ``gen.control``)
    record_control: bool = False

    def __post_init__(self) -> None:
        for key in ("branches", "max_per_stage", "max_nodes", "trees"):
            value = getattr(self, key)
            if not isinstance(value, int) or isinstance(value, bool) or value < 1:
                raise UserError(f"{key} must be a positive integer, got {value!r}")
        object.__setattr__(self, "out", Path(self.out))
        if self.coaching is not None and self.ray is not None:
            raise UserError("coaching does not apply with Ray yet: grow the generation without --ray")
        if self.record_control and self.ray is not None:
            raise UserError("--record-control does not apply with Ray yet: grow the generation without --ray")
        self.run_spec()  # the run-shaped values are checked as RunSpec checks them

    @property
    def generation_name(self) -> str:
        """The name the generation is stored under."""
        return self.name or f"gen-{self.target}"

    def run_spec(self) -> RunSpec:
        """The run-shaped part (target, agent, judge, seed, slots, engine, pacing)."""
        return RunSpec(target=self.target, agent=self.agent, judge=self.judge, slots=self.slots,
                       seed=self.seed, out=self.out, name=self.name, limits=self.limits,
                       backend=self.backend, randomized=self.randomized,
                       agent_options=dict(self.agent_options), pacing=self.pacing,
                       agent_timeout=self.agent_timeout, target_args=dict(self.target_args),
                       skills=self.skills, user=self.user)

    def settings(self) -> GenSettings:
        """How the trees grow."""
        return GenSettings(branches=self.branches, max_per_stage=self.max_per_stage,
                           max_nodes=self.max_nodes, trees=self.trees, seed=self.seed,
                           limits=self.limits)

    def shape(self) -> dict[str, Any]:
        """The settings a resumed generation must keep."""
        return {**self.settings().shape(), "randomized": self.randomized,
                **({"user": self.user} if self.user else {}),
                **({} if self.coaching is None else self.coaching.shape()),
                **({"target_args": dict(self.target_args)} if self.target_args else {}),
                **({"skills": list(self.skills)} if self.skills else {})}

    def config(self) -> dict[str, Any]:
        """The generation's configuration as stored with it."""
        config = {**self.shape(), "agent": self.agent, "slots": self.slots,
                  "max_nodes": self.max_nodes, "trees": self.trees,
                  **({"ray": True} if self.ray is not None else {}),
                  **({} if self.fresh_scenes else {"fresh_scenes": False}),
                  **({"record_control": True} if self.record_control else {})}
        model = model_facts(self.agent, self.agent_options)
        if model is not None:  # the model behind the agent: name, endpoint, options
            config["model"] = model
        return config


@dataclass(frozen=True)
class GenPlan:
    """The payload of the ``"begin"`` event: what this call is about to grow."""

    name: str
    settings: GenSettings
    slots: int
    randomized: bool
    ray: bool
    tree_budget: int  # candidates per tree with Ray, else M


@dataclass(frozen=True)
class TreeSummary:
    """One tree of a generation as ``magma gen`` shows it."""

    tree: int
    seed: int
    situations: int
    candidates: int
    successes: int
    invalid: int
    depth: int
    best_score: float


@dataclass
class GenResult:
    """What :func:`magma_core.gen.generate` did.

    ``counts``: situations, candidates and successful candidates stored (all calls);
    ``executed``: candidates executed in this call (None with Ray); ``snapshot_s``: snapshot
    save + restore seconds (in this process); ``failures``: one line per failure (an agent
    outage, a failed Ray actor): running the same spec again resumes; ``errors``: stored
    candidates whose episode hit a scenario error (each keeps its reason and traceback).
    """

    name: str
    store_path: Path
    counts: dict[str, int]
    trees: list[TreeSummary]
    executed: int | None = None
    snapshot_s: float = 0.0
    failures: list[str] = field(default_factory=list)
    elapsed_s: float = 0.0
    coaching: dict[str, Any] | None = None  # rows by status and outcome, seconds (with coaching)
    errors: int = 0  # stored candidates whose episode ended with a scenario error

    @property
    def ok(self) -> bool:
        """No outage and no failed actor."""
        return not self.failures
