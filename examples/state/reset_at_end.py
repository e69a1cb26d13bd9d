"""Reset after a completed interaction: ``reset_at_end`` restores the slot's reference state.

Run: python examples/state/reset_at_end.py
"""

from __future__ import annotations

from lamp_task import CubeToZone, LampTask, SwitchLampOn

from magma_core.simulation.data_structures import Decision, ToolCall
from magma_core.simulation.executor import Executor


def main() -> None:
    # --8<-- [start:main]
    task = LampTask(stages=[SwitchLampOn(reset_at_end=True), CubeToZone()])
    switch_on = Decision(tool_calls=[ToolCall("switch_lamp", {"on": True}, "panda")])
    with Executor(task, num_slots=1, seed=0) as executor:
        outcome = executor.submit({0: switch_on})[0]
        lamp = executor.sim.get_state()["magma_extra_state"]["lamp_on"]
        print("stage 0:", outcome.stage_state.name, "| now in stage", outcome.next_view.stage_index,
              "| lamp:", lamp.tolist())
        assert outcome.stage_state.name == "OPTIMAL" and outcome.next_view.stage_index == 1
        assert lamp.tolist() == [False]  # the finished stage's effect was undone
    # --8<-- [end:main]


if __name__ == "__main__":
    main()
