"""Applying a finished race to its players' ratings, statistics and histories (once,
store/ratings.py), and reading a player's profile for ``/api/players/``."""

from __future__ import annotations

import re
from datetime import date, timedelta
from typing import Any
from urllib.parse import unquote

import structlog

from ..clock import Clock
from ..domain import challenge, played, players, rating
from ..domain.errors import ServiceError
from ..domain.room import Room
from ..http import BAD_ESCAPE
from ..store import Store

log = structlog.get_logger("klondike_race.ratings")
DAILY = re.compile(r"daily-(\d{4}-\d{2}-\d{2})-draw\d")


def _variant_of(state: dict[str, Any]) -> str:
    return f"draw{state['settings']['draw']}"


class RatingOps:
    def __init__(self, store: Store, clock: Clock) -> None:
        self.clock = clock
        self.store = store

    async def apply(self, code: str) -> bool:
        """Apply the finished race ``code`` if nobody has: True when applied here."""

        def settle(
            state: dict[str, Any],
            progress: dict[str, dict[str, Any]],
            composites: dict[str, int],
            stored: dict[str, Any],
        ) -> list[tuple[str, dict[str, Any], dict[str, Any]]]:
            room = Room.from_json(state)
            outcomes = rating.settle(room, progress, composites, stored, self.clock.now_ms())
            return [(o.who, o.stats, o.entry) for o in outcomes]

        applied = await self.store.ratings.apply(code, _variant_of, settle)
        if applied:
            log.info("race rated", room=code)
        return applied

    async def profile(self, raw: str, query: str = "") -> tuple[int, dict[str, Any]]:
        """(HTTP status, JSON body) of ``/api/players/{raw}``: a player key or an
        account name (percent-encoded UTF-8, matched after NFKC and case folding). The
        route has no parameters: a query is refused."""
        if query:
            return 400, {"error": "bad_request", "message": "/api/players/WHO takes no query"}
        bad = 400, {"error": "bad_player", "message": "a player key (g-… or a-…) or a name"}
        if BAD_ESCAPE.search(raw):  # bad percent-encoding
            return bad
        try:
            text = unquote(raw, errors="strict")
            if players.KEY.fullmatch(text):
                who = text
                name = None
                if who.startswith(players.ACCOUNT):
                    name = await self.store.accounts.name_of(who.removeprefix(players.ACCOUNT))
            else:
                players.display_name(text)
                found = await self.store.accounts.find(players.canonical(text))
                if found is None:
                    return _no_player(text)
                who, name = players.ACCOUNT + found[0], found[1]
        except (UnicodeDecodeError, ServiceError):
            return bad
        guest = who.startswith(players.GUEST)
        if guest:  # the name of the guest's last seat: a profile from their first game
            name = await self.store.accounts.guest_name(who)
        got = await self.store.ratings.profile(who)
        dailies = await self.store.challenges.dailies_of(who)
        arenas = await self.store.arenas.lines_of(who)
        play = await self.store.played.of(who)
        if got is None and not dailies and not arenas and not play and name is None:
            return _no_player(text)
        stats, races = got or ({}, [])
        return 200, {
            "id": who,
            "name": name,
            "guest": guest,
            "variants": {v: rating.public_variant(stats[v], guest) for v in sorted(stats)},
            "history": races,
            "daily": daily_summary(dailies, self.clock.now_ms()),
            "arenas": arenas,
            "stats": played.summary(play, played.day_of(self.clock.now_ms())),
        }


DAILY_DAYS = 30  # the profile's daily results: the last 30 UTC days


def daily_summary(dailies: dict[str, dict[str, Any]], now: int) -> dict[str, Any]:
    """Streaks of UTC days with an ended daily attempt, and the last 30 days' results
    (newest first), from ``challenge id -> result``."""
    today = challenge.day_of(now)
    played: list[tuple[date, str, dict[str, Any]]] = []
    for cid, result in dailies.items():
        m = DAILY.fullmatch(cid)
        if m is not None:
            played.append((date.fromisoformat(m.group(1)), cid, result))
    streak, best = challenge.streaks({d for d, _, _ in played}, today)
    first = today - timedelta(days=DAILY_DAYS - 1)
    days = [
        {"day": d.isoformat(), "challenge": cid, **result}
        for d, cid, result in sorted(played, key=lambda x: (x[0], x[1]), reverse=True)
        if first <= d <= today
    ]
    return {"streak": streak, "best_streak": best, "days": days}


def _no_player(shown: str) -> tuple[int, dict[str, Any]]:
    return 404, {"error": "no_player", "message": f"no player {shown}"}
