"""One room as seen from one server node: its local connections and its event stream.

A hub holds connection handles and caches only (progress, boards, the room's view:
``RoomView``, what anyone in it may know); the truth is in Redis. Room events arrive with
a version, from this node's own commits or through Redis pub/sub, possibly out of order:
the hub delivers them in version order, filling any gap from the room's stored events,
and sends each connection what domain/visibility.py says its role may see: its sight and
flags, the standings, the boards live or behind the race, and the snapshot a connection
gets on arriving. The hub needs of its node only what ``HubHost`` names.
"""

from __future__ import annotations

import asyncio
import time
from dataclasses import replace
from typing import Any

import orjson
import structlog
from websockets.asyncio.connection import Connection

from ..engine import STUCK, Game, board_view, game_over
from .boards import Boards
from .contracts import HubHost, Recipient
from .delay import Delayed
from .domain import assist, movelog
from .domain import visibility as V
from .domain.progress import initial_progress
from .domain.room import FINISHED, RACING, Room, RoomView
from .roomevent import RoomEvent
from .standings import Standings
from .wire import dumps, encode, events, outbound

log = structlog.get_logger("klondike_race.hub")


class RoomHub:
    def __init__(self, host: HubHost, code: str) -> None:
        self.host = host
        self.clock = host.clock
        self.store = host.store
        self.push = host.fanout.push
        self.code = code
        self.conns: set[Any] = set()  # Recipients
        self.arriving: set[Any] = set()  # getting their welcome: no events for them yet
        self.version: int | None = None  # None while opening
        self.pending: dict[int, RoomEvent] = {}
        self.room: Room | None = None  # node-internal: holds the secret deal
        self.public: RoomView  # the room as its events left it, set once it opens
        self.progress: dict[str, dict[str, Any]] = {}
        self.boards = Boards(host.store.log, code)
        self.spectators = self.local_spectators = 0  # in the room; connected here (stored)
        self._counting = asyncio.Lock()  # one write of local_spectators at a time
        self.opened = asyncio.Event()
        self.closed = False
        self._filling = False  # a gap in the versions is being filled
        self._resyncing = False  # events wait in pending meanwhile
        # (player, seq) of moves this node sent to be stored and has no answer for yet
        self.committing: set[tuple[str, int]] = set()
        self._timers: dict[str, asyncio.TimerHandle] = {}
        self._started_sent = False
        self._refreshing: asyncio.Task[None] | None = None
        self.delayed = Delayed(host.config.delay_hold_kb << 10)  # updates sent behind the race
        self._boards_at = 0  # the race moment (epoch ms) the last catch-up of boards shows
        self.standings = Standings()
        self.analysis: dict[str, Any] | None = None  # a finished race's solver analysis
        self.played: dict[str, Any] = {}  # seat id -> what its game did to its statistics

    # ---- opening and closing ----------------------------------------------------------
    async def open(self) -> None:
        rooms = self.store.rooms
        try:
            await rooms.enter(self.code)
            loaded = await rooms.load(self.code)
            if loaded is None:
                raise LookupError(self.code)
            self.room = Room.from_json(loaded[0])
            version, progress, spectators = await rooms.snapshot(self.code)
            self.public = self.room.view(self.clock.now_ms())
            self.progress = progress
            self.spectators = spectators
            self.version = version
            if self.room.status == FINISHED:
                self.analysis, self.played = await rooms.load_after(self.code)
            if self.phase() in (RACING, FINISHED):
                self._started_sent = True
            if self.phase() == RACING:  # made started (practice, ghost, attempt): no start
                self._finish_if_stuck()
            self._schedule()
            self._drain()
        finally:
            self.opened.set()

    async def close(self) -> None:
        self.closed = True
        self.delayed.drop()
        for timer in self._timers.values():
            timer.cancel()
        await self.store.rooms.exit(self.code)
        await self.count_spectators()

    async def count_spectators(self) -> None:
        """Store this node's count of the room's spectators (0 once closed) and tell the
        room the total. One write at a time, each of the count as it is when its turn
        comes: writes sent together could land in any order and leave an older count."""
        async with self._counting:
            count = 0 if self.closed else sum(1 for c in self.conns if c.role == "spectator")
            if count == self.local_spectators:
                return
            v, total = await self.store.rooms.set_spectators(self.code, count)
            self.local_spectators = count
            self.feed(RoomEvent(v, {"type": "spectators", "count": total}))  # none once closed

    # ---- events -------------------------------------------------------------------------
    def feed(self, event: RoomEvent) -> None:
        """An event of this room, from anywhere, in any order (one of our own moves
        replaces a copy read back from the store)."""
        v = event.v
        if self.closed or (self.version is not None and v <= self.version):
            self._ack(event, self.leaderboard())  # our own move's, the room past it (a resync)
            return
        self.pending[v] = event
        self._drain()

    def _drain(self) -> None:
        if self.version is None or self._resyncing:
            return
        for v in [v for v in self.pending if v <= self.version]:
            del self.pending[v]
        while self.version + 1 in self.pending:
            event = self.pending[self.version + 1]
            body = event.body
            if (
                event.own is None
                and body["type"] == "progress"
                and (body["player"], body["seq"]) in self.committing
            ):
                break  # read back from the store before our commit's answer: that comes with
                # its ack, which must go in this place (the mover gets no progress of theirs)
            self.version += 1
            del self.pending[self.version]
            try:
                self._deliver(event)
            except Exception:
                log.exception("event delivery failed", room=self.code, v=self.version)
        if self.pending and not self._filling:
            self._filling = True
            self.host.spawn(self._fill_gap())

    def committed(self, key: tuple[str, int]) -> None:
        """The store answered (or failed) the commit of move ``key`` (player, seq)."""
        self.committing.discard(key)
        self._drain()

    async def _fill_gap(self, wait: float = 0.2) -> None:
        """Events missing before those pending, read from the room's stored events after a
        moment (they may still arrive; ``events_missed``: at once, pending or not); not
        cancelled when the hub closes, it ends then."""
        try:
            await asyncio.sleep(wait)
            if self.closed or (wait and not self.pending) or self.version is None:
                return
            oldest = await self.store.rooms.oldest_event(self.code)
            if oldest is not None and oldest > self.version + 1:
                await self.resync()
                return
            for stored in await self.store.rooms.events_since(self.code, self.version):
                event = RoomEvent.stored(stored)
                if event is not None and event.v > self.version:
                    self.pending.setdefault(event.v, event)  # (our own, pending, says more)
        except Exception:
            log.exception("event gap fill failed", room=self.code)
        finally:
            self._filling = False
        self._drain()

    async def events_missed(self) -> None:
        """The events this node may have missed (not published to it for a while): read
        from the room's stored events when there are any past the last delivered."""
        if self.closed or self.version is None or self._filling:
            return
        version, _, _ = await self.store.rooms.snapshot(self.code)
        if version > self.version and not self._filling:
            self._filling = True
            self.host.spawn(self._fill_gap(wait=0))

    async def resync(self) -> None:
        """Reload everything and send each connection a full snapshot. Events arriving
        meanwhile wait (``_resyncing``): those past the snapshot's version follow it, in
        order; delivered before it, they would come ahead of an older snapshot."""
        rooms = self.store.rooms
        self._resyncing = True
        try:
            version, progress, spectators = await rooms.snapshot(self.code)
            loaded = await rooms.load(self.code)
            analysis, played = await rooms.load_after(self.code)
            if loaded is not None:
                self.room = Room.from_json(loaded[0])
                self.public = self.room.view(self.clock.now_ms())
            self.progress, self.spectators, self.version = progress, spectators, version
            self.analysis, self.played = analysis, played
            shown = [v for v in self.pending if v <= version]  # the snapshot has them
            acks = [self.pending.pop(v) for v in shown]
            self.boards.drop()
            for conn in list(self.conns):
                self.push((conn.ws,), await self.snapshot(conn, "resync"))
            for event in acks:  # our own moves': after the snapshot that shows them
                self._ack(event, self.leaderboard())
        finally:
            self._resyncing = False
        self._drain()

    def _deliver(self, event: RoomEvent) -> None:
        body, v = event.body, event.v
        if body["type"] == "progress":
            self._deliver_progress(event, body)
        elif body["type"] == "room":
            self._deliver_room(v, body)
        elif body["type"] == "analysis":
            self.analysis = body["analysis"]
            message: outbound.Analysis = {"type": "analysis", "v": v, "analysis": self.analysis}
            self.push([c.ws for c in self.conns], encode(message))
        elif body["type"] == "played":  # each player their own game's, nobody else
            self.played = body["played"]
            for c in self.conns:
                if c.role == "player" and c.player in self.played:
                    own = self.played[c.player]
                    self.push((c.ws,), encode({"type": "played", "v": v, "played": own}))
        elif body["type"] == "spectators":
            self.spectators = body["count"]
            told: outbound.Spectators = {"type": "spectators", "v": v, "count": self.spectators}
            self.push([c.ws for c in self.conns], encode(told))

    def _ack(self, event: RoomEvent, leaderboard: outbound.Standings) -> None:
        """The ack of a connection's move this node stored, if ``event`` is one: sent when
        the room delivers the event (after every earlier one: an event another node
        stored first may still be on its way), never before."""
        own = event.own
        if own is None or own.ack is None or own.mover is None:
            return
        mover, ack = own.mover, own.ack
        if mover not in self.conns:  # it left the room meanwhile (``left`` sent, or another
            return  # room's welcome): an ack now would follow them, with this room's v
        flags = self.flags(mover)
        data = encode(
            {
                "type": "ack",
                "seq": ack.seq,
                "move": ack.move,
                "v": event.v,
                "board": own.board_json,
                "leaderboard": leaderboard,
                "can_hint": flags["can_hint"],
                "can_finish": flags["can_finish"],
            }
        )
        self.push((mover.ws,), data)
        self.host.metrics.ack.observe(time.perf_counter() - ack.t0)

    def _by_delivery(self, kind: str, skip: Any = None) -> dict[V.Delivery, list[Any]]:
        """This room's connections grouped by what they get of an event of ``kind``."""
        groups: dict[V.Delivery, list[Any]] = {}
        phase = self.phase()
        view = self.public.options.spectator_view
        known: dict[tuple[bool, bool], list[Any]] = {}  # (spectator, over) -> its group
        for conn in self.conns:
            if conn is skip:
                continue
            who = (conn.role == "spectator", conn.over)
            group = known.get(who)
            if group is None:
                sight = V.sight(V.role_of(*who), phase, view)
                group = known[who] = groups.setdefault(V.delivery(kind, sight), [])
            group.append(conn)
        return groups

    def _deliver_progress(self, event: RoomEvent, body: events.Progress) -> None:
        v, own = event.v, event.own
        player = body["player"]
        self.progress[player] = body["progress"]
        if self.over(body["progress"]):
            self._seat_over(player)
        view = None if own is None else own.board  # others' events carry no board
        if self.boards.games is not None:
            in_step, view = self.boards.advance(player, body.get("seq"), body.get("entry"), view)
            if not in_step:
                self._refresh_boards()
        else:  # the games may be being made: their logs may have been read before it
            self.boards.arrived(player, body.get("seq"), body.get("entry"))
        # encoded once for every message of this move (the mover's ack too)
        standings = orjson.Fragment(dumps(self.leaderboard()))
        self._ack(event, standings)  # our own commit's: its ack, in its place among the events
        groups = self._by_delivery("progress", None if own is None else own.mover)
        head: outbound.Progress = {
            "type": "progress",
            "v": v,
            "player": player,
            "progress": body["progress"],
        }
        plain = groups.get(V.Delivery.PLAIN)
        if plain:
            data = encode({**head, "leaderboard": standings})
            self.push([c.ws for c in plain], data, batched=True)
        live, later = groups.get(V.Delivery.WITH_BOARD, []), groups.get(V.Delivery.DELAYED)
        outlined = groups.get(V.Delivery.WITH_OUTLINE)
        if not (live or later or outlined):
            return
        if view is None:
            self._refresh_boards()  # sent in full (or outlined) once the games are loaded
        if outlined:  # the board's outline only: no card of it
            if view is None:
                data = encode({**head, "leaderboard": standings})
            else:
                data = encode({**head, "board": V.outline(view), "leaderboard": standings})
            self._send_update(outlined, data)
        if not (live or later):
            return
        if view is None:
            data = encode({**head, "leaderboard": standings})
        else:
            # the board as JSON already, when our own commit made it (encoded once)
            board = own.board_json if own is not None and view is own.board else view
            data = encode({**head, "board": board, "leaderboard": standings})
        self._send_update(live, data)
        if later:
            sent = self.clock.now_ms()
            if not self.delayed.hold(self.behind(), self._send_behind, data, sent):
                self._boards_behind_later(sent)

    def _send_update(self, conns: list[Any], data: bytes) -> None:
        """A move's update with its board: finished players at once; spectators' updates
        may be batched."""
        players = [c.ws for c in conns if c.role == "player"]
        if players:
            self.push(players, data)
        if len(players) < len(conns):
            self.push([c.ws for c in conns if c.role != "player"], data, batched=True)

    def _seat_over(self, player: str) -> None:
        """The player's game ended (a move or a resign on any device): their other
        connections here see the race as a finished player from now on, the others'
        boards first, as the device that ended it does (node/race.py)."""
        for conn in self.conns:
            if conn.player == player and conn.role == "player" and not conn.over:
                conn.over = True
                self.host.spawn(self.send_boards(conn))

    def _send_behind(self, data: bytes, sent: int) -> None:
        """A progress update held back since ``sent`` (epoch ms), to those who see the
        race behind it now and whose view had reached that moment (one who came later got
        it in their snapshot)."""
        ws = [
            c.ws
            for c in self.conns
            if c.view_from <= sent and self.sight(c) is V.Sight.DELAYED_BOARDS
        ]
        if ws:
            self.push(ws, data, batched=True)

    def _boards_behind_later(self, sent: int) -> None:
        """An update beyond what the room may hold for those who see the race behind
        (``KR_DELAY_HOLD_KB``) is not held: they get the boards instead, as of a moment
        no earlier than it, at most one such moment a second."""
        if sent <= self._boards_at:
            return  # a catch-up on its way already shows it
        at = self._boards_at = max(sent, self._boards_at + 1000)

        async def send() -> None:
            ws = [
                c.ws
                for c in self.conns
                if c.view_from <= at and self.sight(c) is V.Sight.DELAYED_BOARDS
            ]
            if ws:
                self.push(ws, encode({"type": "boards", "boards": await self._boards_behind()}))

        self.delayed.call(at - sent + self.behind(), lambda: self.host.spawn(send()))

    def _deliver_room(self, v: int, body: events.Room) -> None:
        self.public = RoomView.from_json(body["room"])
        results = body.get("results")
        if results is not None:
            self.progress = results["progress"]
            self.boards.drop(results["boards"])
            self.delayed.drop()  # the results show everything: older boards would not
        # the phase now: an event made before the countdown ended may arrive after it
        room = self.public.to_json(self.phase())
        leaderboard = self.leaderboard()
        groups: dict[tuple[bool, tuple[bool, bool] | None], list[Connection]] = {}
        for conn in self.conns:  # those who see the race behind get no live standings
            flags = self.flags(conn) if conn.role == "player" else None
            key = None if flags is None else (flags["can_hint"], flags["can_finish"])
            groups.setdefault((self.sight(conn) is V.Sight.DELAYED_BOARDS, key), []).append(conn.ws)
        for (behind, key), ws in groups.items():
            message: outbound.Room = {"type": "room", "v": v, "room": room}
            if not behind:
                message["leaderboard"] = leaderboard
            if results is not None:
                message["boards"] = results["boards"]
            if key is not None:
                message["can_hint"], message["can_finish"] = key
            self.push(ws, encode(message))
        self._schedule()

    def _refresh_boards(self) -> None:
        """Load the games again, then send everyone here who sees live boards all of them."""
        if self._refreshing is not None or self.closed:
            return

        async def refresh() -> None:
            try:
                boards = await self.ensure_boards()
                groups = self._by_delivery("boards")
                live = groups.get(V.Delivery.WITH_BOARD)
                if live:
                    self.push([c.ws for c in live], encode({"type": "boards", "boards": boards}))
                outlined = groups.get(V.Delivery.WITH_OUTLINE)
                if outlined:
                    shown = V.shown(boards, V.Sight.OUTLINES)
                    self.push([c.ws for c in outlined], encode({"type": "boards", "boards": shown}))
            finally:
                self._refreshing = None

        self._refreshing = self.host.spawn(refresh())

    # ---- timers -------------------------------------------------------------------------
    def _schedule(self) -> None:
        if self.closed:
            return
        now = self.clock.now_ms()
        loop = asyncio.get_running_loop()
        start_at = self.public.start_at
        if start_at is not None and not self._started_sent and "start" not in self._timers:
            self._timers["start"] = loop.call_later(max(0.0, (start_at - now) / 1000), self._start)
        ends_at = self.public.ends_at
        if ends_at is not None and self.public.phase != FINISHED and "end" not in self._timers:
            delay = max(0.0, (ends_at - now) / 1000) + 0.01
            self._timers["end"] = loop.call_later(
                delay, lambda: self.host.spawn(self.host.finish_room(self.code, "time_limit"))
            )
        for seat in self.public.players:  # each sprinter's own time limit
            end, key = self.public.sprint_ends_at(seat.id), f"sprint:{seat.id}"
            if end is not None and self.public.phase != FINISHED and key not in self._timers:
                delay = max(0.0, (end - now) / 1000) + 0.01
                self._timers[key] = loop.call_later(delay, self._sprint_over, seat.id)

    def _sprint_over(self, player: str) -> None:
        """A sprinter's own time limit has passed: their game ends out of time, unless it
        is over (every node holding the room asks; one time-out is stored)."""
        if self.closed or self.phase() == FINISHED or self.over(self.progress.get(player)):
            return
        self.host.spawn(self.host.time_out(self.code, player))

    def _finish_if_stuck(self) -> Game:
        """The deal's starting game; when no card of it can ever move (1 Draw 3 deal in
        350), every game is over from the start and nobody could end it with a move: the
        race finishes (idempotent)."""
        assert self.room is not None
        fresh = Game(self.room.game_deal, self.room.settings)
        if fresh.status == STUCK:
            self.host.spawn(self.host.finish_room(self.code, "all_over"))
        return fresh

    def _start(self) -> None:
        """The race starts now: everyone here gets their first view at this moment."""
        self._started_sent = True
        if self.closed or self.room is None:
            return
        public = self.public.to_json(RACING)
        viewers: dict[V.Sight, list[Any]] = {}  # by what they see of the boards
        for conn in self.conns:
            if conn.role == "player" and conn.game is not None and conn.player is not None:
                flags = self.flags(conn)
                start: outbound.Start = {
                    "type": "start",
                    "player": conn.player,
                    "board": board_view(conn.game, 0),
                    "can_hint": flags["can_hint"],
                    "can_finish": flags["can_finish"],
                    "server_time": self.clock.now_ms(),
                    "room": public,
                }
                self.push((conn.ws,), encode(start))
            else:
                viewers.setdefault(self.sight(conn, RACING), []).append(conn.ws)
        fresh = self._finish_if_stuck()
        if viewers:
            first = board_view(fresh, 0)
            boards = dict.fromkeys(self.players, first)
            for sight, ws in viewers.items():
                now = self.clock.now_ms()
                shown = V.shown(boards, sight)
                self.push(
                    ws,
                    encode({"type": "start", "boards": shown, "server_time": now, "room": public}),
                )

    # ---- what each connection sees ----------------------------------------------------
    @property
    def undo(self) -> bool:
        return self.room is not None and self.room.settings.undo

    @property
    def players(self) -> list[str]:
        return [p.id for p in self.public.players]

    def over(self, progress: dict[str, Any] | None) -> bool:
        """Whether a player's game is over, from their latest progress (None: no move)."""
        return game_over((progress or initial_progress())["status"], self.undo)

    def phase(self) -> str:
        return self.public.phase_at(self.clock.now_ms())

    def behind(self) -> int:
        """How far behind the race (ms) spectators see it now: the room's
        ``spectator_delay`` while it runs, else 0."""
        delay = self.public.options.spectator_delay
        return delay * 1000 if delay and self.phase() == RACING else 0

    def sight(self, conn: Recipient, phase: str | None = None) -> V.Sight:
        role = V.role_of(conn.role == "spectator", conn.over)
        return V.sight(role, phase or self.phase(), self.public.options.spectator_view)

    def seat_status(self, conn: Recipient) -> str:
        """The status of ``conn``'s player's game. A connection's copy of it follows only
        that connection's own moves: once the seat's game has ended on another of its
        connections (``conn.over`` while the copy plays on), the seat's last progress says
        how (a game won there has nothing to finish, whichever device asks)."""
        game = conn.game
        assert game is not None
        if conn.over and not game.over:
            return str((self.progress.get(conn.player or "") or {}).get("status", game.status))
        return game.status

    def flags(self, conn: Recipient) -> assist.Flags:
        """A player's ``can_hint`` and ``can_finish`` now (domain/assist.py)."""
        if conn.role != "player" or conn.game is None:
            return {"can_hint": False, "can_finish": False}
        practice = self.public.options.practice
        reveal_at = self.room.reveal_at if self.room is not None else None
        status = self.seat_status(conn)
        return assist.flags(
            practice, self.phase(), status, conn.over, reveal_at, self.clock.now_ms()
        )

    def leaderboard(self, progress: dict[str, dict[str, Any]] | None = None) -> list[Any]:
        """The room's standings from ``progress`` (default: the latest)."""
        finished = self.phase() == FINISHED
        if progress is None:
            return self.standings.rows(self.public, self.progress, finished)
        return Standings().rows(self.public, progress, finished)

    async def ensure_boards(self) -> dict[str, Any]:
        assert self.room is not None
        return await self.boards.ensure(self.room, self.players, self.elapsed())

    async def boards_for(self, conn: Recipient) -> dict[str, Any]:
        """Every board as ``conn`` may see them now: live, outlined, or as they were
        ``spectator_delay`` ago (from then on its updates come that much later)."""
        sight = self.sight(conn)
        if sight is not V.Sight.DELAYED_BOARDS:
            return V.shown(await self.ensure_boards(), sight)
        self.catch_up(conn)
        return await self._boards_behind()

    async def send_boards(self, conn: Recipient) -> None:
        """Send ``conn`` every board it may see now, unless the race is over (the
        results show them) or it has left meanwhile."""
        boards = await self.boards_for(conn)
        if conn in self.conns and self.phase() != FINISHED:
            self.push((conn.ws,), encode({"type": "boards", "boards": boards}))

    async def _boards_behind(self) -> dict[str, Any]:
        assert self.room is not None
        late = self.elapsed() - self.behind()
        return dict((await self.boards.as_of(self.room, self.players, late))[1])

    def catch_up(self, conn: Recipient) -> None:
        """``conn``'s view starts ``spectator_delay`` behind the race now: updates made
        from then on reach it that much later, and once the delay has passed it gets the
        boards again, with any move made before the first such update was on its way."""
        conn.view_from = self.clock.now_ms() - self.behind()

        async def send() -> None:
            if conn in self.conns and self.sight(conn) is V.Sight.DELAYED_BOARDS:
                boards = await self._boards_behind()
                self.push((conn.ws,), encode({"type": "boards", "boards": boards}))

        self.delayed.call(self.behind(), lambda: self.host.spawn(send()))

    def elapsed(self) -> int:
        start_at = self.public.start_at
        return max(0, self.clock.now_ms() - start_at) if start_at else 0

    async def snapshot(
        self, conn: Recipient, kind: str = "welcome", token: str | None = None
    ) -> bytes:
        """Everything ``conn`` may see of the room now, as a ``welcome`` (with the
        ``token`` of a seat just taken) or a ``resync``: the boards are read first (that
        may wait for Redis), then everything else at once, with no wait, so the message is
        the room as of its version ``v``."""
        for _ in range(3):  # again if the race started or finished meanwhile
            sight = self.sight(conn)
            earlier, boards = await self._boards_seen(sight)
            if self.sight(conn) is sight:
                break
        phase = self.phase()
        room = self.room
        if (  # an attempt that ended before its reveal, watched after it
            phase == FINISHED
            and self.public.reveal is None
            and room
            and not room.parent
            and self.clock.now_ms() >= (room.reveal_at or 0)
        ):
            self.public = replace(self.public, reveal=room.reveal())
        assert self.version is not None and conn.role is not None
        seen: outbound.Seen = {
            "v": self.version,
            "role": conn.role,
            "room": self.public.to_json(phase),
            "progress": self.progress,
            "leaderboard": self.leaderboard(),
            "spectators": self.spectators,
            "server_time": self.clock.now_ms(),
        }
        if token:
            seen["token"] = token
        self.add_own(seen, conn, phase)
        if boards is not None:
            seen["boards"] = boards
        if earlier is not None:  # the race as it was ``behind()`` ms ago
            self.catch_up(conn)
            seen["progress"], seen["leaderboard"] = earlier, self.leaderboard(earlier)
        if phase == FINISHED and self.analysis is not None:
            seen["analysis"] = self.analysis
        if phase == FINISHED and conn.role == "player" and conn.player in self.played:
            seen["played"] = self.played[conn.player]
        if kind == "welcome":
            return encode({"type": "welcome", **seen})
        return encode({"type": "resync", **seen})

    async def _boards_seen(
        self, sight: V.Sight
    ) -> tuple[dict[str, Any] | None, dict[str, Any] | None]:
        """(progress, boards) of a snapshot for ``sight``: as of ``behind()`` ago for a
        delayed view (progress None otherwise), boards None when it sees none."""
        if sight is V.Sight.DELAYED_BOARDS:
            assert self.room is not None
            earlier, boards = await self.boards.as_of(
                self.room, self.players, self.elapsed() - self.behind()
            )
            return earlier, dict(boards)
        if self.phase() in (RACING, FINISHED) and V.sees_boards(sight):
            return None, V.shown(await self.ensure_boards(), sight)
        return None, None

    def add_own(self, message: outbound.Own, conn: Recipient, phase: str) -> None:
        """A player's own part of a snapshot, added to ``message``: id, sequence number,
        board, flags (nothing for others)."""
        if conn.role != "player" or conn.game is None or conn.player is None:
            return
        message["player"] = conn.player
        message["seq"] = movelog.logged(conn.game)
        if phase in (RACING, FINISHED):
            message["board"] = board_view(conn.game, self.elapsed())
        flags = self.flags(conn)
        message["can_hint"], message["can_finish"] = flags["can_hint"], flags["can_finish"]
