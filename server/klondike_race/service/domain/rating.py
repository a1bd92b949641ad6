"""Ratings, statistics and race history of players: pure (no clock, no Redis).

A player's rating is an openskill Plackett-Luce (mu, sigma) per variant (``draw1``,
``draw3``: the room's ``settings.draw``). Shown as

    display = round(1500 + (mu - 25) * 40)

so a new player (mu 25, sigma 25/3) shows 1500. A rating is **provisional** while the
player is a guest or sigma is above ``PROVISIONAL_SIGMA`` (6.5: about the first ten
two-player races).

Which races count (docs/rules.md): a finished race of two or more seated players, not
practice, not a practice continuation, not abandoned. Every counted race goes into the
statistics and the race history; only **rated** ones move the rating: counted and public,
or private with the host's ``rated`` option. Anonymous seats (``who`` "") race at the
default rating; nothing is stored for them. A seat taken from the client address of
another seat of the race (``shared_address``: a second identity costs nothing) is left
out of the rating: the others are rated among themselves, when two or more are left.

A race's result for one player, first that applies: ``won`` (rank 1, alone or tied),
``solved`` (all 52 cards up but not first), ``resigned``, ``timed_out`` (the time limit
ended the game), ``lost`` (anything else: stuck, or behind).
"""

from __future__ import annotations

from collections import Counter
from dataclasses import dataclass
from typing import Any

from openskill.models import PlackettLuce

from .challenge import ADDRESS  # a history entry's flag: out of the rating (shared_address)
from .room import FINISHED, Room

MU, SIGMA = 25.0, 25.0 / 3.0
BASE, SCALE = 1500, 40  # display = round(BASE + (mu - MU) * SCALE)
PROVISIONAL_SIGMA = 6.5
RATING_POINTS = 100  # rating history points kept per player and variant
WON, SOLVED, RESIGNED, TIMED_OUT, LOST = "won", "solved", "resigned", "timed_out", "lost"

_MODEL = PlackettLuce(mu=MU, sigma=SIGMA)


def display(mu: float) -> int:
    return round(BASE + (mu - MU) * SCALE)


def provisional(guest: bool, sigma: float) -> bool:
    return guest or sigma > PROVISIONAL_SIGMA


def variant(room: Room) -> str:
    return f"draw{room.settings.draw}"


def counts(room: Room) -> bool:
    """Whether a race goes into statistics and history."""
    return (
        room.status == FINISHED
        and len(room.seats) >= 2
        and not room.options.practice
        and not room.parent
        and room.end_reason != "abandoned"
    )


def rated(room: Room) -> bool:
    """Whether a race moves ratings: counted, and public or marked rated by its host."""
    return counts(room) and (not room.options.private or room.options.rated)


def shared_address(room: Room) -> frozenset[str]:
    """The seats (ids) taken from a client address another seat of ``room`` was taken
    from too (a seat that kept none, '', shares nothing)."""
    count = Counter(s.address for s in room.seats if s.address)
    return frozenset(s.id for s in room.seats if count[s.address] > 1)


def rate(ratings: list[tuple[float, float]], ranks: list[int]) -> list[tuple[float, float]]:
    """New (mu, sigma) of each player from a final ranking (1 = first; ties share a rank;
    only the order counts: [2, 4] rates as [1, 2])."""
    if not ratings:
        return []
    teams = [[_MODEL.rating(mu=mu, sigma=sigma)] for mu, sigma in ratings]
    out = _MODEL.rate(teams, ranks=[float(r) for r in ranks])
    return [(team[0].mu, team[0].sigma) for team in out]


def result(rank: int, progress: dict[str, Any]) -> str:
    if rank == 1:
        return WON
    if progress.get("foundation") == 52:
        return SOLVED
    status = progress.get("status")
    if status == "resigned":
        return RESIGNED
    if status == "out_of_time":
        return TIMED_OUT
    return LOST


def empty_stats() -> dict[str, Any]:
    """A player's stored statistics of one variant before any race."""
    return {
        "mu": MU,
        "sigma": SIGMA,
        "races": 0,
        "wins": 0,
        "solved": 0,
        "best_time_ms": None,
        "fewest_moves": None,
        "foundation": 0,
        "streak": 0,
        "best_streak": 0,
        "history": [],
    }


@dataclass(frozen=True, slots=True)
class Outcome:
    """What one counted race does to one stored player."""

    who: str
    stats: dict[str, Any]  # the variant's new stored statistics
    entry: dict[str, Any]  # the race history entry


def settle(
    room: Room,
    progress: dict[str, dict[str, Any]],
    composites: dict[str, int],
    stored: dict[str, dict[str, Any] | None],
    now: int,
) -> list[Outcome]:
    """What a counted race changes for each stored player (not anonymous seats):
    ``progress`` and ``composites`` by seat id (the race's results, ranking.py: smaller
    is better), ``stored`` the variant's statistics by player key (None: none yet)."""
    if not counts(room):
        return []
    seats = list(room.seats)
    ranks = _ranks([composites.get(s.id, 1 << 60) for s in seats])
    before = [
        (st["mu"], st["sigma"]) if s.who and (st := stored.get(s.who)) else (MU, SIGMA)
        for s in seats
    ]
    # the seats rated: all of a rated race's but those sharing a client address, when
    # two or more are left
    shared: frozenset[str] = frozenset()
    rating_seats: list[int] = []
    if rated(room):
        shared = shared_address(room)
        rating_seats = [i for i, s in enumerate(seats) if s.id not in shared]
    if len(rating_seats) < 2:
        rating_seats = []
    after = list(before)
    moved = rate([before[i] for i in rating_seats], [ranks[i] for i in rating_seats])
    for i, new in zip(rating_seats, moved, strict=True):
        after[i] = new
    kind = variant(room)
    out = []
    for i, (seat, rank, old, new) in enumerate(zip(seats, ranks, before, after, strict=True)):
        if not seat.who:
            continue
        prog = progress.get(seat.id, {})
        stats = dict(stored.get(seat.who) or empty_stats())
        got = result(rank, prog)
        won, solved = got == WON, prog.get("foundation") == 52
        stats["races"] += 1
        stats["wins"] += won
        stats["solved"] += solved
        stats["foundation"] += int(prog.get("foundation", 0))
        stats["streak"] = stats["streak"] + 1 if won else 0
        stats["best_streak"] = max(stats["best_streak"], stats["streak"])
        if solved:
            ms, moves = prog.get("reached_ms"), prog.get("reached_moves")
            if ms is not None and (stats["best_time_ms"] is None or ms < stats["best_time_ms"]):
                stats["best_time_ms"] = ms
            if moves is not None and (
                stats["fewest_moves"] is None or moves < stats["fewest_moves"]
            ):
                stats["fewest_moves"] = moves
        is_rated = i in rating_seats
        if is_rated:
            stats["mu"], stats["sigma"] = new
            point = [room.ended or now, display(new[0])]
            stats["history"] = [*stats["history"], point][-RATING_POINTS:]
        entry = {
            "code": room.code,
            "at": room.ended or now,
            "variant": kind,
            "rank": rank,
            "players": len(seats),
            "result": got,
            "rated": is_rated,
            "rating_before": display(old[0]),
            "rating_after": display(stats["mu"]),
            "replay": f"/replay/{room.code}",
        }
        if seat.id in shared:
            entry["flags"] = [ADDRESS]
        out.append(Outcome(seat.who, stats, entry))
    return out


def _ranks(composites: list[int]) -> list[int]:
    """1 + the number of strictly smaller composites (ties share a rank)."""
    return [1 + sum(other < c for other in composites) for c in composites]


def public_variant(stats: dict[str, Any], guest: bool) -> dict[str, Any]:
    """One variant of a player's profile (docs/protocol.md, ``/api/players/``)."""
    races = stats["races"]
    return {
        "rating": display(stats["mu"]),
        "provisional": provisional(guest, stats["sigma"]),
        "races": races,
        "wins": stats["wins"],
        "win_rate": round(stats["wins"] / races, 3) if races else 0.0,
        "solved": stats["solved"],
        "best_time_ms": stats["best_time_ms"],
        "fewest_moves": stats["fewest_moves"],
        "average_foundation": round(stats["foundation"] / races, 1) if races else 0.0,
        "streak": stats["streak"],
        "best_streak": stats["best_streak"],
        "rating_history": [{"at": at, "rating": r} for at, r in stats["history"]],
    }
