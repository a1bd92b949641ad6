"""Play statistics: every game a player's game ended in, per variant; pure (no clock, no
Redis). docs/rules.md ("Statistics") says what counts; store/played.py keeps them.

A **variant** is the draw count (``draw1``, ``draw3``: the room's ``settings.draw``),
whatever the other settings. A room's games count once it has finished, unless it was
abandoned (never played, or left with nobody connected) or is a practice continuation
(``parent``: the race it continues counted that game): races of any size, practice
games, challenge attempts (dailies), arena races and ghost races alike. Each seat with a
player key counts (an anonymous seat, a ghost's, has none), except a practice game in
which its player asked the solver for a hint or to finish it (``assisted``): that game
is the solver's as much as theirs.

A game is **won** when its player solved the deal (all 52 cards up), whatever their
place in a race (a race's place is the rating's: domain/rating.py). A won game's time is
when its 52nd card went up, from the game's start, its moves the moves made by then;
the best time and the fewest moves are each the least over won games. The streak is the
won games in a row, the last one included (0 after a game not won).

Per UTC day the last ``DAYS`` days keep their games and wins: a ring of ``DAYS`` slots,
one per day number modulo ``DAYS``, each ``DAY,GAMES,WINS`` (a slot is overwritten by
the first game of a later day, so nothing is ever trimmed).
"""

from __future__ import annotations

from dataclasses import dataclass
from datetime import date, timedelta
from typing import Any

from .room import FINISHED, Room

DAYS = 30
DAY_MS = 86_400_000
FIELDS = ("games", "wins", "best_ms", "fewest", "streak", "best_streak")


def counts(room: Room) -> bool:
    """Whether a room's games go into its players' statistics."""
    return room.status == FINISHED and room.end_reason != "abandoned" and not room.parent


def variant(draw: int) -> str:
    return f"draw{draw}"


def day_of(ms: int) -> int:
    """The UTC day number (days since 1970-01-01) of an epoch-ms instant."""
    return ms // DAY_MS


@dataclass(frozen=True, slots=True)
class Played:
    """One player's game of a room, as its statistics count it."""

    seat: str
    who: str
    won: bool
    time_ms: int | None  # when the 52nd card went up (a won game's)
    moves: int | None  # the moves made by then


def games(room: Room, progress: dict[str, dict[str, Any]], assisted: set[str]) -> list[Played]:
    """The games of a finished room that count (``counts``), from the final ``progress``
    by seat id; ``assisted``: seats whose player had the solver's help."""
    if not counts(room):
        return []
    out = []
    for seat in room.seats:
        if not seat.who or seat.id in assisted:
            continue
        prog = progress.get(seat.id, {})
        won = prog.get("foundation") == 52
        ms, moves = prog.get("reached_ms"), prog.get("reached_moves")
        out.append(
            Played(
                seat.id,
                seat.who,
                won,
                int(ms) if won and ms is not None else None,
                int(moves) if won and moves is not None else None,
            )
        )
    return out


def told(
    game: Played, before: dict[str, int | None], after: dict[str, int | None]
) -> dict[str, Any]:
    """What a player is told of their game's effect on their statistics (the ``played``
    message, docs/protocol.md): ``before`` and ``after`` are the variant's stored
    ``best_ms``, ``fewest``, ``streak``, ``best_streak``, ``games``, ``wins`` around this
    game (``before`` None values where unknown: a game counted before, told again)."""
    best, fewest = after["best_ms"], after["fewest"]
    return {
        "won": game.won,
        "time_ms": game.time_ms,
        "moves": game.moves,
        "best": {
            "time_ms": best,
            "previous_ms": before["best_ms"],
            "new": game.won and best == game.time_ms and before["best_ms"] != best,
        },
        "fewest": {
            "moves": fewest,
            "previous": before["fewest"],
            "new": game.won and fewest == game.moves and before["fewest"] != fewest,
        },
        "streak": after["streak"] or 0,
        "best_streak": after["best_streak"] or 0,
        "games": after["games"] or 0,
        "wins": after["wins"] or 0,
    }


def summary(fields: dict[str, str], today: int) -> dict[str, Any]:
    """The profile's ``stats`` from a player's stored fields (``VARIANT:NAME``, and
    ``VARIANT:dSLOT`` = ``DAY,GAMES,WINS``): per variant played, the totals, win rate,
    best time, fewest moves, streaks, and ``days``: the last ``DAYS`` UTC days, oldest
    first, each ``{"day", "games", "wins"}`` (days without a game included, at 0)."""
    by: dict[str, dict[str, str]] = {}
    for key, value in fields.items():
        kind, _, name = key.partition(":")
        by.setdefault(kind, {})[name] = value
    out: dict[str, Any] = {}
    first = today - DAYS + 1
    for kind in sorted(by):
        got = by[kind]
        games_ = int(got.get("games", 0))
        if not games_:
            continue
        wins = int(got.get("wins", 0))
        per_day: dict[int, tuple[int, int]] = {}
        for name, value in got.items():
            if name.startswith("d"):
                day, g, w = (int(x) for x in value.split(","))
                if first <= day <= today:
                    per_day[day] = (g, w)
        out[kind] = {
            "games": games_,
            "wins": wins,
            "win_rate": round(wins / games_, 3),
            "best_time_ms": _int(got.get("best_ms")),
            "fewest_moves": _int(got.get("fewest")),
            "streak": int(got.get("streak", 0)),
            "best_streak": int(got.get("best_streak", 0)),
            "days": [
                {
                    "day": _iso(d),
                    "games": per_day.get(d, (0, 0))[0],
                    "wins": per_day.get(d, (0, 0))[1],
                }
                for d in range(first, today + 1)
            ],
        }
    return out


def _int(raw: str | None) -> int | None:
    return None if raw is None else int(raw)


def _iso(day: int) -> str:
    return (date(1970, 1, 1) + timedelta(days=day)).isoformat()
