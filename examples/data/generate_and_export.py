"""Generate training data and export it: ``magma gen`` then ``magma export``.

Grows two small trees on ``cube.PickPlace`` with the noisy-trace agent (no model needed),
exports the kept paths as chat fine-tuning rows, and prints the first row's messages.
Run: python examples/data/generate_and_export.py
"""

from __future__ import annotations

import json
import subprocess
import sys
import tempfile
from pathlib import Path


def magma(*args: str) -> None:
    """Run the ``magma`` of this Python."""
    subprocess.run([sys.executable, "-m", "magma_core.cli", *args], check=True)


def main() -> None:
    with tempfile.TemporaryDirectory() as out:
        # --8<-- [start:main]
        magma("gen", "cube.PickPlace", "--agent", "noisy-trace:0.3", "--branches", "2",
              "--slots", "4", "--trees", "2", "--max-nodes", "40", "--name", "pp", "--out", out)
        magma("export", "pp", "--format", "chat-jsonl", "--out", out)
        # --8<-- [end:main]
        files = sorted(Path(out).rglob("*.jsonl"))
        print("files:", [f.name for f in files])
        rows = [json.loads(line) for f in files for line in f.read_text().splitlines()]
        assert rows, "the export holds at least one conversation"
        for message in rows[0]["messages"]:
            print(f"{message['role']:>9}: {message.get('content') or message.get('tool_calls')}")
        manifest = json.loads(next(Path(out).rglob("manifest.json")).read_text())
        print("manifest:", sorted(manifest))


if __name__ == "__main__":
    main()
