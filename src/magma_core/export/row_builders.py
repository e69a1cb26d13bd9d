"""The rows of the built-in formats, built from an export forest.

:func:`chat_rows`: one OpenAI chat conversation per kept path (a path whose conversation an
earlier row already holds is dropped and counted, unless ``keep_duplicates``), per validated
coaching repair the path through it, and per fixed repair its mistake row (the wrong decision
masked, the report, the fix: :mod:`.row_paths`), each row with its ``kind`` (:mod:`.kinds`).
:func:`preference_rows`: chosen / rejected sibling decisions of one situation (the prompt, the
two assistant turns, the tools), and one pair per repair. Each row is tagged with its split
group (its tree).
"""

from __future__ import annotations

import hashlib
import json
from collections.abc import Collection
from typing import TYPE_CHECKING

from magma_core.export.chat import assistant_for, conversation, model_view
from magma_core.export.chat_template import ChatTemplate
from magma_core.export.kinds import kind_of
from magma_core.export.row_paths import row_paths
from magma_core.export.rows import ExportForest
from magma_core.export.settings import Duplicate, ExportSettings, Notice
from magma_core.json_types import JSONDict

if TYPE_CHECKING:  # named for the annotations only
    from magma_core.export.rows import Candidate, Situation


def chat_rows(forest: ExportForest, settings: ExportSettings,
              refused: list[str] | None = None) -> list[tuple[str, JSONDict]]:
    """``(group, row)`` per row path (:func:`~magma_core.export.row_paths.row_paths`: kept paths,
    validated repairs' paths, mistake rows); each row says its ``origin`` (who decided: ``model``,
    or a coach's ``coached`` / ``recovery`` decision on it), its ``kind`` (what it holds, see
    :mod:`~magma_core.export.kinds`) and whether it is ``complete`` (its last turn finished the
    task); masked mistakes carry ``"weight": 0``. With ``settings.chat_template`` each row gets
    its rendered ``text``, and a row the template would damage is left out (its id and the reason
    go to ``refused``)."""
    kept, _ = forest.selected(settings.min_score)
    template = ChatTemplate(settings.chat_template) if settings.chat_template else None
    rows = []
    seen: dict[str, str] = {}
    view = model_view(forest)
    for path in row_paths(forest, kept):
        key, steps = path.key, path.steps
        if not settings.keep_duplicates:
            same = seen.setdefault(conversation_identity(steps, forest, path.masked), key)
            if same != key:
                if refused is not None:
                    refused.append(Duplicate(f"{key}: duplicate of {same}"))
                continue
        messages, tools = conversation(steps, settings.shuffle_seed, key, masked=path.masked, **view)
        origins = {c.origin for _, c in steps}
        origin = next((o for o in ("recovery", "coached") if o in origins), "model")
        group = steps[0][0].group
        row = {"id": key, "messages": messages, "tools": tools, "origin": origin,
               "kind": kind_of(steps, forest.conditions.get(group)), "complete": steps[-1][1].final}
        if template is not None:
            text, reason = template.render(row)
            if text is None:
                if refused is not None:
                    refused.append(f"{key}: {reason}")
                continue
            row["text"] = text
        rows.append((group, row))
    if template is not None and template.objects_used and refused is not None:
        refused.append(Notice(f"chat template {settings.chat_template} double-encodes string tool-call "
                              f"arguments: the text of {template.objects_used} row(s) is rendered with "
                              "the arguments as objects (train on 'text', or give the tokenizer objects)"))
    return rows


def conversation_identity(path: list[tuple[Situation, Candidate]], forest: ExportForest,
                          masked: Collection[int] = ()) -> str:
    """What makes two paths the same conversation: their messages (weights included) and
    tools rendered with one fixed order (not the per-row shuffle), hashed."""
    messages, tools = conversation(path, 0, "identity", masked=masked, **model_view(forest))
    return hashlib.sha256(json.dumps([messages, tools], sort_keys=True, default=str).encode()).hexdigest()


def preference_rows(forest: ExportForest, settings: ExportSettings) -> list[tuple[str, JSONDict]]:
    """``(group, row)`` per pair of siblings where the chosen one is kept and scores more than
    ``preference_margin`` above the rejected one (different decisions only), and one per
    validated coaching repair (``origin: "repair"``: the repair chosen, the failed decision
    rejected, same prompt)."""
    kept, scores = forest.selected(settings.min_score)
    repairs = {f"{a}>{b}" for a, b in forest.repairs}
    pairs = set(forest.repairs)
    repaired = {a for a, _ in forest.repairs}
    rows = []
    for situation, candidates in sorted(forest.children().items()):
        usable = sorted((c for c in candidates if c.decision is not None), key=lambda c: c.key)
        path = [*forest.path_to(situation)]
        for chosen in usable:
            if chosen.key not in kept and chosen.key not in repaired:
                continue
            for rejected in usable:
                if rejected.decision == chosen.decision:
                    continue
                repair = (chosen.key, rejected.key) in pairs
                if not repair and scores[rejected.key] >= scores[chosen.key] - settings.preference_margin:
                    continue
                key = f"{chosen.key}>{rejected.key}"
                steps = [*path, (forest.situations[situation], chosen)]
                prompt, tools = conversation(steps, settings.shuffle_seed, key, last_assistant=False,
                                             **model_view(forest))
                rows.append((forest.situations[situation].group, {
                    "id": key,
                    "prompt": prompt,
                    "chosen": [assistant_for(steps, chosen, settings.shuffle_seed, key)],
                    "rejected": [assistant_for(steps, rejected, settings.shuffle_seed, key)],
                    "tools": tools,
                    "score_chosen": round(scores[chosen.key], 6),
                    "score_rejected": round(scores[rejected.key], 6),
                    "origin": "repair" if key in repairs else chosen.origin,
                }))
    return rows
