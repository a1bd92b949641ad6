"""The race ranking of docs/rules.md as one exact number per player, for a Redis sorted set.

A sorted set orders by a double, which holds integers up to 2**53 exactly. The composite
is a non-negative integer below 2**53, smaller is better, so ``ZRANGE`` lists the leader
first and no low bits are ever lost:

progress ranking (the default), 6 + 20 + 27 bits::

    (52 - foundation) * 2**47 + min(reached_moves, 2**20 - 1) * 2**27
                              + min(reached_ms, 2**27 - 1)

    moves are capped at 1,048,575 and time at 134,217,727 ms (37.3 hours); beyond the
    caps players tie on that part.

score ranking (``rank_by: score``), 26 + 27 bits::

    (2**25 - clamp(score, -2**25 + 1, 2**25)) * 2**27 + min(last_ms, 2**27 - 1)

    higher score first, then the time of the player's last move (when the score was set).

Exact ties on every part share a rank: a player's rank is 1 + the number of players with
a strictly smaller composite.
"""

from __future__ import annotations

from collections.abc import Iterable
from typing import Any

MOVES_BITS, MS_BITS = 20, 27
MOVES_CAP = (1 << MOVES_BITS) - 1
MS_CAP = (1 << MS_BITS) - 1
SCORE_HALF = 1 << 25
LIMIT = 1 << 53


def progress_key(foundation: int, reached_moves: int, reached_ms: int) -> int:
    if not 0 <= foundation <= 52:
        raise ValueError(f"foundation count {foundation} is not 0-52")
    return (
        ((52 - foundation) << (MOVES_BITS + MS_BITS))
        + (min(max(reached_moves, 0), MOVES_CAP) << MS_BITS)
        + min(max(reached_ms, 0), MS_CAP)
    )


def score_key(score: int, last_ms: int) -> int:
    clamped = min(max(score, -SCORE_HALF + 1), SCORE_HALF)
    return ((SCORE_HALF - clamped) << MS_BITS) + min(max(last_ms, 0), MS_CAP)


def rank_key(progress: dict[str, Any], rank_by: str = "progress", last_ms: int = 0) -> int:
    """The composite of one player's ``progress`` (engine.views.progress) dict."""
    if rank_by == "score":
        return score_key(progress.get("score") or 0, last_ms)
    return progress_key(progress["foundation"], progress["reached_moves"], progress["reached_ms"])


def row(player: str, name: str, progress: dict[str, Any], out_of_time: bool) -> dict[str, Any]:
    """A leaderboard row (without its rank) from a player's progress; ``out_of_time``: the
    race ended on its time limit, so a game still playing shows ``out_of_time``."""
    status = progress["status"]
    if out_of_time and status == "playing":
        status = "out_of_time"
    return {
        "player": player,
        "name": name,
        "foundation": progress["foundation"],
        "moves": progress["moves"],
        "reached_moves": progress["reached_moves"],
        "reached_ms": progress["reached_ms"],
        "status": status,
        "score": progress.get("score"),
    }


def ranks(keys: Iterable[tuple[str, int]]) -> list[tuple[str, int, int]]:
    """``[(player, key)]`` -> ``[(player, rank, key)]`` best first; equal keys share a rank."""
    ordered = sorted(keys, key=lambda item: (item[1], item[0]))
    out: list[tuple[str, int, int]] = []
    for i, (player, key) in enumerate(ordered):
        rank = out[-1][1] if out and out[-1][2] == key else i + 1
        out.append((player, rank, key))
    return out
