"""Running episodes from Python: the same front door as ``magma run``.

``run(RunSpec(...))`` loads the preset, builds the agent (and judge), runs the episodes in
the engine's slots, stores them and writes the summary, exactly as the command does.
Run: python examples/agents/run_from_python.py
"""

from __future__ import annotations

import tempfile

from magma_core.runs import RunSpec, UserError, run
from magma_core.store import open_store


def main() -> None:
    with tempfile.TemporaryDirectory() as out:
        # --8<-- [start:main]
        spec = RunSpec("cube.MovedCube", agent="trace", episodes=4, slots=2, out=out, name="demo")
        try:
            result = run(spec)
        except UserError as exc:  # an unknown preset, a bad agent spec, an unreachable agent...
            raise SystemExit(f"magma: error: {exc}") from None
        for s in result.summaries:
            print(f"episode {s.episode}: {s.status}, {s.optimal}/{s.stages_total} stages OPTIMAL")
        assert result.ok and all(s.status == "success" for s in result.summaries)

        again = run(spec)  # the same name resumes: the stored episodes are not run again
        assert again.resumed == 4

        with open_store(out) as store:  # the run store, out/magma.db
            record = store.episode_record("demo", 0)  # episode 0's full record, a dict
            print("episode 0:", record["status"], "in", len(record["steps"]), "decisions")
        # --8<-- [end:main]


if __name__ == "__main__":
    main()
