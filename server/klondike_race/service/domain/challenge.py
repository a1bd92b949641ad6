"""Challenges: a window (opens, closes) with one or more deals everyone plays once for a
place on its leaderboard. The dailies are one challenge per UTC day per daily variant;
an operator may schedule others (a JSON file, docs/operations.md). Pure: no clock is
read here, ``now`` (epoch ms) comes in.

A challenge deal's seed is ``HMAC-SHA256(secret, "ID/INDEX/CANDIDATE")`` (16 hex digits)
for the first candidate the solver proves winnable, its salt ``HMAC-SHA256(secret,
"salt/ID/INDEX")`` (32 hex digits): unpredictable before the day without the server's
secret, reproducible after it. The commitment (``sha256(salt:v1:SEED)``, as for rooms)
is published when the challenge opens; seed and salt when it closes.
"""

from __future__ import annotations

import hashlib
import hmac
import re
from dataclasses import dataclass
from datetime import UTC, date, datetime, timedelta
from typing import Any

from ...engine import Settings
from .errors import NotYet, ServiceError
from .players import ACCOUNT

UPCOMING, OPEN, CLOSED = "upcoming", "open", "closed"
RANKINGS = ("single", "places", "foundation")  # one deal; sum of places; sum of cards
ID = re.compile(r"[a-z0-9][a-z0-9-]{2,47}")
DAY_MS = 86_400_000


@dataclass(frozen=True, slots=True)
class Challenge:
    id: str
    title: str
    opens: int  # epoch ms
    closes: int  # epoch ms: no attempt starts at or after it
    deals: tuple[Settings, ...]
    ranking: str = "single"
    time_limit: int = 1800  # seconds an attempt lasts from the deal's first showing
    daily: bool = False

    def phase(self, now: int) -> str:
        if now < self.opens:
            return UPCOMING
        return OPEN if now < self.closes else CLOSED

    def final_at(self) -> int:
        """When the last attempt that could start has ended: the leaderboard is final, and
        the deals' seeds are revealed (an attempt begun just before the close may still be
        playing until then: it must not be solved knowing the cards)."""
        return self.closes + self.time_limit * 1000

    def revealed(self, now: int) -> bool:
        return now >= self.final_at()

    def deal(self, index: int) -> Settings:
        if not 0 <= index < len(self.deals):
            raise ServiceError("no_deal", f"{self.id} has deals 0 to {len(self.deals) - 1}")
        return self.deals[index]

    def public(self, now: int) -> dict[str, Any]:
        return {
            "id": self.id,
            "title": self.title,
            "daily": self.daily,
            "opens": self.opens,
            "closes": self.closes,
            "final_at": self.final_at(),
            "final": now >= self.final_at(),
            "phase": self.phase(now),
            "ranking": self.ranking,
            "time_limit": self.time_limit,
            "deals": [{"index": i, "settings": s.to_dict()} for i, s in enumerate(self.deals)],
        }


# What of a challenge's deal may be asked for before the challenge is final: each refused
# (``sealed``) until then, whoever asks, but a player's watch of their own attempt.
WATCH = "watching a game on a challenge deal"
REPLAY = "a replay of a game on a challenge deal"
GHOST = "a ghost race on a challenge deal"
PRACTICE = "practice of a challenge deal"
SOLVER = "the solver's help on a challenge deal"


def sealed(what: str, final_at: int | None, now: int, own: bool = False) -> NotYet | None:
    """Why ``what`` of a game on a challenge's deal is refused now: ``not_yet`` until the
    challenge is final (``final_at``, what its rooms carry as ``reveal_at``; None: no
    challenge's deal), or None. Others may still be playing the deal until then, and an
    identity costs nothing, so nothing derived from it reaches anyone but through their
    own attempt: a player may watch their ``own`` attempt (their own board as they play
    it, their own result once it has ended), and nothing else. docs/rules.md, "What opens
    when a challenge is final"."""
    if final_at is None or now >= final_at or (own and what == WATCH):
        return None
    return NotYet(what, final_at)


def day_of(now: int) -> date:
    return datetime.fromtimestamp(now / 1000, UTC).date()


def day_start(day: date) -> int:
    return int(datetime(day.year, day.month, day.day, tzinfo=UTC).timestamp() * 1000)


def daily_id(day: date, draw: int) -> str:
    return f"daily-{day.isoformat()}-draw{draw}"


def dailies(day: date, draws: tuple[int, ...], time_limit: int) -> list[Challenge]:
    """The daily challenges of a UTC day: one per variant in ``draws``."""
    opens = day_start(day)
    return [
        Challenge(
            daily_id(day, draw),
            f"Daily {day.isoformat()} Draw {draw}",
            opens,
            opens + DAY_MS,
            (Settings(draw=draw),),
            "single",
            time_limit,
            True,
        )
        for draw in draws
    ]


def parse_daily(challenge_id: str, draws: tuple[int, ...], time_limit: int) -> Challenge | None:
    """The daily named ``daily-YYYY-MM-DD-drawN``, or None."""
    m = re.fullmatch(r"daily-(\d{4}-\d{2}-\d{2})-draw(\d)", challenge_id)
    if m is None or int(m.group(2)) not in draws:
        return None
    try:
        day = date.fromisoformat(m.group(1))
    except ValueError:
        return None
    return dailies(day, (int(m.group(2)),), time_limit)[0]


def scheduled(entry: dict[str, Any], default_time_limit: int) -> Challenge:
    """An operator's challenge from its JSON form (docs/operations.md), or ValueError."""
    known = {"id", "title", "opens", "closes", "deals", "ranking", "time_limit"}
    extra = set(entry) - known
    if extra:
        raise ValueError(f"unknown field {sorted(extra)[0]!r}")
    cid = entry["id"]
    if not isinstance(cid, str) or not ID.fullmatch(cid) or cid.startswith("daily-"):
        raise ValueError(f"id {cid!r}: 3-48 of a-z, 0-9, '-', not starting with daily-")
    opens, closes = (_instant(entry[k]) for k in ("opens", "closes"))
    if closes <= opens:
        raise ValueError(f"{cid}: closes must come after opens")
    deals = tuple(Settings.from_dict(d) for d in entry["deals"])
    if not 1 <= len(deals) <= 20:
        raise ValueError(f"{cid}: 1 to 20 deals")
    if any(d.undo for d in deals):
        raise ValueError(f"{cid}: undo is off in challenges (ranked play)")
    ranking = entry.get("ranking", "single" if len(deals) == 1 else "places")
    if ranking not in RANKINGS or (ranking == "single") != (len(deals) == 1):
        raise ValueError(f"{cid}: ranking is single (one deal), places or foundation")
    # an entry's own time limit, checked here; without one, KR_CHALLENGE_TIME_LIMIT_S (the
    # configuration checked it: 10 to 14400)
    limit = int(entry.get("time_limit", default_time_limit))
    if "time_limit" in entry and not 60 <= limit <= 4 * 3600:
        raise ValueError(f"{cid}: time_limit is 60 to 14400 seconds")
    return Challenge(cid, str(entry.get("title", cid)), opens, closes, deals, ranking, limit)


def _instant(value: Any) -> int:
    """Epoch ms from an ISO 8601 time with its zone ("2026-12-07T00:00:00Z")."""
    when = datetime.fromisoformat(str(value).replace("Z", "+00:00"))
    if when.tzinfo is None:
        raise ValueError(f"{value!r}: give the time zone (Z for UTC)")
    return int(when.timestamp() * 1000)


def seed(secret: bytes, challenge_id: str, index: int, candidate: int) -> str:
    message = f"{challenge_id}/{index}/{candidate}".encode()
    return hmac.new(secret, message, hashlib.sha256).hexdigest()[:16]


def salt(secret: bytes, challenge_id: str, index: int) -> str:
    message = f"salt/{challenge_id}/{index}".encode()
    return hmac.new(secret, message, hashlib.sha256).hexdigest()[:32]


def days_around(now: int) -> tuple[date, date]:
    """Today and tomorrow (UTC) at ``now``: the days whose dailies must be prepared."""
    today = day_of(now)
    return today, today + timedelta(days=1)


# Fair play: a won attempt faster than a person plays is flagged (it stays on the board
# until an operator removes it, docs/operations.md).
FLAG_MS_PER_MOVE = 250  # average time per move below this
FLAG_GAME_MS = 40_000  # or the whole game below this


def flagged(progress: dict[str, Any]) -> bool:
    """A won game averaging under 250 ms a move, or won in under 40 s."""
    if progress.get("status") != "won":
        return False
    last_ms = int(progress.get("last_ms") or 0)
    moves = int(progress.get("moves") or 0)
    return last_ms < FLAG_GAME_MS or last_ms < FLAG_MS_PER_MOVE * moves


# Who a challenge's leaderboards rank (KR_CHALLENGE_RANKING): everyone, or accounts only,
# the guests' attempts listed apart with places of their own.
EVERYONE, ACCOUNTS = "everyone", "accounts"


def apart(ranks: str, who: str) -> bool:
    """Whether player ``who``'s attempts are listed apart, on the guests' list: a guest's,
    where a challenge ranks accounts only."""
    return ranks == ACCOUNTS and not who.startswith(ACCOUNT)


# Why a row is flagged, in this order: ``address``, made from a client address that had
# made an attempt at the deal before (decided when the attempt is made); ``speed``, won
# faster than a person plays (``flagged``).
ADDRESS, SPEED = "address", "speed"


def row(
    code: str, name: str, guest: bool, progress: dict[str, Any], flags: tuple[str, ...] = ()
) -> dict[str, Any]:
    """An attempt's leaderboard row (its rank comes from the board's order): ``flags``,
    the attempt's own (``ADDRESS``), then ``SPEED`` when its progress is flagged."""
    reasons = [*flags, *([SPEED] if flagged(progress) else [])]
    return {
        "name": name,
        "guest": guest,
        "code": code,
        **progress,
        "flagged": bool(reasons),
        "flags": reasons,
    }


def overall(
    ranking: str, boards: list[list[tuple[str, int, dict[str, Any]]]]
) -> list[dict[str, Any]]:
    """The overall ranking of a multi-deal challenge from its deals' boards (each a list
    of (player, composite, row), best first), best first, with ``rank`` (equal totals
    share one; listed by player key among them, so the order is deterministic).

    ``places``: the sum of a player's places over the deals (equal composites share a
    place), a deal not played counting as that deal's players + 1; smaller is better.
    ``foundation``: the sum of foundation cards (more is better), then of moves to reach
    them (``reached_moves``), then of the time they were reached (``reached_ms``)."""
    players: dict[str, dict[str, Any]] = {}
    for index, board in enumerate(boards):
        place, last = 1, None
        for i, (who, score, r) in enumerate(board):
            if last is not None and score != last:
                place = i + 1
            last = score
            p = players.setdefault(
                who,
                {"who": who, "places": [None] * len(boards), "foundation": 0, "moves": 0, "ms": 0},
            )
            p["name"], p["guest"] = r["name"], r["guest"]
            p["places"][index] = place
            p["foundation"] += r["foundation"]
            p["moves"] += r["reached_moves"]
            p["ms"] += r["reached_ms"]
    if ranking == "places":
        for p in players.values():
            p["total"] = sum(
                place if place is not None else len(boards[i]) + 1
                for i, place in enumerate(p["places"])
            )

        def key(p: dict[str, Any]) -> tuple[int, ...]:
            return (p["total"],)
    else:
        for p in players.values():
            p["total"] = p["foundation"]

        def key(p: dict[str, Any]) -> tuple[int, ...]:
            return (-p["foundation"], p["moves"], p["ms"])

    ordered = sorted(players.values(), key=lambda p: (key(p), p["who"]))
    out: list[dict[str, Any]] = []
    rank, last_key = 1, None
    for i, p in enumerate(ordered):
        k = key(p)
        if last_key is not None and k != last_key:
            rank = i + 1
        last_key = k
        out.append(
            {
                "rank": rank,
                "who": p["who"],
                "name": p["name"],
                "guest": p["guest"],
                "total": p["total"],
                "deals": sum(x is not None for x in p["places"]),
                "places": p["places"],
                "foundation": p["foundation"],
                "moves": p["moves"],
                "ms": p["ms"],
            }
        )
    return out


def streaks(days: set[date], today: date) -> tuple[int, int]:
    """(current, best) runs of consecutive UTC days in ``days``; the current one ends
    today or yesterday (a day not played yet today does not break it)."""
    best = run = 0
    previous: date | None = None
    for day in sorted(days):
        run = run + 1 if previous is not None and day - previous == timedelta(days=1) else 1
        best = max(best, run)
        previous = day
    current = 0
    day = today if today in days else today - timedelta(days=1)
    while day in days:
        current += 1
        day -= timedelta(days=1)
    return current, best
