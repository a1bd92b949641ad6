"""A player's progress as racers see each other's: the summary of a game, no cards."""

from __future__ import annotations

from collections.abc import Mapping
from typing import Any

from ...engine import starting_score

# the fields of engine.views.progress; the stored and sent progress adds ``last_ms``
PROGRESS_KEYS = ("foundation", "moves", "reached_moves", "reached_ms", "status", "score")


def initial_progress(scoring: str = "none") -> dict[str, Any]:
    """The progress of a player who has not moved yet, in a room of that ``scoring``."""
    return {
        "foundation": 0,
        "moves": 0,
        "reached_moves": 0,
        "reached_ms": 0,
        "status": "playing",
        "score": None if scoring == "none" else starting_score(scoring),  # null: no score
        "last_ms": 0,
    }


def of_board(board: Mapping[str, Any], last_ms: int) -> dict[str, Any]:
    """The progress fields of a board view (which carries them), with ``last_ms``."""
    out = {k: board[k] for k in PROGRESS_KEYS}
    out["last_ms"] = last_ms
    return out
