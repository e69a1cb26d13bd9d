"""``magma demo``: the smallest honest example of the contract (until ``magma run`` lands)."""

from __future__ import annotations

import argparse

from magma_core.simulation.data_structures import (
    EnvStateUpdate,
    Pose,
    StageInput,
    ToolExecution,
    ToolResult,
    UserInstruction,
)


def register(sub: argparse._SubParsersAction) -> None:
    parser = sub.add_parser("demo", help="show a tool execution and its result")
    parser.set_defaults(func=run)


def run(args: argparse.Namespace) -> int:
    stage_input = StageInput(UserInstruction("Switch the machine on."), flag_answer_to_user=False)
    execution = ToolExecution(
        poses=[Pose((0.1, 0.0, 0.2)), "CLOSE", "OK"],
        verifier=lambda obs: ToolResult(
            ok=True,
            reason="Machine switched on.",
            state_updates=[EnvStateUpdate(("magma_extra_state", "machine_on"), True)],
        ),
    )
    result = execution.call_verifier({})
    print(f"stage input: {stage_input}")
    print(f"execution:   {execution}")
    print(f"result:      ok={result.ok} reason={result.reason!r} updates={result.state_updates}")
    return 0
