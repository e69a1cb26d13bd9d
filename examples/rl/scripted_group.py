"""A trainer-style loop with a scripted policy: one group of 4 rollouts of ``cube.PickPlace``
from one saved world, stepped together, scored by the engine's verdicts, stored as a run.

    python examples/rl/scripted_group.py        # writes ./runs/magma.db (run "rl-demo")
"""

from __future__ import annotations

import asyncio

from magma_core.rl import Reward, TaskSource, TrainingEnv
from magma_core.store import open_store

# --8<-- [start:group]
source = TaskSource.target("cube.PickPlace", seeds=[0, 1])
env = TrainingEnv(source, slots=4, out="runs", name="rl-demo", backend="cpu")

group = env.group(0, size=4)  # G rollouts from one snapshot of item 0 (seed 0)
observations = group.reset()  # per rollout: opening messages, tool schemas, start digest
for rollout, observation in zip(group.rollouts, observations, strict=True):
    print(f"rollout {rollout.index}: start {observation.digest[:16]}")
assert len({o.digest for o in observations}) == 1  # bit-identical starting worlds
# --8<-- [end:group]

# --8<-- [start:policy]
# The policy: the reference solution, as OpenAI assistant messages; rollout 3 first sends a
# malformed call (a failed decision, never a crash) and rollout 2 wastes a call.
pick, place, answer = source[0].task.perfect_trace().decisions()
bad = {"role": "assistant", "content": "",
       "tool_calls": [{"id": "c0", "type": "function", "function": {"name": "pick", "arguments": "{oops"}}]}
scripts = [
    [pick, place, answer],
    [pick, place, answer],
    [place, pick, place, answer],  # place before pick fails: 3 calls for a 2-call stage
    [bad, pick, place, answer],
]
turn = 0
while not group.done:
    messages = []
    for rollout, script in zip(group.rollouts, scripts, strict=True):
        step = script[min(turn, len(script) - 1)]
        messages.append(None if rollout.done else step if isinstance(step, dict) else rollout.message_for(step))
    results = group.step(messages)  # the running rollouts' decisions: one engine submit
    turn += 1
# --8<-- [end:policy]

# --8<-- [start:rewards]
weights = Reward()  # success 1.0, progress 0.5, optimal 0.25, cost_per_call 0.01
expected = [
    1.0 + 0.5 * 2 / 2 + 0.25 * 2 / 2 - 0.01 * 2,  # 1.73: success, both stages optimal, 2 calls
    1.73,
    1.0 + 0.5 * 2 / 2 + 0.25 * 1 / 2 - 0.01 * 3,  # 1.595: the placing stage went over its target
    1.73,  # the malformed call called no tool: it costs a decision, not a call
]
for rollout, value in zip(group.rollouts, expected, strict=True):
    print(f"rollout {rollout.index}: {rollout.record['status']}, reward {rollout.reward:.3f}, "
          f"stored as episode {rollout.episode}")
    assert abs(rollout.reward - value) < 1e-9, (rollout.reward, value)
# --8<-- [end:rewards]

# --8<-- [start:async]
async def two_groups() -> list:
    """Rollouts of two groups generated concurrently: steps that arrive together are one submit."""
    a, b = env.group(0, size=2), env.group(1, size=2)
    a.reset(), b.reset()
    return await asyncio.gather(*(r.astep(r.message_for(pick)) for r in [*a.rollouts, *b.rollouts]))

steps = asyncio.run(two_groups())
assert all(s.info["calls"][0]["ok"] for s in steps)
env.close()  # rollouts still running are stored as "truncated"
# --8<-- [end:async]

if __name__ == "__main__":
    with open_store("runs", create=False) as store:
        stored = store.episodes("rl-demo")
    print(f"{len(stored)} rollouts in runs/magma.db (run rl-demo): magma view --out runs")
