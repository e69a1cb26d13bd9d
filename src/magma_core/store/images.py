"""Camera images in the run store: the picture(s) an agent saw at each decision.

With ``--observe images`` every decision's input carries the world's camera images; the
store keeps each once, compressed as the agent got it (PNG bytes), in ``decision_images``:
one row per (run, episode, decision, camera). ``decision`` counts from 1: the image of
decision *k* is the world the agent decided on (after decision *k - 1*). The table came
with store version 4 (:func:`add_images_table` is the migration from version 3).
"""

from __future__ import annotations

import sqlite3

from magma_core.json_types import JSONDict

__all__ = ["IMAGES_SCHEMA", "ImageRow", "add_images_table", "episode_images", "insert_images"]

IMAGES_TABLE = "decision_images"
IMAGES_SCHEMA = """
CREATE TABLE IF NOT EXISTS decision_images (
    run_name TEXT NOT NULL,
    episode INTEGER NOT NULL,
    decision INTEGER NOT NULL,
    camera TEXT NOT NULL,
    media_type TEXT NOT NULL,
    width INTEGER NOT NULL,
    height INTEGER NOT NULL,
    data BLOB NOT NULL,
    PRIMARY KEY (run_name, episode, decision, camera)
)
"""

#: (decision, camera, media_type, width, height, data) of one stored image.
ImageRow = tuple[int, str, str, int, int, bytes]


def add_images_table(conn: sqlite3.Connection) -> None:
    """Store version 3 -> 4: the ``decision_images`` table (nothing else changes)."""
    conn.execute(IMAGES_SCHEMA)


def insert_images(conn: sqlite3.Connection, run_name: str, episode: int,
                  rows: list[ImageRow] | tuple[ImageRow, ...]) -> None:
    """Write an episode's images (inside the caller's transaction)."""
    conn.executemany("INSERT INTO decision_images VALUES (?,?,?,?,?,?,?,?)",
                     [(run_name, episode, *row) for row in rows])


def episode_images(conn: sqlite3.Connection, run_name: str, episode: int,
                   decision: int | None = None) -> list[JSONDict]:
    """An episode's images (``decision``: only that decision's), in decision and camera
    order: ``decision``, ``camera``, ``media_type``, ``width``, ``height``, ``data`` (bytes).
    A store without the table (version 3, read-only) has none."""
    sql = ("SELECT decision, camera, media_type, width, height, data FROM decision_images "
           "WHERE run_name = ? AND episode = ?")
    args: list[str | int] = [run_name, episode]
    if decision is not None:
        sql += " AND decision = ?"
        args.append(decision)
    try:
        rows = conn.execute(sql + " ORDER BY decision, camera", args).fetchall()
    except sqlite3.OperationalError as exc:
        if "no such table" in str(exc):
            return []
        raise
    return [{"decision": r[0], "camera": r[1], "media_type": r[2], "width": r[3],
             "height": r[4], "data": bytes(r[5])} for r in rows]
