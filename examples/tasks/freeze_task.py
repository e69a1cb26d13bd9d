"""Generated tasks are plain data: generate one, randomize it, freeze it as JSON, rebuild it.

No simulator is needed. Run: python examples/tasks/freeze_task.py
"""

from __future__ import annotations


def main() -> None:
    # --8<-- [start:main]
    from magma_core.simulation.randomizer import (
        RandomizationSpec,
        RuntimeRandomizer,
        randomize_task,
    )
    from magma_core.simulation.tasks import task_from_json, task_to_json
    from magma_scenarios.sorting.definitions import LongSorting

    task = LongSorting().generate(seed=7)          # a GeneratedTask (a BaseTask)
    task = randomize_task(task, seed=7)            # optional: carries its mapping
    text = task_to_json(task)                      # canonical JSON: same seed, same bytes
    again = task_from_json(text)                   # the same task
    vocabulary = RuntimeRandomizer(RandomizationSpec.from_dict(again.randomization))
    print(vocabulary.to_public_call("pick", {"object": "red_cube"}))
    # --8<-- [end:main]
    assert task_to_json(again) == text
    assert task_to_json(randomize_task(LongSorting().generate(seed=7), seed=7)) == text
    print("stages:", len(again.stages))


if __name__ == "__main__":
    main()
