"""``RunSpec`` (what to run) and ``RunResult`` (what came of it): the front door's values.

A ``RunSpec`` holds plain values only (strings, numbers, a path), so it can be sent to worker
processes as it is; each worker builds its own task, agent, judge and engine from it.
"""

from __future__ import annotations

import re
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

from magma_core.agents.chat_options import ChatOptions
from magma_core.agents.model_identity import resume_form
from magma_core.agents.spec import model_facts
from magma_core.runs.agent_requests import Pacing
from magma_core.runs.loop import LoopLimits
from magma_core.runs.ray_cluster import RayCluster
from magma_core.store import EpisodeSummary, default_out
from magma_core.user_error import UserError

NAME_PATTERN = re.compile(r"^[A-Za-z0-9][A-Za-z0-9_.-]{0,99}$")
BACKENDS = ("auto", "cpu", "gpu")
#: The settings a resumed run must keep: they decide what its episodes are.
RESUME_KEYS = ("agent", "seed", "judge", "randomized", "target_args", "record_control")
OBSERVE_CHOICES = ("images",)  # RunSpec.observe


def check_run_name(text: str) -> str:
    """``text`` if it is a valid run name, else a :class:`UserError`."""
    if not isinstance(text, str) or not NAME_PATTERN.match(text):
        raise UserError(f"run names use letters, digits, '_', '-' and '.', got {text!r}")
    return text


@dataclass(frozen=True)
class RunSpec:
    """One run: ``episodes`` episodes of ``target`` with an agent.

    ``target``: a preset or a task definition, ``scenario.Name``; with a definition, episode
    *k*'s seed generates its task. ``randomized``: each episode's agent sees a public
    vocabulary drawn with its seed from the target's randomisation YAML (off by default).

    ``agent``: ``trace``, ``openai:MODEL[@BASE_URL]`` or ``http://HOST:PORT``, with
    ``agent_options`` (the fields of a ``ChatOptions``); the judge's are ``judge_options``.
    The stored config names the model (``model``/``judge_model``: name, endpoint, options). ``judge``:
    None, ``none`` (accept any non-empty answer) or ``openai:MODEL[@BASE_URL]``; a preset with
    judged stages needs one. Episode *k* uses seed ``seed + k``. ``slots`` episodes run side by
    side in one engine, in each of ``workers`` processes. The run is stored in
    ``out/magma.db`` under ``name`` (default: the target); the same name resumes it. ``skills``:
    skill names of the scenario's manifest (``("all",)``: every one); None: the preset's own
    ``skills`` (skill classes) if it has them, else plain tools. ``ray``: run on that Ray
    cluster instead, in its engine actors of ``slots`` slots each (``workers`` is then unused).
    ``target_args``: keyword arguments of the target's constructor (checked against it).
    """

    target: str
    agent: str = "trace"
    judge: str | None = None
    episodes: int = 1
    slots: int = 1
    workers: int = 1
    seed: int = 0
    out: Path = field(default_factory=default_out)  # $MAGMA_OUT, else runs
    name: str | None = None
    limits: LoopLimits = field(default_factory=LoopLimits)
    backend: str = "auto"
    env_options: dict[str, Any] = field(default_factory=dict)
    skills: tuple[str, ...] | None = None
    randomized: bool = False
    agent_options: dict[str, Any] = field(default_factory=dict)
    judge_options: dict[str, Any] = field(default_factory=dict)
    pacing: Pacing = field(default_factory=Pacing)
    agent_timeout: float | None = None
    ray: RayCluster | None = None
    target_args: dict[str, Any] = field(default_factory=dict)  # the target's constructor kwargs
    user: str | None = None  # a simulated user: builtin or openai:MODEL@URL (agents.user_simulation)
    #: what the agent observes besides text: ``("images",)`` puts the world's camera images
    #: after each decision into its input (``extra_keys["images"]``; needs a render device)
    observe: tuple[str, ...] = ()
    #: a fresh PhysX scene per episode: stored worlds bit-identical whatever the timing (and
    #: after a resume), for 30-40 ms per episode; False reuses each slot's scene
    fresh_scenes: bool = True
    #: record every control step's joint state and commanded action per decision (opt-in,
    #: for robot-learning exports: ``magma export --format lerobot``; see
    #: ``simulation.executor.control_record``)
    record_control: bool = False

    def __post_init__(self) -> None:
        for key in ("episodes", "slots", "workers"):
            value = getattr(self, key)
            if not isinstance(value, int) or isinstance(value, bool) or value < 1:
                raise UserError(f"{key} must be a positive integer, got {value!r}")
        if not isinstance(self.seed, int) or isinstance(self.seed, bool) or self.seed < 0:
            raise UserError(f"seed must be an integer >= 0, got {self.seed!r}")
        if self.backend not in BACKENDS:
            raise UserError(f"backend must be one of {', '.join(BACKENDS)}, got {self.backend!r}")
        if self.name is not None:
            check_run_name(self.name)
        if not isinstance(self.env_options, dict):
            raise UserError("env_options must be a dict")
        if not isinstance(self.target_args, dict) or not all(isinstance(k, str) for k in self.target_args):
            raise UserError("target_args must be a dict of constructor keyword arguments")
        if not isinstance(self.agent_options, dict):
            raise UserError("agent_options must be a dict of model options")
        ChatOptions.from_mapping(self.agent_options)  # a bad option is a UserError now
        if not isinstance(self.judge_options, dict):
            raise UserError("judge_options must be a dict of model options")
        ChatOptions.from_mapping(self.judge_options, where="judge options")
        if isinstance(self.observe, str) or not all(o in OBSERVE_CHOICES for o in self.observe):
            raise UserError(f"observe must be a list of {', '.join(OBSERVE_CHOICES)}, got {self.observe!r}")
        object.__setattr__(self, "observe", tuple(dict.fromkeys(self.observe)))
        if self.agent_timeout is not None and not self.agent_timeout > 0:
            raise UserError(f"agent_timeout must be a positive number of seconds, got {self.agent_timeout!r}")
        object.__setattr__(self, "out", Path(self.out))
        if self.skills is not None:
            if isinstance(self.skills, str) or not all(isinstance(n, str) for n in self.skills):
                raise UserError("skills must be a list of skill names (or ['all'])")
            object.__setattr__(self, "skills", tuple(self.skills))

    @property
    def run_name(self) -> str:
        """The name the run is stored under."""
        return self.name or self.target

    def config(self) -> dict[str, Any]:
        """The run's configuration as stored with it."""
        config = {
            "preset": self.target,
            "agent": self.agent,
            "judge": self.judge,
            "episodes": self.episodes,
            "slots": self.slots,
            "workers": self.workers,
            "seed": self.seed,
            "max_decisions": self.limits.max_decisions,
        }
        if self.env_options:
            config["env_options"] = self.env_options
        if self.target_args:
            config["target_args"] = self.target_args
        if self.skills is not None:
            config["skills"] = list(self.skills)
        if self.randomized:
            config["randomized"] = True
        if self.user:
            config["user"] = self.user
        if self.observe:
            config["observe"] = list(self.observe)
        if not self.fresh_scenes:
            config["fresh_scenes"] = False
        if self.record_control:
            config["record_control"] = True
        if self.agent_options:
            config["agent_options"] = self.agent_options
        if self.judge_options:
            config["judge_options"] = self.judge_options
        for key, spec, options in (("model", self.agent, self.agent_options),
                                   ("judge_model", self.judge, self.judge_options)):
            facts = model_facts(spec, options)
            if facts is not None:
                config[key] = facts
        if self.pacing != Pacing():
            config["pacing"] = {k: getattr(self.pacing, k) for k in Pacing.__dataclass_fields__}
        if self.agent_timeout is not None:
            config["agent_timeout"] = self.agent_timeout
        return config


def check_resume(stored: dict[str, Any], given: dict[str, Any], name: str) -> None:
    """A resumed run must keep what decides its episodes (agent, seed, judge)."""
    for key in RESUME_KEYS:  # a loopback server's port may change (resume_form)
        if resume_form(stored.get(key)) != resume_form(given.get(key)):
            raise UserError(
                f"run {name!r} was started with --{key} {stored.get(key)!r}; "
                f"resume it with the same value or choose another --name"
            )


@dataclass
class RunResult:
    """What :func:`magma_core.runs.run` did.

    ``summaries``: every stored episode of the run below ``spec.episodes`` (those of earlier,
    resumed invocations too); ``resumed``: how many were stored before this call;
    ``failures``: one line per failed worker (or the agent outage that stopped the run);
    ``model``: the model behind an ``openai`` agent (name, endpoint, decoding options and, as
    its server reports it, ``identity``: engine, version, weights digest), else None.
    """

    name: str
    store_path: Path
    summary_path: Path
    summaries: list[EpisodeSummary]
    resumed: int = 0
    failures: list[str] = field(default_factory=list)
    elapsed_s: float = 0.0
    model: dict[str, Any] | None = None  # the config's model facts, with the server's identity

    @property
    def ok(self) -> bool:
        """No failed worker, no outage and no episode that ended in an engine error."""
        return not self.failures and all(s.status != "error" for s in self.summaries)
