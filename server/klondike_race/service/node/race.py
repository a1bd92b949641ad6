"""The move path: check a move against the player's own game, store it (group commit),
acknowledge it, and tell the room."""

from __future__ import annotations

import asyncio
from collections.abc import Coroutine
from typing import Any, NamedTuple

import orjson

from ...engine import BoardView, Game, IllegalMove, Move, board_view, game_over
from ..clock import Clock
from ..domain import movelog
from ..domain.challenge import row as challenge_row
from ..domain.errors import ServiceError
from ..domain.progress import initial_progress
from ..domain.room import FINISHED, RACING, Room, RoomView, sprint
from ..hub import RoomHub
from ..metrics import Metrics
from ..roomevent import Ack, OwnMove, RoomEvent
from ..store import Store
from ..store.challenges import board_key
from ..wire import encode, encode_text, events
from .conn import Conn
from .rooms import RoomOps


def player_hub(conn: Conn) -> RoomHub:
    """The room of a connection that plays in it, or the reason it cannot act."""
    if conn.hub is None:
        raise ServiceError("not_in_room", "join or create a room first")
    if conn.role != "player":
        raise ServiceError("not_a_player", "spectators cannot act on games")
    return conn.hub


def _board_of(
    hub: RoomHub, player: str, prog: dict[str, Any], tagged: bool
) -> tuple[str, str, bytes] | None:
    """(leaderboard, player key, row JSON) of a challenge attempt's move, else None."""
    attempt = hub.public.challenge
    if not attempt:
        return None
    seat = hub.public.seat(player)
    assert seat is not None and seat.who is not None  # an attempt's player has a key
    challenge, _, index = attempt.rpartition("/")
    room = hub.room
    flags = room.flags if room is not None else ()
    row = challenge_row(hub.code, seat.name, seat.guest, prog, flags)
    guests = room is not None and room.apart  # a guest's, listed apart
    return board_key(challenge, int(index), tagged, guests), seat.who, orjson.dumps(row)


class Queued(NamedTuple):
    """A checked move waiting for its group commit (``stored``: the store's answer)."""

    conn: Conn
    hub: RoomHub
    game: Game
    seq: int
    entry: str
    board: BoardView
    body: events.Progress
    t0: float
    stored: asyncio.Future[int]


class Race:
    def __init__(self, store: Store, rooms: RoomOps, metrics: Metrics, clock: Clock) -> None:
        self.clock = clock
        self.store = store
        self.rooms = rooms
        self.metrics = metrics

    def _refuse(self, conn: Conn, seq: int, reason: str, message: str) -> None:
        self.metrics.refused(reason)
        conn.send(
            encode_text({"type": "refused", "seq": seq, "reason": reason, "message": message})
        )

    def _refuse_seq(self, conn: Conn, seq: int, game: Game) -> None:
        self._refuse(
            conn, seq, "bad_seq", f"the next sequence number is {movelog.logged(game) + 1}"
        )

    async def play(
        self,
        conn: Conn,
        seq: int,
        player: str | None,
        t0: float,
        move: Move | None,
        fresh: bool = False,
    ) -> bool:
        """Check, store and acknowledge one move (None: resign); True when acknowledged.
        ``fresh``: the player's game was just read from the store (a gap is refused)."""
        queued = self.start(conn, seq, player, t0, move, fresh)
        if queued is None:
            return False
        if not isinstance(queued, Queued):
            return await queued
        rest = self.finish(queued, await queued.stored)
        return True if rest is None else await rest

    def start(
        self,
        conn: Conn,
        seq: int,
        player: str | None,
        t0: float,
        move: Move | None,
        fresh: bool = False,
    ) -> Queued | Coroutine[Any, Any, bool] | None:
        """Check one move (None: resign) and queue it for the next group commit, without
        waiting: None when it was answered at once (refused, or acknowledged again);
        a coroutine to await when the player's game must be read from the store first
        (a gap, a retry, or a refusal: another device of the player's may have moved, and
        a seq it stored is a duplicate whatever the move); else ``finish`` it with what
        ``stored`` gives."""
        hub = player_hub(conn)
        game = conn.game
        assert game is not None and conn.player is not None
        if player is not None and player != conn.player:
            self._refuse(conn, seq, "not_your_game", "you can only play your own game")
            return None
        if seq <= movelog.logged(game):
            # a retry: answered as stored (even after the end: a refusal would say nothing
            # changed) with the current board, which another device of the player's may
            # have moved on from this connection's copy
            if not fresh:
                return self._after_reload(conn, hub, seq, player, t0, move)
            self.ack_again(conn, hub, seq)
            return None
        # the room's phase and the move's time in the race, at one moment (a sprinter's
        # race is over at their own time limit)
        room, now = hub.public, self.clock.now_ms()
        phase = room.phase_for(conn.player, now)
        if phase != RACING:
            if phase != FINISHED:  # (no move is stored before the start)
                self._refuse(conn, seq, "not_started", "the race has not started")
            elif not fresh:  # another connection of the seat may have stored this seq
                return self._after_reload(conn, hub, seq, player, t0, move)
            else:
                self._refuse(conn, seq, "race_over", _over(room, now))
            return None
        if seq != movelog.logged(game) + 1:
            if not fresh:
                return self._after_reload(conn, hub, seq, player, t0, move)
            self._refuse_seq(conn, seq, game)
            return None
        assert room.start_at is not None  # racing
        at_ms = now - room.start_at
        try:
            if move is None:
                game.resign()
                entry = movelog.entry(movelog.RESIGN, at_ms)
            else:
                entry = movelog.entry(str(game.play(move, at_ms)), at_ms)
        except IllegalMove as err:
            if not fresh:
                # this connection's game may be behind the store (another connection of
                # the seat moved): a stored seq is a duplicate whatever the move, and a
                # refusal would say it is free
                return self._after_reload(conn, hub, seq, player, t0, move)
            self._refuse(conn, seq, err.reason, str(err))
            return None
        player = conn.player
        assert player is not None
        board, body, key = events.entered(player, game, seq, entry, at_ms, room.options.rank_by)
        prog = body["progress"]
        stored = self.store.log.append(
            hub.code,
            player,
            seq,
            entry,
            prog,
            key,
            orjson.dumps(body),
            _board_of(hub, player, prog, self.store.log.cluster),
        )
        hub.committing.add((player, seq))
        stored.add_done_callback(lambda f: _not_committed(hub, (player, seq), f))
        return Queued(conn, hub, game, seq, entry, board, body, t0, stored)

    def finish(self, q: Queued, v: int) -> Coroutine[Any, Any, bool] | None:
        """A queued move's answer from the store (``v``: its event version, else why it was
        not stored): acknowledged and told to the room. None when that is all; else what
        is left to await (the move was not stored, or the player's game is over)."""
        conn, hub, seq = q.conn, q.hub, q.seq
        hub.committing.discard((q.body["player"], seq))  # its event, fed below, drains
        if v <= 0:  # not stored: the log moved on elsewhere, or the race ended
            return self._not_stored(conn, hub, seq, v)
        self.metrics.moves_accepted.inc()
        over = q.game.over
        if over:
            conn.over = True
        # the board is encoded once: the ack and the others' updates embed the same JSON
        board_json = orjson.Fragment(orjson.dumps(q.board))
        ack = Ack(seq, movelog.text_of(q.entry), q.t0)  # the hub sends it in the event's place
        hub.feed(RoomEvent(v, q.body, OwnMove(q.board, board_json, conn, ack)))
        return self._game_over(conn, hub) if over else None

    async def reload(self, conn: Conn, hub: RoomHub) -> Game:
        """The player's game as stored (another connection of theirs may have moved)."""
        assert hub.room is not None and conn.player is not None
        log = await self.store.log.read(hub.code, conn.player)
        game = conn.game = hub.room.game_of(log)
        conn.over = game.over
        return game

    async def _after_reload(
        self,
        conn: Conn,
        hub: RoomHub,
        seq: int,
        player: str | None,
        t0: float,
        move: Move | None,
    ) -> bool:
        """A gap, a retry or a refusal in this connection's sequence: checked again
        against the stored game (this connection's catches up with it), so that a seq
        stored is acknowledged as such with the current board, and a refusal is of a seq
        still free (a gap's names the stored next number)."""
        await self.reload(conn, hub)
        return await self.play(conn, seq, player, t0, move, fresh=True)

    async def _not_stored(self, conn: Conn, hub: RoomHub, seq: int, v: int) -> bool:
        game = await self.reload(conn, hub)
        now = self.clock.now_ms()
        if v == 0:
            self._refuse(conn, seq, "race_over", "the race is over")
        elif seq <= movelog.logged(game):
            self.ack_again(conn, hub, seq)
        elif hub.public.phase_for(conn.player, now) == FINISHED:  # a sprinter's time-out came first
            self._refuse(conn, seq, "race_over", _over(hub.public, now))
        else:
            self._refuse_seq(conn, seq, game)
        return False

    def ack_again(self, conn: Conn, hub: RoomHub, seq: int) -> None:
        """A move already stored (a retry): acknowledged again, marked ``duplicate``."""
        game = conn.game
        assert game is not None
        move = str(game.log[seq - 1]) if seq <= len(game.log) else movelog.RESIGN
        flags = hub.flags(conn)
        conn.send(
            encode(
                {
                    "type": "ack",
                    "seq": seq,
                    "move": move,
                    "duplicate": True,
                    "board": board_view(game, hub.elapsed()),
                    "can_hint": flags["can_hint"],
                    "can_finish": flags["can_finish"],
                }
            )
        )

    async def _game_over(self, conn: Conn, hub: RoomHub) -> bool:
        """The player's own game is over: they may watch the others; the race may end
        (or, should all those still playing be away, the sweeper ends their games)."""
        if not await self._end_if_all_over(hub.code, hub.players, hub.undo):
            await hub.send_boards(conn)
        return True

    async def _end_if_all_over(self, code: str, players: list[str], undo: bool) -> bool:
        """A game of the race ended: the race finishes when every game is over (True),
        else the sweeper looks at those still playing (all away: ended for them)."""
        _, stored, _ = await self.store.rooms.snapshot(code)  # every committed move
        if all(game_over((stored.get(p) or initial_progress())["status"], undo) for p in players):
            await self.rooms.finish(code, "all_over")
            return True
        await self.store.sweeping.partly_over(code, self.clock.now_ms())
        return False

    async def sprint(self, conn: Conn) -> None:
        """The player races this arena race with half its time limit (docs/rules.md,
        "Sprint"): a flag on their seat, changed once by compare-and-set and only while
        their move log is empty (the store checks it in the same step); the room's event
        shows it to everyone in it."""
        hub = player_hub(conn)
        player = conn.player
        assert player is not None
        await self.rooms.change(
            hub.code, lambda r: sprint(r, player, self.clock.now_ms()), unmoved=player
        )

    async def time_out(self, code: str, player: str) -> None:
        """A sprinter's own time limit has passed (each node holding the room sets a timer
        for it): their game, if still on, ends out of time at it, logged as ``timeout``
        under their next seq (one node's write lands; a move stored just before the limit
        is kept, the time-out logged after it); then the race ends if every game is
        over."""
        room = await self.rooms.load(code)
        end = room.sprint_ends_at(player)
        if end is None or room.start_at is None or room.status == FINISHED:
            return
        if self.clock.now_ms() < end:
            return
        for _ in range(10):  # again after a move of theirs stored meanwhile
            v = await self._end_game(room, player, movelog.TIMEOUT, end - room.start_at)
            if v is None or v >= 0:
                break
        # stored here (0: the race had finished; its results judge the game by its limit)
        if v is not None and v > 0:
            await self._end_if_all_over(code, [s.id for s in room.seats], room.settings.undo)

    async def resign_away(self, room: Room, player: str) -> bool:
        """Resign, for the server, a player who is away (the sweeper: node/sweeper.py):
        their game ends as it stood, stored and told to the room as their own
        resignation would be; a sprinter whose own time limit has passed ends out of
        time at it instead. True when their game is over now."""
        assert room.start_at is not None
        end = room.sprint_ends_at(player)
        if end is not None and self.clock.now_ms() >= end:
            v = await self._end_game(room, player, movelog.TIMEOUT, end - room.start_at)
        else:
            at_ms = self.clock.now_ms() - room.start_at
            v = await self._end_game(room, player, movelog.RESIGN, at_ms)
        return v is None or v > 0

    async def _end_game(self, room: Room, player: str, how: str, at_ms: int) -> int | None:
        """End a player's game that is on, for the server (``how``: ``resign`` or
        ``timeout``, at race time ``at_ms``), stored under their next seq and told to the
        room as their own resignation would be: the event version; None when their game
        was over already; 0 when the race had finished; negative when a move of theirs
        was stored meanwhile (nothing was)."""
        assert room.start_at is not None
        log = await self.store.log.read(room.code, player)
        game = room.game_of(log)
        if game.over:
            return None
        seq = len(log) + 1
        entry = movelog.entry(how, at_ms)
        movelog.apply(game, entry)
        board, body, key = events.entered(player, game, seq, entry, at_ms, room.options.rank_by)
        prog = body["progress"]
        stored = self.store.log.append(room.code, player, seq, entry, prog, key, orjson.dumps(body))
        v = await stored
        # the other nodes in the room get it published; this one's hub, here
        own = OwnMove(board, orjson.Fragment(orjson.dumps(board)))
        self.rooms.hubs.feed(room.code, v, body, own)
        return v


def _over(room: RoomView, now: int) -> str:
    """Why a move is refused ``race_over``: the race's end, or a sprinter's own."""
    if room.phase_at(now) == FINISHED:
        return "the race is over"
    return "your sprint's time is up (half the race's time limit)"


def _not_committed(hub: RoomHub, key: tuple[str, int], stored: asyncio.Future[int]) -> None:
    """A commit that failed or stored nothing: the room need not wait for its event."""
    if stored.cancelled() or stored.exception() is not None or stored.result() <= 0:
        hub.committed(key)
