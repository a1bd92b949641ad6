"""One room as seen from one server node: its local connections and its event stream.

A hub holds connection handles and caches only (progress, boards, the public room); the
truth is in Redis. Room events arrive with a version, from this node's own commits or
through Redis pub/sub, possibly out of order: the hub delivers them in version order,
filling any gap from the room's stored events, and sends each connection what its role
may see. A racer whose game is not over gets opponents' progress, never their boards;
spectators, finished players and everyone after the race get boards too.
"""

from __future__ import annotations

import asyncio
import time
from typing import TYPE_CHECKING, Any

import orjson
import structlog

from ..engine import STUCK, Game, Move, board_view, progress
from . import ranking
from .fanout import push as broadcast
from .protocol import dumps, encode, encode_text
from .race import COUNTDOWN, FINISHED, RACING, WAITING, Room

if TYPE_CHECKING:
    from .app import Conn, Node

log = structlog.get_logger("klondike_race.hub")


def now_ms() -> int:
    return time.time_ns() // 1_000_000


def phase_of(public: dict, now: int) -> str:
    """The phase of a public room dict at ``now`` (the same rule as Room.phase)."""
    if public["phase"] == FINISHED:
        return FINISHED
    start_at = public.get("start_at")
    if start_at is None:
        return WAITING
    if now < start_at:
        return COUNTDOWN
    ends_at = public.get("ends_at")
    if ends_at is not None and now >= ends_at:
        return FINISHED
    return RACING


def replay(game: Game, entries: list[str]) -> Game:
    """Apply a stored move log (``TEXT@AT_MS``; moves were checked before they were stored)."""
    for entry in entries:
        text, _, ms = entry.rpartition("@")
        if text == "resign":
            if not game.over:
                game.resign()
        else:
            game.apply(Move.parse(text), int(ms))
    return game


def initial_progress() -> dict:
    return {
        "foundation": 0,
        "moves": 0,
        "reached_moves": 0,
        "reached_ms": 0,
        "status": "playing",
        "score": None,
        "last_ms": 0,
    }


def is_over(progress: dict, undo: bool) -> bool:
    status = progress["status"]
    return status != "playing" and not (status == "stuck" and undo)


class RoomHub:
    def __init__(self, node: Node, code: str) -> None:
        self.node = node
        self.code = code
        self.conns: set[Conn] = set()
        self.version: int | None = None  # None while opening
        self.pending: dict[int, dict] = {}
        self.room: Room | None = None  # node-internal: holds the secret deal
        self.public: dict = {}
        self.progress: dict[str, dict] = {}
        # every player's game, replayed from the move logs and then advanced by each
        # progress event (which names the move, not the board), and the boards of those
        # games; None until a connection here may see boards
        self.games: dict[str, Game] | None = None
        self.logged: dict[str, int] = {}  # player -> log entries in games[player]
        self.boards: dict[str, dict] | None = None
        self.spectators = 0
        self.local_spectators = 0
        self.opened = asyncio.Event()
        self.closed = False
        self._filling: asyncio.Task | None = None
        self._timers: dict[str, asyncio.TimerHandle] = {}
        self._started_sent = False
        self._boards_lock = asyncio.Lock()
        self._refreshing: asyncio.Task | None = None
        self._delayed: set[asyncio.TimerHandle] = set()  # spectators' updates, sent later
        self.last_leaderboard: orjson.Fragment | None = None  # as the last progress sent it
        self._rows_of: dict | None = None  # leaderboard rows, made for this public room
        self._rows_finished = False
        self._rows: dict[str, tuple[dict | None, int, dict]] = {}
        self.analysis: dict | None = None  # a finished race's solver analysis

    # ---- opening and closing ----------------------------------------------------------
    async def open(self) -> None:
        store = self.node.store
        try:
            await store.enter_room(self.code)
            loaded = await store.load_room(self.code)
            if loaded is None:
                raise LookupError(self.code)
            self.room = Room.from_json(loaded[0])
            version, progress, spectators = await store.snapshot(self.code)
            self.public = self.room.public(now_ms())
            self.progress = progress
            self.spectators = spectators
            self.version = version
            if self.room.status == FINISHED:
                self.analysis = await store.load_analysis(self.code)
            if phase_of(self.public, now_ms()) in (RACING, FINISHED):
                self._started_sent = True
            self._schedule()
            self._drain()
        finally:
            self.opened.set()

    async def close(self) -> None:
        self.closed = True
        self._drop_later()
        for timer in self._timers.values():
            timer.cancel()
        if self._filling is not None:
            self._filling.cancel()
        await self.node.store.exit_room(self.code)
        if self.local_spectators:
            self.local_spectators = 0
            await self.node.store.set_spectators(self.code, 0)

    # ---- roles --------------------------------------------------------------------------
    @property
    def undo(self) -> bool:
        return self.room is not None and self.room.settings.undo

    def phase(self) -> str:
        return phase_of(self.public, now_ms())

    def behind(self) -> int:
        """How far behind the race (ms) spectators see it now: the room's
        ``spectator_delay`` while it runs, else 0."""
        delay = self.public.get("spectator_delay") or 0
        return delay * 1000 if delay and self.phase() == RACING else 0

    def _later(self, data: bytes) -> None:
        """Send a spectators' update ``behind()`` from now, to the spectators whose view
        had reached this moment (one who came later got it in their snapshot)."""
        sent = now_ms()

        def send() -> None:
            self._delayed.discard(handle)
            ws = [c.ws for c in self.conns if c.role == "spectator" and c.view_from <= sent]
            if ws:
                broadcast(ws, data, batched=True)

        handle = asyncio.get_running_loop().call_later(self.behind() / 1000, send)
        self._delayed.add(handle)

    def _drop_later(self) -> None:
        for handle in self._delayed:
            handle.cancel()
        self._delayed.clear()

    def sees_boards(self, conn: Conn) -> bool:
        if conn.role == "spectator":
            return True
        if self.phase() == FINISHED:
            return True
        return conn.over

    # ---- events -------------------------------------------------------------------------
    def feed(self, event: dict, skip: Conn | None = None) -> None:
        """An event of this room with its version ``v``, from anywhere, in any order.
        ``skip``: the connection whose own move this is (its ack carries the news)."""
        v = event.get("v")
        if not isinstance(v, int) or self.closed:
            return
        if self.version is not None and v <= self.version:
            return
        if skip is not None:
            event = {**event, "_skip": skip}
        self.pending[v] = event
        self._drain()

    def _drain(self) -> None:
        if self.version is None:
            return
        for v in [v for v in self.pending if v <= self.version]:
            del self.pending[v]
        while self.version + 1 in self.pending:
            self.version += 1
            event = self.pending.pop(self.version)
            try:
                self._deliver(event)
            except Exception:
                log.exception("event delivery failed", room=self.code, v=self.version)
        if self.pending and self._filling is None:
            self._filling = asyncio.create_task(self._fill_gap())

    async def _fill_gap(self) -> None:
        try:
            await asyncio.sleep(0.2)
            if not self.pending or self.version is None:
                return
            oldest = await self.node.store.oldest_event(self.code)
            if oldest is not None and oldest > self.version + 1:
                await self.resync()
                return
            for event in await self.node.store.events_since(self.code, self.version):
                if event["v"] > self.version:
                    self.pending[event["v"]] = event
        except asyncio.CancelledError:
            raise
        except Exception:
            log.exception("event gap fill failed", room=self.code)
        finally:
            self._filling = None
        self._drain()

    async def resync(self) -> None:
        """Reload everything and send each connection a full snapshot."""
        version, progress, spectators = await self.node.store.snapshot(self.code)
        loaded = await self.node.store.load_room(self.code)
        if loaded is not None:
            self.room = Room.from_json(loaded[0])
            self.public = self.room.public(now_ms())
        self.progress, self.spectators, self.version = progress, spectators, version
        self.analysis = await self.node.store.load_analysis(self.code)
        self.pending.clear()
        self.games = self.boards = None
        for conn in list(self.conns):
            await conn.send(await self.snapshot(conn, "resync"))

    def _split(self, skip: Conn | None = None) -> tuple[list, list, list]:
        """Racers (no boards), players who may see boards, and spectators."""
        racers, viewers, spectators = [], [], []
        finished = self.phase() == FINISHED
        for conn in self.conns:
            if conn is skip:
                continue
            if conn.role == "spectator":
                spectators.append(conn.ws)
            elif finished or conn.over:
                viewers.append(conn.ws)
            else:
                racers.append(conn.ws)
        return racers, viewers, spectators

    def _deliver(self, event: dict) -> None:
        kind = event.get("type")
        v = event["v"]
        if kind == "progress":
            player = event["player"]
            self.progress[player] = event["progress"]
            own = event.get("board")  # our own commit's board; others' events have none
            view = self._advance(player, event, own) if self.games is not None else own
            # encoded once for every message of this move (the mover's ack too)
            standings = self.last_leaderboard = orjson.Fragment(dumps(self.leaderboard()))
            racers, viewers, spectators = self._split(event.get("_skip"))
            fields = {"v": v, "player": player, "progress": event["progress"]}
            if racers:
                broadcast(racers, encode("progress", **fields, leaderboard=standings), batched=True)
            if (viewers or spectators) and view is None:
                self._refresh_boards()  # sent in full once the games are loaded
            if viewers or spectators:
                if view is not None:
                    # the board as JSON already, when our own commit made it (encoded once)
                    fields["board"] = event["_board"] if view is own else view
                data = encode("progress", **fields, leaderboard=standings)
                if viewers:
                    broadcast(viewers, data)
                if spectators:
                    if self.behind():
                        self._later(data)
                    else:
                        broadcast(spectators, data, batched=True)
        elif kind == "room":
            self.public = event["room"]
            results = event.get("results")
            if results is not None:
                self.progress = results["progress"]
                self.games, self.boards = None, results["boards"]
                self._drop_later()  # the results show everything: older boards would not
            fields: dict[str, Any] = {
                "v": v,
                "room": self.public,
                "leaderboard": self.leaderboard(),
            }
            if results is not None:
                fields["boards"] = results["boards"]
            broadcast([c.ws for c in self.conns], encode_text("room", **fields))
            self._schedule()
        elif kind == "analysis":
            self.analysis = event["analysis"]
            broadcast(
                [c.ws for c in self.conns], encode_text("analysis", v=v, analysis=self.analysis)
            )
        elif kind == "spectators":
            self.spectators = event["count"]
            broadcast(
                [c.ws for c in self.conns], encode_text("spectators", v=v, count=event["count"])
            )

    def transform(self, event: dict, conn: Conn) -> str | None:
        """A stored event as ``conn`` may see it now (for a resume that replays events)."""
        kind = event.get("type")
        if kind == "progress":
            # no board: a connection that sees boards resumes with a full welcome instead
            fields = {"v": event["v"], "player": event["player"], "progress": event["progress"]}
            return encode_text("progress", **fields)
        if kind == "room":
            fields = {"v": event["v"], "room": event["room"]}
            if "results" in event:
                fields["boards"] = event["results"]["boards"]
            return encode_text("room", **fields)
        if kind == "spectators":
            return encode_text("spectators", v=event["v"], count=event["count"])
        if kind == "analysis":
            return encode_text("analysis", v=event["v"], analysis=event["analysis"])
        return None

    # ---- views ------------------------------------------------------------------------
    def leaderboard(self, progress: dict[str, dict] | None = None) -> list[dict]:
        """The room's standings, ranked as RULES.md says, from ``progress`` (default: the
        latest). A row is made again only when its player's progress changed (a move
        changes one player's)."""
        public = self.public
        finished = self.phase() == FINISHED
        if self._rows_of is not public or self._rows_finished != finished:
            self._rows_of, self._rows_finished, self._rows = public, finished, {}
        rank_by = public.get("rank_by", "progress")
        rows: dict = self._rows if progress is None else {}
        progress = self.progress if progress is None else progress
        keys = []
        for p in public.get("players", ()):
            pid = p["id"]
            known = progress.get(pid)
            cached = rows.get(pid)
            if cached is None or cached[0] is not known:
                prog = known or initial_progress()
                status = prog["status"]
                if finished and status == "playing" and public.get("end_reason") == "time_limit":
                    status = "out_of_time"
                row = {
                    "player": pid,
                    "name": p["name"],
                    "foundation": prog["foundation"],
                    "moves": prog["moves"],
                    "reached_moves": prog["reached_moves"],
                    "reached_ms": prog["reached_ms"],
                    "status": status,
                    "score": prog.get("score"),
                }
                key = ranking.rank_key(prog, rank_by, prog.get("last_ms", 0))
                cached = rows[pid] = (known, key, row)
            keys.append((pid, cached[1]))
        return [{**rows[pid][2], "rank": rank} for pid, rank, _ in ranking.ranks(keys)]

    async def _replay_logs(self, until: int | None = None) -> dict[str, tuple[Game, int]]:
        """Every player's game replayed from their move log (only the moves made by race
        time ``until`` ms, if given), with the number of log entries it holds."""
        assert self.room is not None
        out = {}
        for p in self.public.get("players", ()):
            log = await self.node.store.moves(self.code, p["id"])
            if until is not None:
                log = [e for e in log if int(e.rpartition("@")[2]) <= until]
            out[p["id"]] = replay(Game(self.room.game_deal, self.room.settings), log), len(log)
        return out

    async def ensure_boards(self) -> dict[str, dict]:
        """Every player's board, from games replayed from the move logs when not cached."""
        async with self._boards_lock:
            if self.boards is None:
                replayed = await self._replay_logs()
                # events delivered while the logs were read are in them (a move is logged
                # before its event exists); later ones advance these games
                elapsed = self.elapsed()
                self.games = {pid: game for pid, (game, _) in replayed.items()}
                self.logged = {pid: n for pid, (_, n) in replayed.items()}
                self.boards = {pid: board_view(g, elapsed) for pid, g in self.games.items()}
            return self.boards

    async def _as_of(self, elapsed: int) -> tuple[dict[str, dict], dict[str, dict]]:
        """Every player's progress and board at race time ``elapsed`` (ms), replayed
        from the move logs: what a delayed spectator may see."""
        elapsed = max(0, elapsed)
        progresses, boards = {}, {}
        for pid, (game, _) in (await self._replay_logs(elapsed)).items():
            last_ms = game.times[-1] if game.times else 0
            progresses[pid] = {**progress(game, elapsed), "last_ms": last_ms}
            boards[pid] = board_view(game, elapsed)
        return progresses, boards

    def _advance(self, player: str, event: dict, own: dict | None) -> dict | None:
        """Play a progress event's move on our copy of the player's game; the board after
        it (``own`` when our commit made it). When our copy is out of step (a missed
        move), the games are reloaded and everyone here who sees boards gets them in
        full: the answer is then ``own``, None for another node's move."""
        assert self.games is not None and self.boards is not None
        game, seq, entry = self.games.get(player), event.get("seq"), event.get("entry")
        logged = self.logged.get(player, 0)
        if game is None or not isinstance(seq, int) or not isinstance(entry, str):
            self._stale()
            return own
        if seq == logged + 1:
            replay(game, [entry])
            self.logged[player] = seq
        elif seq > logged:
            self._stale()
            return own
        # seq <= logged: read with the log already; the board shows the log's later position
        view = own if own is not None else board_view(game, int(entry.rpartition("@")[2]))
        self.boards[player] = view
        return view

    def _stale(self) -> None:
        self.games = self.boards = None
        self._refresh_boards()

    def _refresh_boards(self) -> None:
        """Load the games again, then send everyone here who sees boards all of them."""
        if self._refreshing is not None or self.closed:
            return

        async def refresh() -> None:
            try:
                boards = await self.ensure_boards()
                late = self.behind()  # delayed spectators get boards only as they were
                viewers = [
                    c.ws
                    for c in self.conns
                    if self.sees_boards(c) and not (late and c.role == "spectator")
                ]
                if viewers:
                    broadcast(viewers, encode_text("boards", boards=boards))
            finally:
                self._refreshing = None

        self._refreshing = self.node.spawn(refresh())

    def elapsed(self) -> int:
        start_at = self.public.get("start_at")
        return max(0, now_ms() - start_at) if start_at else 0

    async def snapshot(self, conn: Conn, kind: str = "welcome", **extra: Any) -> str:
        phase = self.phase()
        fields: dict[str, Any] = {
            "v": self.version,
            "role": conn.role,
            "room": {**self.public, "phase": phase},
            "progress": self.progress,
            "leaderboard": self.leaderboard(),
            "spectators": self.spectators,
            "server_time": now_ms(),
            **extra,
        }
        if conn.role == "player" and conn.game is not None:
            fields["player"] = conn.player
            fields["seq"] = conn.game.moves
            if phase in (RACING, FINISHED):
                fields["board"] = board_view(conn.game, self.elapsed())
        late = self.behind() if conn.role == "spectator" else 0
        if conn.role == "spectator":
            conn.view_from = now_ms() - late
        if late:
            # the race as it was ``late`` ms ago, replayed from the logs
            earlier, fields["boards"] = await self._as_of(self.elapsed() - late)
            fields["progress"], fields["leaderboard"] = earlier, self.leaderboard(earlier)
        elif phase in (RACING, FINISHED) and self.sees_boards(conn):
            fields["boards"] = await self.ensure_boards()
        if phase == FINISHED and self.analysis is not None:
            fields["analysis"] = self.analysis
        return encode_text(kind, **fields)

    # ---- timers -------------------------------------------------------------------------
    def _schedule(self) -> None:
        if self.closed:
            return
        now = now_ms()
        start_at = self.public.get("start_at")
        if start_at is not None and not self._started_sent and "start" not in self._timers:
            delay = max(0.0, (start_at - now) / 1000)
            self._timers["start"] = asyncio.get_running_loop().call_later(delay, self._start)
        ends_at = self.public.get("ends_at")
        if ends_at is not None and self.public["phase"] != FINISHED and "end" not in self._timers:
            delay = max(0.0, (ends_at - now) / 1000) + 0.01
            self._timers["end"] = asyncio.get_running_loop().call_later(
                delay, lambda: self.node.spawn(self.node.finish_room(self.code, "time_limit"))
            )

    def _start(self) -> None:
        """The race starts now: everyone here gets their first view at this moment."""
        self._started_sent = True
        if self.closed or self.room is None:
            return
        racers, viewers = [], []
        public = {**self.public, "phase": RACING}
        for conn in self.conns:
            if conn.role == "player" and conn.game is not None:
                racers.append(conn)
            else:
                viewers.append(conn.ws)
        for conn in racers:
            broadcast(
                (conn.ws,),
                encode_text(
                    "start",
                    player=conn.player,
                    board=board_view(conn.game, 0),
                    server_time=now_ms(),
                    room=public,
                ),
            )
        fresh = Game(self.room.game_deal, self.room.settings)
        if fresh.status == STUCK:
            # no card of this deal can ever move (1 Draw 3 deal in 350): every game is over
            # from the start, and nobody could end it with a move
            self.node.spawn(self.node.finish_room(self.code, "all_over"))  # idempotent
        if viewers:
            first = board_view(fresh, 0)
            boards = {p["id"]: first for p in self.public.get("players", ())}
            broadcast(
                viewers, encode_text("start", boards=boards, server_time=now_ms(), room=public)
            )
