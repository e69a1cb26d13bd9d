"""MAGMA's side of the LeRobot bridge: one stored episode as one LeRobot episode (no library).

What maps to what (the guide, docs/guides/lerobot.md, has the table):

* a LeRobot **frame** is one control step of the episode (``--record-control``), in decision
  order: ``observation.state`` is every robot's joint positions before the step (robots in
  the record's order, each robot's active joints in order), ``action`` the command sent in
  that step (per robot the ``pd_joint_pos`` arm targets, then the gripper's +1 open / -1
  closed); ``stage_index`` and ``decision_index`` say where in the episode it is,
  ``recovery`` marks frames of a decision that acts again after a failed call of its stage
  (or a coach's recovery), ``restored`` the first frame after the engine put the world back;
* the episode's **task** is its user instructions in stage order, joined;
* each stage is a language **segment**: its instruction, its first frame and the frame after
  its last (``from_frame`` = ``to_frame`` for a stage that moved nothing: a text answer), its
  verdict (``success``: FINISH / FAILED, ``state``: OPTIMAL / ACCEPTABLE / ...), its
  decisions and which of them were recoveries; the frames of a stage carry its instruction
  as their ``subtask``.

The functions here take plain records (the store's JSON) and return plain dicts, so they are
tested without LeRobot, pandas or a simulator.
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from typing import Any

__all__ = ["episode_frames", "episode_segments", "feature_names", "map_episode", "recovery_decisions",
           "task_text"]


def _user_instruction(step: Mapping[str, Any]) -> str:
    """The user's words a step answered (its ``user`` inputs joined), "" when none."""
    texts = [m.get("content", "") for m in step.get("inputs") or []
             if m.get("kind") == "user" and m.get("content")]
    return "\n\n".join(texts)


def stage_instructions(record: Mapping[str, Any]) -> dict[int, str]:
    """Stage index -> the instruction that opened it: the first user input of its steps, else
    the stage's description (a stage no user input opened)."""
    out: dict[int, str] = {}
    for step in record.get("steps") or []:
        stage, text = int(step.get("stage_index") or 0), _user_instruction(step)
        if text and stage not in out:
            out[stage] = text
    for stage in record.get("stages") or []:
        index = int(stage.get("index", 0))
        if index not in out and stage.get("started"):
            out[index] = str(stage.get("description") or stage.get("name") or f"stage {index}")
    return out


def task_text(record: Mapping[str, Any]) -> str:
    """The episode's task: the user's instructions in stage order, joined by a space (the
    engine's own stages, e.g. the closing answer, add none); the task's name when none."""
    texts: dict[int, str] = {}
    for step in record.get("steps") or []:
        stage, text = int(step.get("stage_index") or 0), _user_instruction(step)
        if text:
            texts.setdefault(stage, text)
    return " ".join(texts[k] for k in sorted(texts)) or str(record.get("task") or "")


def recovery_decisions(record: Mapping[str, Any], origins: Mapping[int, str] | None = None) -> set[int]:
    """Decisions (from 1) that are recoveries: one that acts again in a stage where an
    earlier decision had a failed call, or whose origin is a coach's ``recovery``."""
    out = {k for k, origin in (origins or {}).items() if origin == "recovery"}
    failed_in: set[int] = set()
    for n, step in enumerate(record.get("steps") or []):
        stage = int(step.get("stage_index") or 0)
        calls = step.get("calls") or []
        if stage in failed_in and calls:
            out.add(n + 1)
        if any(not c.get("ok", True) for c in calls):
            failed_in.add(stage)
    return out


def _stage_of(record: Mapping[str, Any], decision: int) -> int:
    steps = record.get("steps") or []
    if 1 <= decision <= len(steps):
        return int(steps[decision - 1].get("stage_index") or 0)
    return 0


def feature_names(joints: Mapping[str, Sequence[str]], action_sizes: Mapping[str, int]) -> tuple[list[str], list[str]]:
    """(names of ``observation.state``, names of ``action``): ``robot.joint`` per joint;
    per robot ``robot.arm_target_i`` for each arm target and ``robot.gripper`` last."""
    state = [f"{robot}.{joint}" for robot, names in joints.items() for joint in names]
    action = []
    for robot, size in action_sizes.items():
        action += [f"{robot}.arm_target_{i}" for i in range(size - 1)] + [f"{robot}.gripper"]
    return state, action


def episode_frames(record: Mapping[str, Any], control: Sequence[Mapping[str, Any]],
                   origins: Mapping[int, str] | None = None) -> list[dict[str, Any]]:
    """The frames of one episode: ``{"state", "action", "stage", "decision", "recovery",
    "restored", "world"}`` per control step, decisions in order (see the module)."""
    recoveries = recovery_decisions(record, origins)
    frames = []
    for block in sorted(control, key=lambda b: int(b["decision"])):
        decision = int(block["decision"])
        robots = list(block.get("joints") or {})
        for step in block.get("steps") or []:
            names = robots or list(step["qpos"])
            frames.append({
                "state": [float(v) for r in names for v in step["qpos"][r]],
                "action": [float(v) for r in names for v in step["action"][r]],
                "stage": _stage_of(record, decision),
                "decision": decision,
                "recovery": decision in recoveries,
                "restored": bool(step.get("restored")),
                "world": step.get("world"),
            })
    return frames


def episode_segments(record: Mapping[str, Any], frames: Sequence[Mapping[str, Any]],
                     origins: Mapping[int, str] | None = None) -> list[dict[str, Any]]:
    """One segment per stage the episode reached, in stage order (see the module)."""
    instructions = stage_instructions(record)
    recoveries = recovery_decisions(record, origins)
    steps = record.get("steps") or []
    segments = []
    position = 0
    for stage in sorted(record.get("stages") or [], key=lambda s: int(s.get("index", 0))):
        index = int(stage.get("index", 0))
        decisions = [n + 1 for n, s in enumerate(steps) if int(s.get("stage_index") or 0) == index]
        if not stage.get("started") and not decisions:
            continue
        mine = [i for i, f in enumerate(frames) if f["stage"] == index]
        start, end = (mine[0], mine[-1] + 1) if mine else (position, position)
        position = max(position, end)
        segments.append({
            "stage": index,
            "instruction": instructions.get(index, ""),
            "from_frame": start,
            "to_frame": end,
            "success": stage.get("success") or "",
            "state": stage.get("state") or "",
            "decisions": decisions,
            "recoveries": [d for d in decisions if d in recoveries],
        })
    return segments


def map_episode(record: Mapping[str, Any], control: Sequence[Mapping[str, Any]],
                origins: Mapping[int, str] | None = None) -> dict[str, Any]:
    """One episode for LeRobot: ``task``, ``frames``, ``segments``, the ``rate`` (Hz) and the
    feature ``names`` ({"state": [...], "action": [...]}); no frames without control steps."""
    frames = episode_frames(record, control, origins)
    joints: dict[str, list[str]] = {}
    sizes: dict[str, int] = {}
    rate = None
    for block in control:
        joints = joints or {r: list(n) for r, n in (block.get("joints") or {}).items()}
        rate = rate or block.get("rate")
        for step in block.get("steps") or []:
            sizes = sizes or {r: len(a) for r, a in step["action"].items()}
    state_names, action_names = feature_names(joints, {r: sizes[r] for r in joints if r in sizes})
    return {
        "task": task_text(record),
        "status": record.get("status", ""),
        "frames": frames,
        "segments": episode_segments(record, frames, origins),
        "rate": rate,
        "names": {"state": state_names, "action": action_names},
    }
