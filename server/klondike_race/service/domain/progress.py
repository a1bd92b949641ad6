"""A player's progress as racers see each other's: the summary of a game, no cards."""

from __future__ import annotations

from collections.abc import Mapping
from typing import Any

# the fields of engine.views.progress; the stored and sent progress adds ``last_ms``
PROGRESS_KEYS = ("foundation", "moves", "reached_moves", "reached_ms", "status", "score")


# the score of a game before its first move, by the room's ``scoring`` (the engine's
# Game starts vegas at -52 and standard at 0; without scoring the score is null)
STARTING_SCORE: dict[str, int | None] = {"none": None, "standard": 0, "vegas": -52}


def initial_progress(scoring: str = "none") -> dict[str, Any]:
    """The progress of a player who has not moved yet, in a room of that ``scoring``."""
    return {
        "foundation": 0,
        "moves": 0,
        "reached_moves": 0,
        "reached_ms": 0,
        "status": "playing",
        "score": STARTING_SCORE[scoring],
        "last_ms": 0,
    }


def of_board(board: Mapping[str, Any], last_ms: int) -> dict[str, Any]:
    """The progress fields of a board view (which carries them), with ``last_ms``."""
    out = {k: board[k] for k in PROGRESS_KEYS}
    out["last_ms"] = last_ms
    return out
