"""The OpenEnv bridge's mapping code, without OpenEnv (``make test``): actions to assistant
messages, step credit against the default reward, group advantages, reset options, groups."""

from __future__ import annotations

import json
import subprocess
import sys

import pytest

from magma_core.integrations.openenv.mapping import (
    GroupBook,
    assistant_message,
    group_advantages,
    potential,
    reply_text,
    reset_options,
    start_potential,
    step_credit,
)
from magma_core.rl.rewards import Reward
from magma_core.user_error import UserError

IDS = ["cube.PickPlace@0", "cube.PickPlace@1"]
SEEDS = [0, 1]


def test_the_mapping_imports_without_openenv():
    code = ("import sys, magma_core.integrations.openenv, magma_core.integrations.openenv.mapping; "
            "sys.exit('openenv' in sys.modules)")
    assert subprocess.run([sys.executable, "-c", code], timeout=120).returncode == 0


def test_an_action_is_the_assistant_message_with_json_arguments():
    message = assistant_message("", [{"type": "function", "function": {"name": "pick", "arguments": {"object": "cube"}}}])
    assert message == {"role": "assistant", "content": "", "tool_calls": [
        {"id": "call_0", "type": "function", "function": {"name": "pick", "arguments": '{"object": "cube"}'}}]}
    kept = {"id": "a", "type": "function", "function": {"name": "pick", "arguments": "{oops"}}
    assert assistant_message("hi", [kept])["tool_calls"] == [kept]  # the engine records the bad call
    assert assistant_message("done") == {"role": "assistant", "content": "done"}
    assert assistant_message(None, ["not a call"])["tool_calls"] == ["not a call"]
    assert reply_text([{"role": "tool", "content": "Picked."}, {"role": "user", "content": "Next."}]) == "Picked.\n\nNext."
    assert reply_text([]) == "Done."


def _stage(success=None, state=None, calls=0):
    return {"success": success, "state": state, "tool_calls": calls}


def _record(stages, status):
    passed = [s for s in stages if s["success"] == "FINISH"]
    return {"num_stages": len(stages), "stages_passed": len(passed), "status": status,
            "stage_states": {"OPTIMAL": sum(1 for s in passed if s["state"] == "OPTIMAL")},
            "tool_calls": sum(s["tool_calls"] for s in stages)}


def test_step_credits_add_up_to_the_default_reward():
    reward = Reward()
    start = [_stage(), _stage(), _stage()]
    # pick (1 call), place (stage 0 passes, optimal), pick, place + 2 retries (stage 1 passes,
    # acceptable), the answer (stage 2) ends the episode a success
    history = [
        [_stage(None, "OPTIMAL", 1), _stage(), _stage()],
        [_stage("FINISH", "OPTIMAL", 2), _stage(), _stage()],
        [_stage("FINISH", "OPTIMAL", 2), _stage(None, "OPTIMAL", 1), _stage()],
        [_stage("FINISH", "OPTIMAL", 2), _stage("FINISH", "ACCEPTABLE", 4), _stage()],
    ]
    final = [_stage("FINISH", "OPTIMAL", 2), _stage("FINISH", "ACCEPTABLE", 4), _stage("FINISH", "OPTIMAL", 0)]
    total = reward(_record(final, "success"))
    phi = start_potential(start, reward)
    assert phi == 0.0
    credits = []
    for stages in history:
        credit, phi = step_credit(phi, stages, reward, False, 0.0)
        credits.append(credit)
    credit, phi = step_credit(phi, [], reward, True, total)
    credits.append(credit)
    assert credits[:2] == pytest.approx([-0.01, -0.01 + 0.5 / 3 + 0.25 / 3])
    assert credits[3] == pytest.approx(-0.03 + 0.5 / 3)  # acceptable: progress, no optimal share
    assert sum(credits) == pytest.approx(total) and phi == total
    assert total == pytest.approx(1 + 0.5 + 0.25 * 2 / 3 - 0.06)


def test_a_stored_starts_share_is_its_start_credit():
    reward = Reward()
    start = [_stage("FINISH", "OPTIMAL", 2), _stage()]
    phi0 = start_potential(start, reward)
    assert phi0 == pytest.approx(0.25 + 0.125 - 0.02)
    credit, _ = step_credit(phi0, [], reward, True, 0.5)
    assert phi0 + credit == pytest.approx(0.5)
    assert potential([], reward) == 0.0  # no stages: no share, not a division by zero


def test_a_user_reward_function_is_credited_at_the_end_only():
    def fn(record):
        return 2.0

    assert start_potential([_stage("FINISH", "OPTIMAL", 1)], fn) == 0.0
    assert step_credit(0.0, [_stage("FINISH", "OPTIMAL", 1)], fn, False, 0.0) == (0.0, 0.0)
    assert step_credit(0.0, [], fn, True, 2.0) == (2.0, 2.0)


def test_group_advantages_wait_for_the_whole_group():
    assert group_advantages([1.73, None]) is None
    assert group_advantages([]) is None
    assert group_advantages([1.73, 1.73, 1.73]) == [0.0, 0.0, 0.0]
    assert group_advantages([1.0, 0.0]) == pytest.approx([1.0, -1.0])
    values = group_advantages([3.0, 1.0, 2.0, 2.0])
    assert sum(values) == pytest.approx(0.0) and values[0] == pytest.approx(1 / (0.5 ** 0.5))


def test_reset_options_are_checked_in_one_line():
    assert reset_options(IDS, SEEDS) .item == 0
    assert reset_options(IDS, SEEDS, seed=1).item == 1
    assert reset_options(IDS, SEEDS, item="cube.PickPlace@1", group="g", group_size=3).group_size == 3
    for kwargs, message in [({"item": "nope"}, "has no item 'nope'"), ({"item": 5}, "out of range"),
                            ({"seed": 9}, "starts from seed 9"), ({"seed": "1"}, "seed must be an integer"),
                            ({"item": 0, "seed": 0}, "not both"), ({"item": True}, "item must be"),
                            ({"group": ""}, "group must be"), ({"group_size": 0}, "positive integer")]:
        with pytest.raises(UserError, match=message):
            reset_options(IDS, SEEDS, **kwargs)


def test_the_group_book_hands_out_members_then_opens_a_new_group():
    made = []

    def make(item, size):
        made.append((item, size))
        return f"group{len(made)}"

    book = GroupBook(make, default_size=2)
    assert book.join(IDS[0], None, None)[::2] == (IDS[0], 0)  # no key: the item's id
    key, first, member = book.join(IDS[0], None, None)
    assert (key, member, first.group) == (IDS[0], 1, "group1")
    _, second, member = book.join(IDS[0], None, None)  # used up: a new group under the key
    assert (second.group, member, len(made)) == ("group2", 0, 2)
    _, keyed, _ = book.join(IDS[1], "k", 3)
    assert keyed.size == 3 and keyed.rewards == [None, None, None]
    with pytest.raises(UserError, match="starts from item"):
        book.join(IDS[0], "k", None)
    with pytest.raises(UserError, match="has 3 members, not 2"):
        book.join(IDS[1], "k", 2)
    with pytest.raises(UserError, match="positive integer"):
        GroupBook(make, default_size=0)
    assert json.dumps(made) == json.dumps([[IDS[0], 2], [IDS[0], 2], [IDS[1], 3]])
