"""An external event before a stage: the stage's ``entry_transition``, for that slot only.

Run: python examples/state/entry_transition.py
"""

from __future__ import annotations

from lamp_task import CubeToZone, LampTask, MoveCubeAtEntry, SwitchLampOn

from magma_core.simulation.data_structures import Decision, ToolCall
from magma_core.simulation.executor import Executor


def main() -> None:
    # --8<-- [start:main]
    task = LampTask(stages=[SwitchLampOn(), CubeToZone(entry_transition=MoveCubeAtEntry(x=0.1))])
    switch_on = Decision(tool_calls=[ToolCall("switch_lamp", {"on": True}, "panda")])
    with Executor(task, num_slots=2, seed=0) as executor:
        before = executor.sim.get_state()["actors"]["cube"][:, 0].clone()
        executor.submit({0: switch_on})  # slot 0 finishes stage 0 and enters stage 1
        after = executor.sim.get_state()["actors"]["cube"][:, 0]
        print("cube x before:", before.tolist(), "after:", after.tolist())
        assert abs(after[0].item() - 0.1) < 1e-6  # moved in slot 0, which entered stage 1
        assert after[1].item() == before[1].item()  # slot 1 is still in stage 0
    # --8<-- [end:main]


if __name__ == "__main__":
    main()
