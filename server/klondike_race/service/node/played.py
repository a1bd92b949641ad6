"""Counting a finished room's games to its players' play statistics, once
(store/played.py), and telling each player what their game did (a ``played`` event,
after the room has finished: nothing of a game before it is over)."""

from __future__ import annotations

from typing import Any

import structlog

from ..clock import Clock
from ..domain import played
from ..domain.room import Room
from ..store import Store
from ..store.played import PLAYED_DUE
from ..store.ratings import GUEST_KEEP_S
from .registry import Hubs

log = structlog.get_logger("klondike_race.played")


class PlayedOps:
    def __init__(self, store: Store, hubs: Hubs, clock: Clock) -> None:
        self.store = store
        self.hubs = hubs
        self.clock = clock

    async def apply(self, code: str) -> bool:
        """Count the finished room ``code``'s games if nobody has: True when this call
        stored what its players were told."""
        got = await self.store.played.room(code)
        if got is None:
            await self.store.played.done(code)
            return False
        state, told, assisted = got
        room = Room.from_json(state)
        if told is not None or not played.counts(room):
            await self.store.played.done(code)
            return False
        progress = (await self.store.rooms.snapshot(code))[1]
        ended = room.ended or self.clock.now_ms()
        day = played.day_of(ended)
        kind = played.variant(room.settings.draw)
        seats: dict[str, Any] = {}
        for game in played.games(room, progress, assisted):
            keep = GUEST_KEEP_S if game.who.startswith("g-") else 0
            now, before, after = await self.store.played.count(
                game.who,
                code,
                kind,
                (game.won, game.time_ms, game.moves),
                (day, day % played.DAYS),
                keep,
            )
            if not now:  # counted before this call (a node that died after it)
                before = {**after, "best_ms": None, "fewest": None}
            seats[game.seat] = {"variant": kind, **played.told(game, before, after)}
        if not seats:  # nobody's game counted (anonymous seats, solver-assisted games)
            await self.store.played.done(code)
            return False
        v = await self.store.rooms.save_after(code, "played", seats, PLAYED_DUE)
        if v:
            self.hubs.feed(code, v, {"type": "played", "played": seats})
            log.info("games counted", room=code, players=len(seats))
        return v > 0
