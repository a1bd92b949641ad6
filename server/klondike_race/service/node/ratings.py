"""Applying a finished race to its players' ratings, statistics and histories (once,
store/ratings.py), and reading a player's profile for ``/api/players/``."""

from __future__ import annotations

from typing import Any
from urllib.parse import unquote

import structlog

from ..clock import now_ms
from ..domain import players, rating
from ..domain.errors import ServiceError
from ..domain.room import Room
from ..store import Store

log = structlog.get_logger("klondike_race.ratings")


def _variant_of(state: dict[str, Any]) -> str:
    return f"draw{state['settings']['draw']}"


class RatingOps:
    def __init__(self, store: Store) -> None:
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
            outcomes = rating.settle(room, progress, composites, stored, now_ms())
            return [(o.who, o.stats, o.entry) for o in outcomes]

        applied = await self.store.ratings.apply(code, _variant_of, settle)
        if applied:
            log.info("race rated", room=code)
        return applied

    async def profile(self, raw: str) -> tuple[int, dict[str, Any]]:
        """(HTTP status, JSON body) of ``/api/players/{raw}``: a player key or an
        account name (percent-encoded UTF-8, matched after NFKC and case folding)."""
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
            return 400, {"error": "bad_player", "message": "a player key (g-… or a-…) or a name"}
        guest = who.startswith(players.GUEST)
        got = await self.store.ratings.profile(who)
        if got is None and (guest or name is None):
            return _no_player(text)
        stats, races = got or ({}, [])
        return 200, {
            "id": who,
            "name": name,
            "guest": guest,
            "variants": {v: rating.public_variant(stats[v], guest) for v in sorted(stats)},
            "history": races,
        }


def _no_player(shown: str) -> tuple[int, dict[str, Any]]:
    return 404, {"error": "no_player", "message": f"no player {shown}"}
