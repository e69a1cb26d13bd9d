"""Whole-slot snapshots: the world state of a slot plus everything the engine keeps about its
episode, frozen, so that a situation can be resumed in any slot of an executor of the same task.

``Executor.snapshot(slot)`` takes a :class:`SlotSnapshot` (:func:`capture`);
``Executor.restore(slot, snapshot)`` puts it back into any slot (:func:`rebuild` gives the
slot's new ``SlotState``). Restoring a snapshot and
submitting the same decision gives the same outcome: the same step outcome, stage, counters,
logs, attributes and RNG, exactly. The world state is restored bit for bit, and a replay after
a restore is bit for bit the same as another after the same slot history; after different
histories (another slot, or the same slot after other episodes) it agrees only to within
PhysX's internal solver and contact state, which no simulator state exposes (up to ~3 mm on a
placed cube). Tried and measured without removing it: enhanced determinism, PCM off, both;
no sleeping (``sleep_threshold=0``); the PGS solver; zeroing the articulations' ``qacc`` and
``qf``, setting drive targets and controllers to the restored joints (the same divergence to
the micrometre, so not articulation state); moving every actor and articulation 50 m apart
and stepping once or twice before restoring (clears every contact pair; still diverges).
Enhanced determinism and PGS made it worse (up to 8 mm and 24 mm).

Cheap in memory: the world state is one row of tensors; episode data that never changes once
written (step records, logs, the world after each step, the scene) is shared between
snapshots, not copied; what the engine edits
in place (attributes, error arguments, stage records) is deep-copied. ``to_bytes`` /
``from_bytes`` serialise a snapshot for the run store with the spec format's value encoding
(JSON, zlib-compressed; nothing is evaluated when loading).
"""

from __future__ import annotations

import copy
import dataclasses
import json
import random
import time
import zlib
from dataclasses import dataclass, field
from typing import TYPE_CHECKING

from magma_core.json_types import JSONDict
from magma_core.serialization import decode_value, encode_value
from magma_core.simulation.data_structures import Log
from magma_core.simulation.data_structures.state_tree import StateTree
from magma_core.simulation.executor.records import (
    EpisodeRecord,
    StageRecord,
    StepRecord,
    ViewMessage,
)
from magma_core.simulation.executor.skill_state import SkillSlotState, skill_state_from_data
from magma_core.simulation.executor.slots import EngineContext, SlotState
from magma_core.simulation.tasks import BaseTask

if TYPE_CHECKING:
    from magma_core.simulation.data_structures.state_tree import StateTree
    from magma_core.simulation.data_structures.tools import ErrorArgs
    from magma_core.simulation.envs.sim_batch import WorldSnapshot
    from magma_core.simulation.errors.base import BaseError
    from magma_core.simulation.randomizer import RuntimeRandomizer

FORMAT = "magma.slot_snapshot.v1"


@dataclass(frozen=True)
class SlotSnapshot:
    """One slot's whole state at a decision boundary (see the module docstring).

    ``memory`` is the agent's memory at that point, carried for front ends that branch (the
    engine itself never reads it). ``task`` is the task the slot ran: restoring the snapshot
    makes the slot run it (a definition's trees run different tasks). ``vocabulary`` is the
    public-names seam's (see ``vocabulary``). Neither is serialised: ``from_bytes`` takes
    them back from the caller (the generation store keeps each tree's task and vocabulary).
    """

    world: WorldSnapshot  # what ``sim.save_slot`` returned (a stand-in may return its own tree)
    reference: WorldSnapshot | None
    seed: int
    rng_state: tuple
    status: str
    stage_index: int
    tool_calls: int
    forgiven_tool_calls: int
    logs: tuple[Log, ...]
    stage_log_start: int
    active_errors: tuple[BaseError, ...]
    error_args: ErrorArgs
    attributes: JSONDict
    messages: tuple[ViewMessage, ...]
    feedback: JSONDict | None
    last_user_instruction: str
    step_index: int
    record: JSONDict  # the episode record's header fields
    record_stages: tuple[StageRecord, ...]
    record_steps: tuple[StepRecord, ...]
    record_logs: tuple[JSONDict, ...]
    memory: JSONDict = field(default_factory=dict)
    skills: SkillSlotState | None = None  # running and suspended skills (engines with skills)
    record_worlds: tuple[JSONDict | None, ...] = ()  # the world after each step (shared)
    record_scene: JSONDict = field(default_factory=dict)  # written once per episode (shared)
    # Not serialised (a store keeps them once, beside the snapshots): the task the slot ran
    # (None: the executor's own) and the public names the agent saw (None: canonical).
    task: BaseTask | None = field(default=None, compare=False)
    vocabulary: RuntimeRandomizer | None = field(default=None, compare=False)

    # -- serialisation -----------------------------------------------------------------------
    def to_dict(self, ctx: EngineContext | None = None, *, steps: bool = True) -> JSONDict:
        """A JSON-compatible dict. Active errors are stored as their index in the stage's
        ``possible_errors`` (``ctx`` gives the stages; without it, by name). Without
        ``steps`` the episode record's step list and world states are left out (a store that
        keeps each decision elsewhere need not copy the path into every snapshot). The
        record's clock readings (:data:`CLOCK_FIELDS`) are left out too: the same state gives
        the same bytes, and a snapshot read back starts its episode's clock when it is read."""
        possible = (
            ctx.stages[self.stage_index].error_parameters.possible_errors if ctx is not None else []
        )
        errors = []
        for error in self.active_errors:
            index = next((i for i, e in enumerate(possible) if e is error), None)
            errors.append({"index": index, "name": error.get_name()})
        return {
            "format": FORMAT,
            "world": _encode_world(self.world),
            "reference": None if self.reference is None else _encode_world(self.reference),
            "seed": self.seed,
            "rng_state": encode_value(self.rng_state),
            "status": self.status,
            "stage_index": self.stage_index,
            "tool_calls": self.tool_calls,
            "forgiven_tool_calls": self.forgiven_tool_calls,
            "logs": [_log_to_dict(log) for log in self.logs],
            "stage_log_start": self.stage_log_start,
            "active_errors": errors,
            "error_args": encode_value(self.error_args),
            "attributes": encode_value(self.attributes),
            "messages": [m.to_dict() for m in self.messages],
            "feedback": encode_value(self.feedback),
            "last_user_instruction": self.last_user_instruction,
            "step_index": self.step_index,
            "record": encode_value({k: v for k, v in self.record.items() if k not in CLOCK_FIELDS}),
            "record_stages": [_encode_fields(s) for s in self.record_stages],
            "record_steps": [encode_value(dataclasses.asdict(s)) for s in self.record_steps]
            if steps
            else [],
            "record_worlds": encode_value(list(self.record_worlds)) if steps else [],
            "record_scene": encode_value(self.record_scene),
            "record_logs": encode_value(list(self.record_logs)),
            "memory": encode_value(self.memory),
            "skills": None if self.skills is None else self.skills.to_data(),
        }

    @classmethod
    def from_dict(cls, data: JSONDict, ctx: EngineContext) -> SlotSnapshot:
        """The inverse of :meth:`to_dict` for the task ``ctx`` runs."""
        if data.get("format") != FORMAT:
            raise ValueError(f"not a slot snapshot ({data.get('format')!r}, expected {FORMAT!r})")
        stage_index = int(data["stage_index"])
        possible = ctx.stages[stage_index].error_parameters.possible_errors
        errors = []
        for entry in data["active_errors"]:
            index = entry.get("index")
            if index is None or not 0 <= index < len(possible):
                found = [e for e in possible if e.get_name() == entry.get("name")]
                if not found:
                    raise ValueError(f"stage {stage_index} has no error {entry.get('name')!r}")
                errors.append(found[0])
            else:
                errors.append(possible[index])
        reference = data.get("reference")
        header = decode_value(data["record"])
        header.setdefault("started_at", time.time())
        worlds = header.pop("worlds", None)  # snapshots written before worlds were kept apart
        scene = header.pop("scene", None)
        if worlds is None:
            worlds = decode_value(data.get("record_worlds", []))
        if scene is None:
            scene = decode_value(data.get("record_scene", {}))
        return cls(
            world=_decode_world(data["world"]),
            reference=None if reference is None else _decode_world(reference),
            seed=int(data["seed"]),
            rng_state=_tuples(decode_value(data["rng_state"])),
            status=str(data["status"]),
            stage_index=stage_index,
            tool_calls=int(data["tool_calls"]),
            forgiven_tool_calls=int(data["forgiven_tool_calls"]),
            logs=tuple(_log_from_dict(d) for d in data["logs"]),
            stage_log_start=int(data["stage_log_start"]),
            active_errors=tuple(errors),
            error_args=decode_value(data["error_args"]),
            attributes=decode_value(data["attributes"]),
            messages=tuple(ViewMessage(m["kind"], m["content"]) for m in data["messages"]),
            feedback=decode_value(data["feedback"]),
            last_user_instruction=str(data["last_user_instruction"]),
            step_index=int(data["step_index"]),
            record=header,
            record_stages=tuple(StageRecord(**decode_value(s)) for s in data["record_stages"]),
            record_steps=tuple(StepRecord(**decode_value(s)) for s in data["record_steps"]),
            record_logs=tuple(decode_value(data["record_logs"])),
            memory=decode_value(data["memory"]),
            skills=_skills_from_data(data.get("skills"), ctx),
            record_worlds=tuple(worlds),
            record_scene=scene,
        )

    def to_bytes(self, ctx: EngineContext | None = None, *, steps: bool = True) -> bytes:
        """The snapshot as compressed JSON (see :meth:`to_dict`)."""
        data = self.to_dict(ctx, steps=steps)
        return zlib.compress(json.dumps(data, separators=(",", ":")).encode(), 3)

    @classmethod
    def from_bytes(cls, blob: bytes, ctx: EngineContext) -> SlotSnapshot:
        """The inverse of :meth:`to_bytes` for the task ``ctx`` runs (its ``task``, when it is
        not the executor's, must be set by the caller)."""
        return cls.from_dict(json.loads(zlib.decompress(blob)), ctx)


# The episode record's header as a snapshot keeps it: without its slot, which says where the
# snapshot was taken, not what it holds (:func:`rebuild` sets the slot it is restored into), so
# the same state taken in any slot gives the same bytes.
#: the episode record's wall-clock readings, which a snapshot's bytes leave out
CLOCK_FIELDS = frozenset({"started_at", "ended_at", "wall_s", "engine_s"})
_RECORD_HEADER = tuple(
    f.name for f in dataclasses.fields(EpisodeRecord)
    if f.name not in ("stages", "steps", "logs", "worlds", "scene", "slot")
)


def capture(state: SlotState, world: WorldSnapshot, memory: JSONDict | None = None,
            task: BaseTask | None = None) -> SlotSnapshot:
    """A snapshot of ``state`` with the slot's world state ``world`` (``sim.save_slot``) and
    the ``task`` it runs (None: the executor's)."""
    record = state.record
    return SlotSnapshot(
        world=world,
        reference=state.reference,
        seed=state.seed,
        rng_state=state.rng.getstate(),
        status=state.status,
        stage_index=state.stage_index,
        tool_calls=state.tool_calls,
        forgiven_tool_calls=state.forgiven_tool_calls,
        logs=tuple(state.logs),
        stage_log_start=state.stage_log_start,
        active_errors=tuple(state.active_errors),
        error_args=copy.deepcopy(state.error_args),
        attributes=copy.deepcopy(state.attributes),
        messages=tuple(ViewMessage(m.kind, m.content) for m in state.messages),
        feedback=copy.deepcopy(state.feedback),
        last_user_instruction=state.last_user_instruction,
        step_index=state.step_index,
        record={name: copy.deepcopy(getattr(record, name)) for name in _RECORD_HEADER},
        record_stages=tuple(copy.deepcopy(s) for s in record.stages),
        record_steps=tuple(record.steps),
        record_logs=tuple(record.logs),
        record_worlds=tuple(record.worlds),
        record_scene=record.scene,
        memory=copy.deepcopy(memory or {}),
        skills=None if state.skills is None else state.skills.clone(),
        task=task,
    )


def rebuild(snapshot: SlotSnapshot, slot: int) -> SlotState:
    """A fresh ``SlotState`` for ``slot`` from ``snapshot`` (the world is restored separately)."""
    rng = random.Random()
    rng.setstate(snapshot.rng_state)
    header = copy.deepcopy(snapshot.record)
    header["slot"] = slot
    record = EpisodeRecord(
        **header,
        stages=[copy.deepcopy(s) for s in snapshot.record_stages],
        steps=list(snapshot.record_steps),
        logs=list(snapshot.record_logs),
        worlds=list(snapshot.record_worlds),
        scene=snapshot.record_scene,
    )
    return SlotState(
        slot=slot,
        seed=snapshot.seed,
        rng=rng,
        record=record,
        attributes=copy.deepcopy(snapshot.attributes),
        reference=snapshot.reference,
        status=snapshot.status,
        stage_index=snapshot.stage_index,
        tool_calls=snapshot.tool_calls,
        forgiven_tool_calls=snapshot.forgiven_tool_calls,
        logs=list(snapshot.logs),
        stage_log_start=snapshot.stage_log_start,
        active_errors=list(snapshot.active_errors),
        error_args=copy.deepcopy(snapshot.error_args),
        messages=[ViewMessage(m.kind, m.content) for m in snapshot.messages],
        feedback=copy.deepcopy(snapshot.feedback),
        last_user_instruction=snapshot.last_user_instruction,
        step_index=snapshot.step_index,
        skills=None if snapshot.skills is None else snapshot.skills.clone(),
    )


def _skills_from_data(data: JSONDict | None, ctx: EngineContext) -> SkillSlotState | None:
    if data is None:
        return None
    if ctx.skills is None:
        raise ValueError("the snapshot has skill state but this executor runs without skills")
    return skill_state_from_data(data, ctx.skills)


def _encode_fields(record: StageRecord) -> JSONDict:
    """A stage record's fields (plain values), encoded: ``encode_value`` builds new containers,
    so the deep copy of ``dataclasses.asdict`` is not needed."""
    return encode_value({f.name: getattr(record, f.name) for f in dataclasses.fields(record)})


def _encode_world(world: WorldSnapshot | StateTree) -> JSONDict:
    """A ``SimBatch`` snapshot, or a stand-in simulator's own state tree."""
    if hasattr(world, "state"):
        return {"kind": "snapshot", "state": encode_value(world.state)}
    return {"kind": "tree", "state": encode_value(world)}


def _decode_world(data: JSONDict) -> WorldSnapshot | StateTree:
    if data.get("kind") == "tree":
        return decode_value(data["state"])
    from magma_core.simulation.envs.sim_batch import WorldSnapshot  # the simulator's, on demand

    return WorldSnapshot(decode_value(data["state"]))


def _log_to_dict(log: Log) -> JSONDict:
    return {
        "content": encode_value(log.content),
        "action": log.action,
        "function": log.function,
        "stage_id": log.stage_id,
    }


def _log_from_dict(data: JSONDict) -> Log:
    log = Log(decode_value(data["content"]), data.get("action"))
    log.function = data.get("function")
    log.stage_id = data.get("stage_id")
    return log


def _tuples(value: object) -> object:
    """``random.Random.setstate`` needs tuples where JSON gave lists."""
    if isinstance(value, list):
        return tuple(_tuples(v) for v in value)
    return value
