"""``python -m magma_core.integrations.inspect``: print the task file ``inspect eval`` runs."""

from pathlib import Path

print(Path(__file__).with_name("task.py"))
