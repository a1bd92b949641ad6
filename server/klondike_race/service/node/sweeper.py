"""The sweeper: closes rooms that can never finish, and resigns players who are away
when nothing else is left to play, on one node at a time."""

from __future__ import annotations

import asyncio
from collections.abc import Awaitable, Callable

import structlog

from ...engine import game_over
from ..clock import Clock
from ..config import Config
from ..domain.errors import ServiceError
from ..domain.progress import initial_progress
from ..domain.room import FINISHED, RACING, WAITING, Room, finish
from ..store import Store
from .registry import Hubs
from .rooms import RATING_GRACE_MS, RoomOps

log = structlog.get_logger("klondike_race.sweeper")

# a race's time limit is ended by the node of a connected player at once; the sweeper
# leaves it this long before it ends the race itself
DEADLINE_GRACE_MS = 2000


class Sweeper:
    """``analyse`` is called with each finished race whose analysis is overdue, ``rate``
    with the code of each whose ratings are."""

    def __init__(
        self,
        config: Config,
        store: Store,
        hubs: Hubs,
        rooms: RoomOps,
        analyse: Callable[[Room], None],
        rate: Callable[[str], Awaitable[bool]],
        resign: Callable[[Room, str], Awaitable[bool]],
        count_arena: Callable[[Room], Awaitable[bool]],
        final_arena: Callable[[str], Awaitable[bool]],
        clock: Clock,
        count_played: Callable[[str], Awaitable[bool]] | None = None,
    ) -> None:
        self.clock = clock
        self.config = config
        self.store = store
        self.hubs = hubs
        self.rooms = rooms
        self.analyse = analyse
        self.rate = rate
        self.resign = resign  # a player away, for the server (Race.resign_away)
        self.count_arena = count_arena  # a finished arena race's points (node/arenas.py)
        self.final_arena = final_arena  # an ended arena's results (node/arenas.py)
        self.count_played = count_played  # a finished room's play statistics (node/played.py)

    async def run(self) -> None:
        """Every ``sweep_interval_s``: mark the rooms where this node has players as
        active, then (on one node at a time) close the rooms nobody plays any more."""
        interval = self.config.sweep_interval_s
        while True:
            await asyncio.sleep(interval)
            try:
                now = self.clock.now_ms()
                seated = self.hubs.seated()
                await self.store.sweeping.touch(list(seated), now)
                keep = int(2000 * (interval + max(self.config.away_s, self.config.abandoned_s)))
                await self.store.sweeping.seen(seated, now, keep)
                if await self.store.sweeping.lock(max(1, int(interval * 900))):
                    await self.sweep()
            except asyncio.CancelledError:
                raise
            except Exception:
                log.exception("sweep failed")

    async def sweep(self) -> int:
        """Close rooms that can never finish: a waiting room with no player connected
        for ``waiting_abandoned_s``, a race without a time limit with no player connected
        for ``abandoned_s`` (``end_reason`` ``abandoned``), and a race whose time limit
        passed while nobody was there. Closing is the room's ordinary compare-and-set
        transition, so several nodes sweeping at once finish a room once. Finished rooms
        leave the public list and their keys expire after ``keep_finished_s``. A finished
        race whose analysis is overdue (the node making it died) is analysed here, and
        one whose ratings are overdue is applied here (once: store/ratings.py), as are a
        finished room's play statistics (once: store/played.py); an arena race
        not counted is counted, and an ended arena made final with its results."""
        now = self.clock.now_ms()
        cfg = self.config
        before = now - 1000 * min(cfg.abandoned_s, cfg.waiting_abandoned_s)
        closed = 0
        # idle rooms, and races whose time limit passed a moment ago (a node with one of
        # their players connected ends them at once; with nobody there, this does)
        ended = await self.store.sweeping.past_deadline(now - DEADLINE_GRACE_MS)
        for code in dict.fromkeys([*await self.store.sweeping.idle_rooms(before), *ended]):
            if await self._sweep_room(code, now):
                closed += 1
        playing_on = []
        for code in await self.store.sweeping.away_rooms():
            if await self._resign_away(code, now):
                closed += 1
            else:
                playing_on.append(code)
        await self.store.sweeping.looked_at(playing_on, now)  # the others' turn next
        for code in await self.store.sweeping.claim_analyses(now):
            loaded = await self.store.rooms.load(code)
            room = Room.from_json(loaded[0]) if loaded is not None else None
            # a room not finished is owed nothing (on a cluster it joins the list just
            # before the step that finishes it, which another node may have won)
            if room is None or room.status != FINISHED:
                continue
            if await self.store.rooms.load_analysis(code) is None:
                log.info("race analysed again: its analysis was never stored", room=code)
                self.analyse(room)
        for code in await self.store.ratings.claim_due(now, RATING_GRACE_MS):
            if await self.rate(code):
                log.info("race rated by the sweeper: its node never applied it", room=code)
        for code in await self.store.played.claim_due(now, RATING_GRACE_MS):
            if self.count_played is not None and await self.count_played(code):
                log.info("games counted by the sweeper: their node never did", room=code)
        for code in await self.store.arenas.claim_due(now, RATING_GRACE_MS):
            loaded = await self.store.rooms.load(code)
            if loaded is None:  # its keys expired: nothing to count from
                await self.store.arenas.counted_due(code)
            elif await self.count_arena(Room.from_json(loaded[0])):
                log.info("arena race counted by the sweeper: its node never did", room=code)
        # arenas past their end: final once their last race is counted (the node that
        # counts it writes the results; here those with no race at the end, and those
        # whose node died before writing them)
        for arena in await self.store.arenas.claim_ending(now, RATING_GRACE_MS):
            await self.final_arena(arena)
        return closed

    async def _sweep_room(self, code: str, now: int) -> bool:
        """Close one idle room if it can never finish; True when it was closed here."""
        cfg = self.config
        loaded = await self.store.rooms.load(code)
        if loaded is None:  # its keys expired
            await self.store.sweeping.untrack(code)
            return False
        room = Room.from_json(loaded[0])
        idle = now - (await self.store.sweeping.last_seen(code) or now)
        phase = room.phase(now)
        reason = None
        if phase == FINISHED:
            if room.status != FINISHED:  # the time limit passed with nobody there
                reason = "time_limit"
            else:
                await self.store.sweeping.untrack(code)
        elif phase == WAITING:
            if idle >= cfg.waiting_abandoned_s * 1000:
                reason = "abandoned"
        elif idle >= cfg.abandoned_s * 1000 and room.options.time_limit is None:
            reason = "abandoned"
        if reason is None:
            return False
        try:
            if phase == WAITING:
                await self.rooms.change(code, lambda r: finish(r, self.clock.now_ms(), "abandoned"))
            else:
                await self.rooms.finish(code, reason)
        except ServiceError as err:
            log.info("room not swept", room=code, reason=err.reason)
            return False
        log.info("room swept", room=code, phase=phase, reason=reason, idle_ms=idle)
        return True

    async def _resign_away(self, code: str, now: int) -> bool:
        """A race where some games have ended: when every player still playing has been
        away (no connection on any node) for ``away_s``, they are resigned, for the
        server, and the race ends (``all_over``). True when it ended here."""
        loaded = await self.store.rooms.load(code)
        room = Room.from_json(loaded[0]) if loaded is not None else None
        if room is None or room.phase(now) != RACING or room.start_at is None:
            if room is None or room.phase(now) == FINISHED:
                await self.store.sweeping.untrack(code)
            return False
        if room.options.ghost:  # its other seat is the server's: it plays to its end
            return False
        _, progress, _ = await self.store.rooms.snapshot(code)
        undo = room.settings.undo
        status = {s.id: (progress.get(s.id) or initial_progress())["status"] for s in room.seats}
        playing = [p for p, st in status.items() if not game_over(st, undo)]
        seen = await self.store.sweeping.last_seen_seats(code)
        since = now - 1000 * self.config.away_s
        if not playing or any(max(seen.get(p, 0), room.start_at) > since for p in playing):
            return False
        for player in playing:
            if not await self.resign(room, player):  # back, and moved meanwhile
                return False
            log.info(
                "player away: resigned by the server",
                room=code,
                player=player,
                away_ms=now - max(seen.get(player, 0), room.start_at),
            )
        try:
            await self.rooms.finish(code, "all_over")
        except ServiceError as err:
            log.info("race not ended", room=code, reason=err.reason)
            return False
        return True
