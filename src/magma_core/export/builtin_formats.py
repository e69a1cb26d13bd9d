"""The three built-in exporter plug-ins (registered under ``magma.export`` in pyproject):
``chat-jsonl``, ``preference-jsonl`` and ``hf``. Each accepts data from any producer: the rows
are written in the vocabulary and prompt style the source's agent saw."""

from __future__ import annotations

from magma_core.export.exporter import Exporter
from magma_core.export.hf_dataset import write_hf
from magma_core.export.preference_diagnosis import why_no_pairs
from magma_core.export.row_builders import chat_rows, preference_rows


def chat_jsonl() -> Exporter:
    return Exporter("chat-jsonl", lambda forest, settings, refused: chat_rows(forest, settings, refused),
                    stem="chat", description="one OpenAI chat conversation per kept path", kinds=True)


def preference_jsonl() -> Exporter:
    return Exporter("preference-jsonl", lambda forest, settings, refused: preference_rows(forest, settings),
                    stem="preference", description="chosen / rejected sibling decisions (DPO)",
                    explain_empty=why_no_pairs)


def hf() -> Exporter:
    return Exporter("hf", lambda forest, settings, refused: chat_rows(forest, settings, refused),
                    stem="chat", write=write_hf, description="the chat rows as a Parquet dataset",
                    kinds=True)
