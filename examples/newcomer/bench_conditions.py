"""Bench condition transforms of a scenario package: the condition ``interruption`` only.

Before the task's first stage, the user asks how many targets there are; a scorer checks
the answer, and the reference trace answers it, so the trace agent still succeeds.
"""

from magma_core.simulation.stage import ScoredQuestionStage
from magma_core.simulation.stage.scorers import OneOf
from magma_scenarios.common.spec_edits import insert_stage

QUESTION = "Before you start: how many targets are there?"


def apply(condition, spec, options):
    if condition != "interruption":
        raise ValueError(f"this scenario offers no {condition} condition")
    stage = ScoredQuestionStage(QUESTION, OneOf(["two", "2"]))
    insert_stage(spec, 0, {"request_type": None, "spec": stage.to_spec(),
                           "flag_answer_to_user": False, "reset_at_end": False})
    events = spec["perfect_trace"]["events"]
    events[0:0] = [{"type": "user", "content": QUESTION}, {"type": "message", "content": "Two."}]
    return spec, [{"type": "interruption", "injected_at_stage": 0, "relevant_at_stage": 0}]


if __name__ == "__main__":  # what the transform does to cube.PickPlace's frozen task
    from magma_core.bench.task_spec import task_from_spec, task_to_spec
    from magma_core.scenarios import load_preset

    spec, interventions = apply("interruption", task_to_spec(load_preset("cube.PickPlace")()), {})
    task = task_from_spec(spec)  # the edited spec still loads
    print([type(stage).__name__ for stage in task.stages], interventions)
    print(spec["perfect_trace"]["events"][:2])
