"""MAGMA's side of the OpenEnv bridge, as plain data: no OpenEnv import, tested in ``make test``.

What maps to what (the models in :mod:`magma_core.integrations.openenv.models` carry these):

- an OpenEnv session is one :class:`~magma_core.rl.rollouts.Rollout` at a time; ``reset`` takes
  the next member of a group (:class:`GroupBook`): sessions that reset with the same group key
  restore the group's one start snapshot, so the whole group shares one initial state;
- an action (``content`` + OpenAI ``tool_calls``) is the assistant message the rollout's
  ``step`` turns into a decision (:func:`assistant_message`); ``end`` truncates the rollout;
- the observation's ``reward`` and ``done`` are the rl env's (terminal reward, or the step
  credit with ``reward_mode="credit"``); its ``credit`` is the step's share of that reward
  (:func:`step_credit`), so a trainer that wants dense rewards has them, and a group's
  rewards give each rollout its group-relative advantage (:func:`group_advantages`).

Step credit is the default reward's formula (:class:`~magma_core.rl.rewards.Reward`) read as a
potential over the episode's stage records: ``phi = progress * passed / stages + optimal *
optimal / stages - cost_per_call * calls``. A step's credit is ``phi`` after it minus ``phi``
before it; the step that ends the rollout gets the rest of the reward (the success term, and
any difference the end made), so a rollout's credits plus its ``start_credit`` (``phi`` of its
start: non-zero only for a stored situation) add up to its reward exactly. With a user reward
function there is no formula to split: the whole reward is the ending step's credit.
"""

from __future__ import annotations

import json
import math
from collections.abc import Callable, Sequence
from dataclasses import dataclass, field
from typing import Any

from magma_core.rl.rewards import Reward, RewardFn
from magma_core.user_error import UserError

#: What an observation's ``reward`` carries: the rl env's reward (0.0 until the step that ends
#: the rollout, which carries the whole reward), or each step's credit.
REWARD_MODES = ("terminal", "credit")
FINISH = "FINISH"  # a stage's ``success`` once it passed (the engine's StageSuccess name)
OPTIMAL = "OPTIMAL"  # a stage's ``state`` when finished within its target calls
RUNNING = "running"


def assistant_message(content: Any = "", tool_calls: Any = None) -> dict[str, Any]:
    """The OpenAI assistant message of an action: ``content`` and ``tool_calls`` as given, a
    call's ``arguments`` object written as the JSON string the chat format carries. Nothing
    is checked here: a malformed call is the engine's per-decision error, recorded."""
    message: dict[str, Any] = {"role": "assistant", "content": content if content is not None else ""}
    if tool_calls:
        calls = []
        for i, call in enumerate(tool_calls if isinstance(tool_calls, list) else [tool_calls]):
            if isinstance(call, dict) and isinstance(call.get("function"), dict):
                function = dict(call["function"])
                if isinstance(function.get("arguments"), dict | list):
                    function["arguments"] = json.dumps(function["arguments"])
                call = {"id": call.get("id") or f"call_{i}", "type": call.get("type") or "function",
                        "function": function}
            calls.append(call)
        message["tool_calls"] = calls
    return message


def reply_text(messages: Sequence[dict[str, Any]]) -> str:
    """The environment's reply as one text (what a tool call returns to a TRL model)."""
    return "\n\n".join(str(m.get("content") or "") for m in messages if m.get("content")) or "Done."


# -- credit --------------------------------------------------------------------------------------
def potential(stages: Sequence[dict[str, Any]], reward: Reward) -> float:
    """The default formula's terms but success over ``stages`` (stage record dicts)."""
    passed = [s for s in stages if s.get("success") == FINISH]
    record = {"num_stages": len(stages), "stages_passed": len(passed),
              "stage_states": {OPTIMAL: sum(1 for s in passed if s.get("state") == OPTIMAL)},
              "tool_calls": sum(int(s.get("tool_calls") or 0) for s in stages), "status": RUNNING}
    terms = reward.terms(record)
    return terms["total"] - terms["success"]


def start_potential(stages: Sequence[dict[str, Any]], reward: Reward | RewardFn) -> float:
    """``phi`` of a rollout's start (0.0 with a user reward function)."""
    return potential(stages, reward) if isinstance(reward, Reward) else 0.0


def step_credit(before: float, stages: Sequence[dict[str, Any]], reward: Reward | RewardFn,
                done: bool, final_reward: float) -> tuple[float, float]:
    """``(credit, phi)`` of one step: ``before`` is ``phi`` before it, ``stages`` the stage
    records after it; the ending step (``done``) gets ``final_reward`` minus ``before``."""
    if done:
        return final_reward - before, final_reward
    if not isinstance(reward, Reward):
        return 0.0, 0.0
    after = potential(stages, reward)
    return after - before, after


def group_advantages(rewards: Sequence[float | None]) -> list[float] | None:
    """The group-relative advantage of each rollout, ``(R - mean) / std`` over the group
    (population std; all 0.0 when every reward is the same), once every reward is known."""
    if not rewards or any(r is None for r in rewards):
        return None
    values = [float(r) for r in rewards if r is not None]
    mean = sum(values) / len(values)
    std = math.sqrt(sum((v - mean) ** 2 for v in values) / len(values))
    return [0.0 if std < 1e-12 else (v - mean) / std for v in values]


# -- reset options -------------------------------------------------------------------------------
@dataclass(frozen=True)
class ResetOptions:
    """What a reset asks for: the task ``item`` (an id, an index, or the item whose seed is
    ``seed``), the ``group`` key its group members share, and that group's ``group_size``."""

    item: str | int = 0
    group: str | None = None
    group_size: int | None = None


def reset_options(item_ids: Sequence[str], item_seeds: Sequence[int], *, item: Any = None,
                  seed: Any = None, group: Any = None, group_size: Any = None) -> ResetOptions:
    """Checked reset options (a one-line ``UserError`` for anything the source lacks)."""
    if item is not None and seed is not None:
        raise UserError("reset takes an item or a seed, not both")
    if seed is not None:
        if isinstance(seed, bool) or not isinstance(seed, int):
            raise UserError(f"seed must be an integer, got {seed!r}")
        if seed not in item_seeds:
            raise UserError(f"no item of this source starts from seed {seed} (seeds: {sorted(set(item_seeds))})")
        item = item_seeds.index(seed)
    if item is None:
        item = 0
    if isinstance(item, bool) or not isinstance(item, int | str):
        raise UserError(f"item must be an item id or an index, got {item!r}")
    if isinstance(item, int) and not 0 <= item < len(item_ids):
        raise UserError(f"item index {item} is out of range: the source has {len(item_ids)} items")
    if isinstance(item, str) and item not in item_ids:
        raise UserError(f"the source has no item {item!r} (items: {', '.join(item_ids[:8])}"
                        f"{', ...' if len(item_ids) > 8 else ''})")
    if group is not None and (not isinstance(group, str) or not group or len(group) > 200):
        raise UserError(f"group must be a non-empty string key (at most 200 characters), got {group!r}")
    if group_size is not None and (isinstance(group_size, bool) or not isinstance(group_size, int)
                                   or group_size < 1):
        raise UserError(f"group_size must be a positive integer, got {group_size!r}")
    return ResetOptions(item, group, group_size)


# -- groups --------------------------------------------------------------------------------------
@dataclass
class OpenGroup:
    """One group under a key: the rl group (any object), its item id, and members handed out."""

    group: Any
    item: str
    size: int
    taken: int = 0
    rewards: list[float | None] = field(default_factory=list)


class GroupBook:
    """Which group a reset joins. A key names one open group; its members are handed out in
    order, and a reset under a key whose group is used up opens a new group under it (as TRL
    asks for G rollouts of the same prompt each step). No key: the item's id is the key, so
    the G sessions a trainer resets on one prompt are one group.

    ``make_group(item_id, size)`` makes the rl group (``TrainingEnv.group``).
    """

    def __init__(self, make_group: Callable[[str, int], Any], default_size: int) -> None:
        if isinstance(default_size, bool) or not isinstance(default_size, int) or default_size < 1:
            raise UserError(f"the group size must be a positive integer, got {default_size!r}")
        self.make_group = make_group
        self.default_size = default_size
        self.open: dict[str, OpenGroup] = {}

    def join(self, item_id: str, key: str | None, size: int | None) -> tuple[str, OpenGroup, int]:
        """``(key, group, member index)`` of the next member for a reset of ``item_id``."""
        key = key if key is not None else item_id
        current = self.open.get(key)
        if current is not None and current.item != item_id:
            if current.taken < current.size:
                raise UserError(f"group {key!r} starts from item {current.item!r}, not {item_id!r}")
            current = None
        if current is not None and size is not None and size != current.size and current.taken < current.size:
            raise UserError(f"group {key!r} has {current.size} members, not {size}")
        if current is None or current.taken >= current.size:
            size = size if size is not None else self.default_size
            current = OpenGroup(self.make_group(item_id, size), item_id, size, rewards=[None] * size)
            self.open[key] = current
        index = current.taken
        current.taken += 1
        return key, current, index
