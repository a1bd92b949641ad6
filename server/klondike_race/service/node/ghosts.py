"""Ghosts: a practice race against a recorded game on the same deal. The ghost is a seat
(``p2``) the server plays from the recorded move log, each move at its recorded time
after the start, through the same store and events as a player's move: the player sees
it in the standings as any opponent. A node with the player runs the ghost; a node that
takes over (a resume elsewhere) goes on from the ghost's stored log, and two nodes
running it at once store each move once (the log's sequence check)."""

from __future__ import annotations

import asyncio
from typing import Any

import orjson
import structlog

from ...engine import Game, Move
from ..clock import Clock
from ..contracts import Spawn
from ..domain import challenge as ch
from ..domain import movelog
from ..domain.errors import ServiceError
from ..domain.options import RoomOptions
from ..domain.replay import refusal
from ..domain.room import FINISHED, Room, add_player
from ..roomevent import OwnMove
from ..store import Store
from ..wire import GhostRequest, events
from .conn import Conn, seat_name, seat_owner
from .registry import Hubs
from .rooms import RoomOps, SeatToken, new_token

log = structlog.get_logger("klondike_race.ghosts")

GHOST = "p2"  # the ghost's seat in its practice room


class Ghosts:
    def __init__(
        self,
        store: Store,
        hubs: Hubs,
        rooms: RoomOps,
        spawn: Spawn,
        clock: Clock,
    ) -> None:
        self.clock = clock
        self.store = store
        self.hubs = hubs
        self.rooms = rooms
        self.spawn = spawn
        self.running: dict[str, asyncio.Task[Any]] = {}

    async def new_race(self, conn: Conn, m: GhostRequest) -> tuple[Room, str, SeatToken]:
        """A practice room on the recorded game's deal, the ghost seated against
        ``conn``'s player: (room, the player's seat, its token). The ghost plays once the
        player is in (``resume``)."""
        source = await self._source(m.code)
        seat = source.seat(m.player)
        if seat is None:
            raise ServiceError("no_player", f"room {m.code} has no player {m.player}")
        secret, hashed = new_token(conn.session)
        who, guest = seat_owner(conn)
        name = seat_name(conn, m.name)

        def seats(room: Room, now: int) -> tuple[Room, list[str]]:
            room, me = add_player(room, name, hashed, now, who, guest)
            room, _ = add_player(room, f"{seat.name} (ghost)", "", now, "", seat.guest)
            return room, [me]

        # under the recorded game's time limit: a game that ran out of time has no end in
        # its log, and its ghost runs out with the limit as it did
        options = RoomOptions(
            settings=source.settings,
            practice=True,
            ghost=True,
            time_limit=source.options.time_limit,
            rank_by=source.options.rank_by,
        )
        ghost = {"code": source.code, "player": seat.id}
        room, (me,) = await self.rooms.create(
            options,
            source.deal,
            seats,
            reveal_at=source.reveal_at,
            ghost=ghost,
            deal_of=source.challenge or source.deal_of,
        )
        log.info("ghost race", room=room.code, ghost_of=source.code, player=seat.id)
        return room, me, SeatToken(room.code, me, secret)

    async def _source(self, code: str) -> Room:
        """The finished room a ghost comes from, if it may be raced now: as a replay may
        be shown (a game on a challenge's deal, one's own attempt too, only once the
        challenge is final: the ghost race is a practice game on that deal)."""
        loaded = await self.store.rooms.load(code)
        if loaded is None:
            raise ServiceError("no_room", f"no room {code}")
        source = Room.from_json(loaded[0])
        if source.parent:
            raise ServiceError("bad_field", "ghost: a practice continuation is no whole game")
        now = self.clock.now_ms()
        sealed = ch.sealed(ch.GHOST, source.reveal_at, now)
        if sealed is not None:
            raise sealed
        refused = refusal(source, None, now)
        if refused is not None:
            raise refused[1]
        return source

    def resume(self, room: Room) -> None:
        """A player of a ghost race is here: make sure its ghost plays on this node."""
        if (
            room.ghost
            and room.phase(self.clock.now_ms()) != FINISHED
            and room.code not in self.running
        ):
            task = self.running[room.code] = self.spawn(self._play(room))
            task.add_done_callback(lambda _t: self.running.pop(room.code, None))

    async def _play(self, room: Room) -> None:
        """Play the recorded moves at their times, from what the ghost has stored."""
        assert room.start_at is not None and room.ghost is not None
        recorded = await self.store.log.read(room.ghost["code"], room.ghost["player"])
        if room.options.time_limit is None and not movelog.replay(self._game(room), recorded).over:
            # a game with no end of its own (its room abandoned, no time limit to run
            # out): its ghost resigns after its last move, or the race would never end
            last = movelog.at_ms(recorded[-1]) if recorded else 0
            recorded = [*recorded, movelog.entry(movelog.RESIGN, last)]
        stored = await self.store.log.read(room.code, GHOST)
        game = movelog.replay(self._game(room), stored)
        for seq, line in enumerate(recorded[len(stored) :], start=len(stored) + 1):
            at_ms = movelog.at_ms(line)
            wait = room.start_at + at_ms - self.clock.now_ms()
            if wait > 0:
                await asyncio.sleep(wait / 1000)
            if movelog.is_move(line):
                move = game.play(Move.parse(movelog.text_of(line)), at_ms)
                entry = movelog.entry(str(move), at_ms)
            else:  # a resignation or a sprint's time-out: it ends as the recorded game did
                movelog.apply(game, line)
                entry = line
            rank_by = room.options.rank_by
            board, body, key = events.entered(GHOST, game, seq, entry, at_ms, rank_by)
            v = await self.store.log.append(
                room.code, GHOST, seq, entry, body["progress"], key, orjson.dumps(body)
            )
            if v == 0:  # the race is over
                return
            if v > 0:
                own = OwnMove(board, orjson.Fragment(orjson.dumps(board)))
                self.hubs.feed(room.code, v, body, own)
        await self._maybe_over(room)

    @staticmethod
    def _game(room: Room) -> Game:
        return Game(room.game_deal, room.settings)

    async def _maybe_over(self, room: Room) -> None:
        """The ghost's game is over: the race ends if the player's is too."""
        hub = self.hubs.get(room.code)
        _, stored, _ = await self.store.rooms.snapshot(room.code)
        players = [s.id for s in room.seats]
        over = hub.over if hub is not None else None
        if over is not None and all(over(stored.get(pid)) for pid in players):
            await self.rooms.finish(room.code, "all_over")
