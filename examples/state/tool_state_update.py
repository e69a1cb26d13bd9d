"""An explicit effect of a tool: ``ToolResult.state_updates``, applied to the calling slot.

Run: python examples/state/tool_state_update.py
"""

from __future__ import annotations

from lamp_task import LampTask

from magma_core.simulation.data_structures import Decision, ToolCall
from magma_core.simulation.executor import Executor


def main() -> None:
    # --8<-- [start:main]
    switch_on = Decision(tool_calls=[ToolCall("switch_lamp", {"on": True}, "panda")])
    with Executor(LampTask(), num_slots=2, seed=0) as executor:
        outcome = executor.submit({0: switch_on})[0]  # only slot 0 decides
        lamp = executor.sim.get_state()["magma_extra_state"]["lamp_on"]
        print(outcome.calls[0].message, "| lamp per slot:", lamp.tolist())
        print("slot 0:", outcome.stage_success.name, outcome.stage_state.name, outcome.status)
        assert lamp.tolist() == [True, False]  # the update reached slot 0 only
        assert outcome.stage_state.name == "OPTIMAL" and outcome.status == "success"
    # --8<-- [end:main]


if __name__ == "__main__":
    main()
