"""The WebSocket app: one handler per connection, the node's room registry, HTTP routes.

A ``Node`` is one server process. It keeps connection handles and per-room caches
(``RoomHub``) only; rooms, move logs and leaderboards are in Redis, so any node can serve
any connection. Every client message is decoded by ``protocol.decode``; every rules
decision is the engine's.

Service error reasons (besides protocol.py's and race.py's), in ``error`` messages:
``not_in_room``, ``no_room``, ``not_a_player``, ``already_player``, ``watched_this_race``,
``bad_token``, ``deal_not_allowed``, ``busy``; and for the solver (hint, finish,
winnable-only deals): ``not_in_practice``, ``race_not_over``, ``not_started``,
``race_over``, ``game_over``, ``no_winning_line``, ``unknown``, ``solver_failed``,
``no_winnable_deal``. Moves are answered by ``ack`` or by
``refused`` with the engine's reason or ``not_started``, ``race_over``, ``bad_seq``,
``not_your_game``.
"""

from __future__ import annotations

import asyncio
import contextlib
import hashlib
import hmac
import mimetypes
import multiprocessing
import secrets
import time
from collections.abc import Iterator
from http import HTTPStatus
from pathlib import Path
from typing import Any

import orjson
import redis.asyncio as aioredis
import structlog
from websockets.asyncio.server import Server, ServerConnection, serve
from websockets.datastructures import Headers
from websockets.exceptions import ConnectionClosed
from websockets.http11 import Request, Response

from ..engine import Deal, EngineError, Game, IllegalMove, Move, board_view, progress
from ..solver.pool import SolverPool
from . import fanout, ranking
from . import protocol as P
from .config import Config
from .fanout import push
from .hub import FINISHED, RACING, RoomHub, initial_progress, is_over, now_ms, replay
from .metrics import Metrics
from .race import (
    Room,
    RoomError,
    add_player,
    all_ready,
    finish,
    remove_player,
    set_ready,
    set_rematch,
    start,
)
from .store import CHANNEL, Store

log = structlog.get_logger("klondike_race.app")
ROOT = Path(__file__).resolve().parents[3]


def _hash(secret: str) -> str:
    return hashlib.sha256(secret.encode()).hexdigest()[:32]


class ServiceError(Exception):
    def __init__(self, reason: str, message: str) -> None:
        super().__init__(message)
        self.reason = reason


class Conn:
    """One WebSocket connection: its role, its room, its own game (players only)."""

    __slots__ = (
        "credit",
        "game",
        "hub",
        "id",
        "log",
        "over",
        "player",
        "role",
        "stamp",
        "ticket",
        "view_from",
        "watched",
        "ws",
    )

    def __init__(self, ws: ServerConnection, burst: float) -> None:
        self.ws = ws
        self.id = secrets.token_hex(4)
        self.log = log.bind(conn=self.id)
        self.credit = burst
        self.stamp = time.monotonic()
        self.watched: set[str] = set()
        self.hub: RoomHub | None = None
        self.role: str | None = None  # "player" or "spectator"
        self.player: str | None = None
        self.game: Game | None = None
        self.over = False  # own game over, as acknowledged: may see the others' boards
        self.ticket: str | None = None
        self.view_from = 0  # spectators: the race time (epoch ms) their view starts from

    def spend(self, rate: float, burst: float) -> bool:
        now = time.monotonic()
        self.credit = min(burst, self.credit + (now - self.stamp) * rate) - 1
        self.stamp = now
        return self.credit >= 0

    async def send(self, text: str | bytes) -> None:
        """Queue a message (every server message goes through fanout.push, in order)."""
        push((self.ws,), text)

    def __hash__(self) -> int:
        return id(self)


class Node:
    def __init__(self, config: Config, redis_url: str) -> None:
        self.config = config
        self.id = secrets.token_hex(6)
        self.metrics = Metrics()
        # commands time out (a hung Redis must not hang a player forever); the pub/sub
        # connection waits for messages as long as it takes
        self.redis = aioredis.from_url(redis_url, socket_timeout=10, socket_connect_timeout=5)
        self.sub_redis = aioredis.from_url(redis_url, socket_connect_timeout=5)
        self.store = Store(self.redis, self.id, self.metrics.redis.observe)
        self.hubs: dict[str, RoomHub] = {}
        self.tickets: dict[str, Conn] = {}
        self.server: Server | None = None
        self._tasks: set[asyncio.Task] = set()
        self._listener: asyncio.Task | None = None
        self._pubsub = None
        self.client_dir = Path(config.client_dir) if config.client_dir else ROOT / "client"
        self._solver: SolverPool | None = None
        self._solver_executor: Any = None
        self._solver_jobs = 0  # hint, finish and seed searches queued or running here
        self.stopping = False

    def solver(self) -> SolverPool:
        """The node's solver pool: worker processes, created on first use."""
        if self._solver is None:
            from concurrent.futures import ProcessPoolExecutor

            # forkserver: workers are not forked from this threaded, event-looping process
            self._solver_executor = ProcessPoolExecutor(
                max_workers=max(1, self.config.solver_workers),
                mp_context=multiprocessing.get_context("forkserver"),
            )
            self._solver = SolverPool(executor=self._solver_executor)
        return self._solver

    # ---- lifecycle ----------------------------------------------------------------------
    async def start(self) -> int:
        await self.redis.ping()
        fanout.batch_interval = self.config.spectator_batch_ms / 1000
        await self.store.heartbeat()
        self.spawn(self._heartbeat())
        self.spawn(self._sweeper())
        self.store.start()
        self._pubsub = self.sub_redis.pubsub(ignore_subscribe_messages=True)
        await self._pubsub.subscribe(CHANNEL)
        self._listener = asyncio.create_task(self._listen(), name="pubsub")
        self.server = await serve(
            self.handler,
            self.config.host,
            self.config.port,
            process_request=self.http,
            max_size=self.config.max_message,
            compression=None,
            ping_interval=20,
            ping_timeout=20,
            close_timeout=2,
            max_queue=4,
        )
        port = self.server.sockets[0].getsockname()[1]
        log.info("listening", node=self.id, host=self.config.host, port=port)
        return port

    async def stop(self) -> None:
        """Graceful: stop accepting, close connections (1001), write pending moves."""
        self.stopping = True
        if self.server is not None:
            self.server.close()
            await self.server.wait_closed()
        for hub in list(self.hubs.values()):
            with contextlib.suppress(Exception):
                await hub.close()
        self.hubs.clear()
        await self.store.close()
        if self._listener is not None:
            self._listener.cancel()
            with contextlib.suppress(asyncio.CancelledError, Exception):
                await self._listener
        if self._pubsub is not None:
            with contextlib.suppress(Exception):
                await self._pubsub.aclose()
        for task in list(self._tasks):
            task.cancel()
        with contextlib.suppress(Exception):
            await self.store.node_gone()
        if self._solver_executor is not None:
            executor, self._solver_executor, self._solver = self._solver_executor, None, None
            with contextlib.suppress(Exception):
                await asyncio.get_running_loop().run_in_executor(
                    None, lambda: executor.shutdown(wait=True, cancel_futures=True)
                )
        await self.redis.aclose()
        await self.sub_redis.aclose()
        log.info("stopped", node=self.id)

    async def _heartbeat(self) -> None:
        while True:
            await asyncio.sleep(10)
            try:
                await self.store.heartbeat()
            except Exception:
                log.exception("heartbeat failed")

    async def _sweeper(self) -> None:
        """Every ``sweep_interval_s``: mark the rooms where this node has players as
        active, then (on one node at a time) close the rooms nobody plays any more."""
        interval = self.config.sweep_interval_s
        while True:
            await asyncio.sleep(interval)
            try:
                await self.store.touch(
                    [c for c, h in self.hubs.items() if any(x.role == "player" for x in h.conns)],
                    now_ms(),
                )
                if await self.store.sweep_lock(self.id, max(1, int(interval * 900))):
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
        race whose analysis is overdue (the node making it died) is analysed here."""
        now = now_ms()
        cfg = self.config
        before = now - 1000 * min(cfg.abandoned_s, cfg.waiting_abandoned_s)
        closed = 0
        for code in await self.store.idle_rooms(before):
            loaded = await self.store.load_room(code)
            if loaded is None:  # its keys expired
                await self.store.untrack(code)
                continue
            room = Room.from_json(loaded[0])
            idle = now - (await self.store.last_seen(code) or now)
            phase = room.phase(now)
            reason = None
            if phase == FINISHED:
                if room.status != FINISHED:  # the time limit passed with nobody there
                    reason = "time_limit"
                else:
                    await self.store.untrack(code)
            elif phase == "waiting":
                if idle >= cfg.waiting_abandoned_s * 1000:
                    reason = "abandoned"
            elif idle >= cfg.abandoned_s * 1000 and room.time_limit is None:
                reason = "abandoned"
            if reason is None:
                continue
            try:
                if phase == "waiting":
                    await self.room_op(code, lambda r: finish(r, now_ms(), "abandoned"))
                else:
                    await self.finish_room(code, reason)
            except (ServiceError, RoomError):
                continue
            closed += 1
            log.info("room swept", room=code, phase=phase, reason=reason, idle_ms=idle)
        for code in await self.store.claim_analyses(now):
            loaded = await self.store.load_room(code)
            if loaded is not None and await self.store.load_analysis(code) is None:
                log.info("race analysed again: its analysis was never stored", room=code)
                self.spawn(self._analyse(Room.from_json(loaded[0])))
        return closed

    def spawn(self, coro: Any) -> asyncio.Task:
        task = asyncio.get_running_loop().create_task(coro)
        self._tasks.add(task)
        task.add_done_callback(self._task_done)
        return task

    def _task_done(self, task: asyncio.Task) -> None:
        self._tasks.discard(task)
        if not task.cancelled() and task.exception() is not None:
            log.error("background task failed", exc_info=task.exception())

    async def _listen(self) -> None:
        assert self._pubsub is not None
        while True:
            try:
                async for message in self._pubsub.listen():
                    if message.get("type") != "message":
                        continue
                    key, _, payload = message["data"].partition(b"|")
                    key = key.decode()
                    if key.startswith("mm:"):
                        self._matched(key[3:], orjson.loads(payload))
                        continue
                    hub = self.hubs.get(key)
                    if hub is not None:
                        hub.feed(orjson.loads(payload))
            except asyncio.CancelledError:
                raise
            except Exception:
                log.exception("pubsub listener failed; reconnecting")
                await asyncio.sleep(0.5)
                with contextlib.suppress(Exception):
                    await self._pubsub.subscribe(CHANNEL)

    # ---- HTTP -----------------------------------------------------------------------------
    def http(self, connection: ServerConnection, request: Request) -> Response | None:
        if request.headers.get("Upgrade", "").lower() == "websocket":
            return None
        path = request.path.split("?", 1)[0]
        if path == "/healthz":
            return _response(200, b"ok\n", "text/plain")
        if path == "/metrics":
            self.metrics.rooms = len(self.hubs)
            return _response(200, self.metrics.render().encode(), "text/plain; version=0.0.4")
        return self._static(path)

    def _static(self, path: str) -> Response:
        if path in ("/", ""):
            path = "/index.html"
        base = self.client_dir.resolve()
        target = (base / path.lstrip("/")).resolve()
        if base in target.parents and target.is_file():
            kind = mimetypes.guess_type(target.name)[0] or "application/octet-stream"
            return _response(200, target.read_bytes(), kind)
        if path == "/index.html":
            return _response(200, _PLACEHOLDER, "text/html; charset=utf-8")
        return _response(404, b"not found\n", "text/plain")

    # ---- connections ------------------------------------------------------------------------
    async def handler(self, ws: ServerConnection) -> None:
        conn = Conn(ws, self.config.burst)
        self.metrics.connections += 1
        self.metrics.connections_total += 1
        try:
            async for raw in ws:
                if not conn.spend(self.config.rate, self.config.burst):
                    conn.log.warning("rate limit: closing")
                    await ws.close(1008, "message rate limit exceeded")
                    break
                t0 = time.perf_counter()
                try:
                    message = P.decode(raw)
                except P.ProtocolError as err:
                    self.metrics.error(err.reason)
                    await conn.send(P.error(err.reason, str(err), err.about))
                    continue
                try:
                    await self.dispatch(conn, message, t0)
                except (ServiceError, RoomError) as err:
                    self.metrics.error(err.reason)
                    await conn.send(P.error(err.reason, str(err), _type_of(message)))
        except ConnectionClosed:
            pass
        except Exception:
            conn.log.exception(
                "connection failed", room=conn.hub and conn.hub.code, player=conn.player
            )
            await ws.close(1011, "internal error")
        finally:
            self.metrics.connections -= 1
            try:
                await self.detach(conn)
                if conn.ticket is not None:
                    self.tickets.pop(conn.ticket, None)
                    await self.store.quick_cancel(conn.ticket)
            except Exception:
                conn.log.exception("cleanup failed")

    async def dispatch(self, conn: Conn, m: P.Message, t0: float) -> None:
        if isinstance(m, P.MoveRequest):
            await self.on_move(conn, m, t0)
        elif isinstance(m, P.Resign):
            await self.on_resign(conn, m, t0)
        elif isinstance(m, P.Ping):
            await conn.send(P.encode_text("pong", id=m.id, server_time=now_ms()))
        elif isinstance(m, P.Create):
            await self.on_create(conn, m)
        elif isinstance(m, P.Join):
            await self.on_join(conn, m)
        elif isinstance(m, P.Watch):
            await self.on_watch(conn, m)
        elif isinstance(m, P.Resume):
            await self.on_resume(conn, m.token, m.since)
        elif isinstance(m, P.Ready):
            await self.on_ready(conn, m.ready)
        elif isinstance(m, P.Start):
            await self.on_start(conn)
        elif isinstance(m, P.Leave):
            await self.on_leave(conn)
        elif isinstance(m, P.Quick):
            await self.on_quick(conn, m.name)
        elif isinstance(m, P.Rooms):
            await self.on_rooms(conn)
        elif isinstance(m, P.Hint):
            await self.on_hint(conn)
        elif isinstance(m, P.Finish):
            await self.on_finish(conn)
        elif isinstance(m, P.Rematch):
            await self.on_rematch(conn)

    # ---- rooms ----------------------------------------------------------------------------
    async def hub_for(self, code: str) -> RoomHub:
        hub = self.hubs.get(code)
        if hub is None:
            hub = self.hubs[code] = RoomHub(self, code)
            try:
                await hub.open()
            except BaseException:
                self.hubs.pop(code, None)
                with contextlib.suppress(Exception):
                    await self.store.exit_room(code)
                raise
        else:
            await hub.opened.wait()
        return hub

    async def attach(
        self, conn: Conn, code: str, role: str, player: str | None = None, game: Game | None = None
    ) -> RoomHub:
        await self.detach(conn)
        try:
            hub = await self.hub_for(code)
        except LookupError:
            raise ServiceError("no_room", f"no room {code}") from None
        conn.hub, conn.role, conn.player, conn.game = hub, role, player, game
        conn.over = game is not None and game.over
        conn.log = log.bind(conn=conn.id, room=code, player=player, role=role)
        hub.conns.add(conn)
        if role == "player":
            await self.store.touch([code], now_ms())
        if role == "spectator":
            conn.watched.add(code)
            await self._count_spectators(hub)
        return hub

    async def _count_spectators(self, hub: RoomHub) -> None:
        count = sum(1 for c in hub.conns if c.role == "spectator")
        if count != hub.local_spectators:
            hub.local_spectators = count
            v, total = await self.store.set_spectators(hub.code, count)
            hub.feed({"v": v, "type": "spectators", "count": total})

    async def detach(self, conn: Conn) -> None:
        hub = conn.hub
        if hub is None:
            return
        conn.hub, conn.role, conn.player, conn.game = None, None, None, None
        hub.conns.discard(conn)
        if not hub.conns and self.hubs.get(hub.code) is hub:
            del self.hubs[hub.code]
            await hub.close()
        else:
            await self._count_spectators(hub)

    def _feed(self, hub: RoomHub | None, v: int, body: dict | None) -> None:
        """Deliver our own committed event locally (other nodes get it by pub/sub)."""
        if hub is not None and v > 0 and body is not None:
            hub.feed({"v": v, **body})

    async def room_op(self, code: str, change: Any, results: bool = False) -> Room:
        """Load the room, apply the pure transition ``change(room) -> room``, store it with
        compare-and-set, emit the room event; retried when another node got there first."""
        for _ in range(50):
            loaded = await self.store.load_room(code)
            if loaded is None:
                raise ServiceError("no_room", f"no room {code}")
            room = Room.from_json(loaded[0])
            new = change(room)
            if new == room:
                return room
            v = await self._commit_room(code, loaded[1], new, results)
            if v >= 0:
                return new
        raise ServiceError("busy", "the room is busy, try again")

    async def _commit_room(self, code: str, rev: int, room: Room, results: bool) -> int:
        now = now_ms()
        body: dict[str, Any] = {"type": "room", "room": room.public(now)}
        ranks: list = []
        if results:
            body["results"], ranks = await self._results(room)
        v = await self.store.cas_room(code, rev, room.to_json(), room.status, P.dumps(body), ranks)
        if v > 0:
            if rev == 0:
                await self.store.track(code, now)
            if room.status == FINISHED or room.private:
                await self.store.set_public(code, room.created, False)
            if room.status == FINISHED:
                players = [s.id for s in room.seats]
                await self.store.expire_room(code, players, self.config.keep_finished_s)
                await self.store.untrack(code)
            self._feed(self.hubs.get(code), v, body)
            if (
                results
                and room.status == FINISHED
                and room.seats
                and not room.parent
                and room.end_reason != "abandoned"
            ):
                # due again (by the sweeper, on any node) should this node die first
                grace = self.config.solver_analysis_s * (len(room.seats) + 1) + 30
                await self.store.analysis_due(code, now_ms() + int(grace * 1000))
                self.spawn(self._analyse(room))  # once: only this CAS finished the race
        return v

    async def _analyse(self, room: Room) -> None:
        """The solver's analysis of a finished race, off the event loop, stored once and
        sent to everyone in the room as an ``analysis`` event."""
        if self.stopping:
            return
        try:
            players_moves = [
                _solver_moves(await self.store.moves(room.code, seat.id)) for seat in room.seats
            ]
            out = await self.solver().analyse(
                room.deal,
                room.settings.to_dict(),
                players_moves,
                max_seconds=self.config.solver_analysis_s,
            )
        except Exception:
            if not self.stopping:
                log.exception("analysis failed", room=room.code)
            return
        analysis = {
            "par": out["par"],
            "deal": out["deal"]["result"],
            "players": {s.id: r for s, r in zip(room.seats, out["players"], strict=True)},
        }
        v = await self.store.save_analysis(room.code, analysis)
        self._feed(self.hubs.get(room.code), v, {"type": "analysis", "analysis": analysis})

    async def _results(self, room: Room) -> tuple[dict, list]:
        """Final boards and progress, replayed from the logs (out of time where it applies)."""
        boards, progs, ranks = {}, {}, []
        elapsed = (room.ended or now_ms()) - (room.start_at or 0)
        for seat in room.seats:
            game = replay(
                Game(room.game_deal, room.settings), await self.store.moves(room.code, seat.id)
            )
            if room.end_reason == "time_limit" and not game.over:
                game.time_out()
            last_ms = game.times[-1] if game.times else 0
            prog = {**progress(game, elapsed), "last_ms": last_ms}
            progs[seat.id] = prog
            boards[seat.id] = board_view(game, elapsed)
            ranks.append((seat.id, prog, ranking.rank_key(prog, room.rank_by, last_ms)))
        return {"progress": progs, "boards": boards}, ranks

    async def finish_room(self, code: str, reason: str) -> None:
        await self.room_op(code, lambda r: finish(r, now_ms(), reason), results=True)

    def _new_token(self) -> tuple[str, str]:
        secret = secrets.token_urlsafe(18)
        return secret, _hash(secret)

    async def on_create(self, conn: Conn, m: P.Create) -> None:
        deal = None
        if m.deal is not None:
            if not self.config.dev:
                raise ServiceError("deal_not_allowed", "explicit deals need a dev server")
            try:
                deal = Deal.from_json(m.deal).to_json()
            except EngineError as err:
                raise ServiceError("bad_field", f"create: deal: {err}") from None
            if m.winnable_only and "seed" not in deal:
                raise ServiceError("bad_field", "create: winnable_only needs a seeded deal")
        room, pid, secret = await self._new_room(
            m.name,
            m.settings,
            m.capacity,
            m.private,
            m.time_limit,
            m.rank_by,
            m.practice,
            m.winnable_only,
            deal,
            spectator_delay=m.spectator_delay,
        )
        await self._enter_as_player(conn, room, pid, f"{room.code}.{pid}.{secret}")

    async def _new_room(
        self,
        name: str,
        settings: P.Settings,
        capacity: int,
        private: bool,
        time_limit: int | None,
        rank_by: str,
        practice: bool = False,
        winnable_only: bool = False,
        deal: dict | None = None,
        parent: str | None = None,
        spectator_delay: int = 0,
    ) -> tuple[Room, str, str]:
        """Store a new room with its first player seated: (room, player id, secret).
        A practice room starts at once; a winnable-only room deals the first seed from a
        random (or the given) one that the solver proves winnable."""
        if deal is None:
            deal = {"seed": secrets.token_hex(8)}
        if winnable_only:
            deal = {"seed": await self._winnable_seed(deal["seed"], settings)}
        secret, token_hash = self._new_token()
        now = now_ms()
        if practice:
            capacity, private = 1, True
        for _ in range(20):
            code = "".join(secrets.choice(P.CODE_ALPHABET) for _ in range(P.CODE_LENGTH))
            room = Room(
                code,
                now,
                settings,
                deal,
                secrets.token_hex(16),
                capacity,
                private,
                time_limit,
                rank_by,
                practice=practice,
                winnable_only=winnable_only,
                parent=parent,
                spectator_delay=spectator_delay,
            )
            room, pid = add_player(room, name, token_hash, now)
            if practice:
                room = start(room, now, 0)
            if await self._commit_room(code, 0, room, False) >= 0:
                break
        else:
            raise ServiceError("busy", "could not allocate a room code")
        if not room.private:
            await self.store.set_public(code, now, True)
        return room, pid, secret

    @contextlib.contextmanager
    def _solver_slot(self) -> Iterator[None]:
        """Hints, finishes and winnable-only deals queue for the solver's workers; beyond
        ``solver_queue`` of them at once the next is refused (``busy``)."""
        if self._solver_jobs >= self.config.solver_queue:
            raise ServiceError("busy", "the solver is busy; try again in a moment")
        self._solver_jobs += 1
        try:
            yield
        finally:
            self._solver_jobs -= 1

    async def _winnable_seed(self, start_seed: str, settings: P.Settings) -> str:
        try:
            with self._solver_slot():
                found = await self.solver().winnable_seed(
                    start_seed,
                    settings.to_dict(),
                    max_seconds=self.config.solver_seed_s,
                    max_tries=self.config.solver_seed_tries,
                )
        except ServiceError:
            raise
        except Exception:
            log.exception("winnable seed search failed")
            raise ServiceError("solver_failed", "the solver failed; try again") from None
        if found is None:
            raise ServiceError(
                "no_winnable_deal",
                f"no deal proven winnable within {self.config.solver_seed_tries} tries",
            )
        return str(found["seed"])

    async def _enter_as_player(
        self,
        conn: Conn,
        room: Room,
        pid: str,
        token: str | None,
        entries: list[str] | None = None,
        since: int | None = None,
    ) -> None:
        game = Game(room.game_deal, room.settings)
        if entries:
            replay(game, entries)
        if room.end_reason == "time_limit" and room.status == FINISHED and not game.over:
            game.time_out()
        hub = await self.attach(conn, room.code, "player", pid, game)
        if (
            hub.phase() == FINISHED
            and not game.over
            and hub.public.get("end_reason") == ("time_limit")
        ):
            game.time_out()
        conn.log.info("player in room", seq=game.moves)
        extra: dict[str, Any] = {"token": token} if token else {}
        if since is not None and await self._send_missed(conn, hub, since):
            return
        await conn.send(await hub.snapshot(conn, "welcome", **extra))

    async def _send_missed(self, conn: Conn, hub: RoomHub, since: int) -> bool:
        """Resume with only the events missed since ``since``, when they are still kept."""
        assert hub.version is not None
        if since > hub.version:
            return False
        oldest = await self.store.oldest_event(hub.code)
        if since < hub.version and (oldest is None or oldest > since + 1):
            return False
        events = await self.store.events_since(hub.code, since)
        if hub.sees_boards(conn) and any(e.get("type") == "progress" for e in events):
            return False  # stored events carry no boards: a full welcome has them all
        fields: dict[str, Any] = {
            "v": since,
            "role": conn.role,
            "server_time": now_ms(),
            "room": {**hub.public, "phase": hub.phase()},
        }
        if conn.role == "player" and conn.game is not None:
            fields.update(player=conn.player, seq=conn.game.moves)
            if hub.phase() in (RACING, FINISHED):
                fields["board"] = board_view(conn.game, hub.elapsed())
        await conn.send(P.encode_text("resumed", **fields))
        for event in events:
            if event["v"] <= hub.version:
                text = hub.transform(event, conn)
                if text is not None:
                    await conn.send(text)
        return True

    async def on_join(self, conn: Conn, m: P.Join) -> None:
        if m.code in conn.watched:
            raise ServiceError(
                "watched_this_race", "a connection that watched this race cannot join it"
            )
        secret, token_hash = self._new_token()
        seat: list[str] = []

        def change(room: Room) -> Room:
            new, pid = add_player(room, m.name, token_hash, now_ms())
            seat[:] = [pid]
            return new

        room = await self.room_op(m.code, change)
        await self._enter_as_player(conn, room, seat[0], f"{m.code}.{seat[0]}.{secret}")

    async def on_watch(self, conn: Conn, m: P.Watch) -> None:
        if conn.hub is not None and conn.hub.code == m.code and conn.role == "player":
            raise ServiceError("already_player", "you are a player of this room")
        loaded = await self.store.load_room(m.code)
        if loaded is None:
            raise ServiceError("no_room", f"no room {m.code}")
        parent_code = Room.from_json(loaded[0]).parent
        parent = await self.store.load_room(parent_code) if parent_code else None
        if parent is not None and Room.from_json(parent[0]).phase(now_ms()) != FINISHED:
            # a continuation plays out the race's deal: nobody watches it while the race runs
            raise ServiceError(
                "race_in_progress", f"room {m.code} continues race {parent_code}, still running"
            )
        hub = await self.attach(conn, m.code, "spectator")
        await conn.send(await hub.snapshot(conn, "welcome"))

    async def on_resume(self, conn: Conn, token: str, since: int | None) -> None:
        code, _, rest = token.partition(".")
        pid, _, secret = rest.partition(".")
        loaded = await self.store.load_room(code) if len(code) == P.CODE_LENGTH else None
        room = Room.from_json(loaded[0]) if loaded else None
        seat = room.seat(pid) if room else None
        if room is None or seat is None or not hmac.compare_digest(seat.token_hash, _hash(secret)):
            raise ServiceError("bad_token", "unknown or invalid token")
        entries = await self.store.moves(code, pid)
        await self._enter_as_player(conn, room, pid, None, entries, since)

    def _player_hub(self, conn: Conn) -> RoomHub:
        if conn.hub is None:
            raise ServiceError("not_in_room", "join or create a room first")
        if conn.role != "player":
            raise ServiceError("not_a_player", "spectators cannot act on games")
        return conn.hub

    async def on_ready(self, conn: Conn, ready: bool) -> None:
        hub = self._player_hub(conn)
        countdown = self.config.countdown_ms

        def change(room: Room) -> Room:
            new = set_ready(room, conn.player, ready, now_ms())
            return start(new, now_ms(), countdown) if all_ready(new) else new

        await self.room_op(hub.code, change)

    async def on_start(self, conn: Conn) -> None:
        hub = self._player_hub(conn)
        await self.room_op(
            hub.code, lambda r: start(r, now_ms(), self.config.countdown_ms, conn.player)
        )

    async def on_leave(self, conn: Conn) -> None:
        hub = conn.hub
        if hub is None:
            raise ServiceError("not_in_room", "not in a room")
        if conn.role == "player" and hub.phase() == "waiting":
            pid = conn.player
            await self.room_op(hub.code, lambda r: remove_player(r, pid, now_ms()))
        await self.detach(conn)
        await conn.send(P.encode_text("left", code=hub.code))

    async def on_rooms(self, conn: Conn) -> None:
        now = now_ms()
        rooms = []
        for state in await self.store.list_public():
            public = Room.from_json(state).public(now)
            if public["phase"] == FINISHED:  # its time limit passed: not a live race
                continue
            rooms.append(
                {
                    k: public[k]
                    for k in (
                        "code",
                        "phase",
                        "settings",
                        "capacity",
                        "time_limit",
                        "rank_by",
                        "players",
                    )
                }
            )
        await conn.send(P.encode_text("rooms", rooms=rooms))

    async def on_quick(self, conn: Conn, name: str) -> None:
        await self.detach(conn)
        got = await self.store.quick_pop()
        if got is None or got[0] == conn.ticket:
            conn.ticket = secrets.token_hex(12)
            self.tickets[conn.ticket] = conn
            await self.store.quick_push(conn.ticket, name)
            await conn.send(P.encode_text("queued"))
            return
        other_ticket, other_name = got
        now = now_ms()
        secret1, hash1 = self._new_token()
        secret2, hash2 = self._new_token()
        for _ in range(20):
            code = "".join(secrets.choice(P.CODE_ALPHABET) for _ in range(P.CODE_LENGTH))
            room = Room(
                code,
                now,
                P.Settings(),
                {"seed": secrets.token_hex(8)},
                secrets.token_hex(16),
                quick=True,
            )
            room, other = add_player(room, other_name, hash1, now)
            room, me = add_player(room, name, hash2, now)
            room = start(room, now, self.config.countdown_ms)
            if await self._commit_room(code, 0, room, False) >= 0:
                break
        else:
            raise ServiceError("busy", "could not allocate a room code")
        await self.store.set_public(code, now, True)
        await self.store.notify(f"mm:{other_ticket}", {"token": f"{code}.{other}.{secret1}"})
        await self._enter_as_player(conn, room, me, f"{code}.{me}.{secret2}")

    def _matched(self, ticket: str, payload: dict) -> None:
        conn = self.tickets.pop(ticket, None)
        if conn is None:
            return
        conn.ticket = None
        token = payload["token"]

        async def enter() -> None:
            try:
                await self.on_resume(conn, token, None)
                await conn.send(P.encode_text("matched", token=token))
            except Exception:
                conn.log.exception("quick match entry failed")

        self.spawn(enter())

    # ---- moves ----------------------------------------------------------------------------
    def _refuse(self, conn: Conn, seq: int, reason: str, message: str) -> str:
        self.metrics.refused(reason)
        return P.encode_text("refused", seq=seq, reason=reason, message=message)

    async def on_move(self, conn: Conn, m: P.MoveRequest, t0: float) -> None:
        await self._play(conn, m.seq, m.player, t0, m.move)

    async def on_resign(self, conn: Conn, m: P.Resign, t0: float) -> None:
        await self._play(conn, m.seq, m.player, t0, None)

    async def _play(self, conn: Conn, seq: int, player: str | None, t0: float, move) -> bool:
        """Check, store and acknowledge one move (None: resign); True when acknowledged."""
        hub = self._player_hub(conn)
        game = conn.game
        assert game is not None and conn.player is not None
        if player is not None and player != conn.player:
            await conn.send(
                self._refuse(conn, seq, "not_your_game", "you can only play your own game")
            )
            return False
        phase = hub.phase()
        if phase != RACING:
            reason, text = (
                ("race_over", "the race is over")
                if phase == FINISHED
                else ("not_started", "the race has not started")
            )
            await conn.send(self._refuse(conn, seq, reason, text))
            return False
        if seq <= game.moves:
            await self._ack(conn, hub, seq, t0, duplicate=True)
            return False
        if seq != game.moves + 1:
            await conn.send(
                self._refuse(conn, seq, "bad_seq", f"the next sequence number is {game.moves + 1}")
            )
            return False
        at_ms = now_ms() - hub.public["start_at"]
        try:
            if move is None:
                game.resign()
                entry = f"resign@{at_ms}"
            else:
                move = game.play(move, at_ms)
                entry = f"{move}@{at_ms}"
        except IllegalMove as err:
            await conn.send(self._refuse(conn, seq, err.reason, str(err)))
            return False
        board = board_view(game, at_ms)  # it includes the progress fields
        prog = {k: board[k] for k in _PROGRESS_KEYS}
        prog["last_ms"] = at_ms
        key = ranking.rank_key(prog, hub.public.get("rank_by", "progress"), at_ms)
        # the stored event names the move, not the board: a node that shows boards keeps
        # every player's game and plays the move itself (RoomHub.games)
        player = conn.player
        body = {"type": "progress", "player": player, "progress": prog, "seq": seq, "entry": entry}
        v = await self.store.append_move(hub.code, player, seq, entry, prog, key, P.dumps(body))
        if v <= 0:  # not stored: the log moved on elsewhere, or the race ended
            conn.game = await self._reload_game(hub, conn.player)
            conn.over = conn.game.over
            if v == 0:
                await conn.send(self._refuse(conn, seq, "race_over", "the race is over"))
            elif seq <= conn.game.moves:
                await self._ack(conn, hub, seq, t0, duplicate=True)
            else:
                await conn.send(
                    self._refuse(
                        conn, seq, "bad_seq", f"the next sequence number is {conn.game.moves + 1}"
                    )
                )
            return False
        self.metrics.moves_accepted += 1
        if game.over:
            conn.over = True
        # to the others; the ack tells this player
        # the board is encoded once: the ack and the others' updates embed the same JSON
        board_json = orjson.Fragment(orjson.dumps(board))
        hub.feed({"v": v, **body, "board": board, "_board": board_json}, skip=conn)
        leaderboard = hub.last_leaderboard if hub.version == v else hub.leaderboard()
        push(
            (conn.ws,),
            P.encode(
                "ack",
                seq=seq,
                move=entry.rpartition("@")[0],
                v=v,
                board=board_json,
                leaderboard=leaderboard,
            ),
        )
        self.metrics.ack.observe(time.perf_counter() - t0)
        if game.over:
            await self._game_over(conn, hub)
        return True

    # ---- the solver: hints, finish it for me, rematch ------------------------------------
    async def on_hint(self, conn: Conn) -> None:
        """Practice games only: the next move of a winning line from the player's position."""
        hub = self._player_hub(conn)
        assert hub.room is not None and conn.game is not None
        if not hub.room.practice:
            raise ServiceError("not_in_practice", "hints are for practice games only")
        self._check_playing(hub, conn.game)
        out = await self._solve(hub.room, [str(m) for m in conn.game.log], "hint")
        move = Move.parse(out["line"][0])
        await conn.send(
            P.encode_text("hint", result="win", move=str(move), line=out["moves"], **move.to_wire())
        )

    def _check_playing(self, hub: RoomHub, game: Game) -> None:
        phase = hub.phase()
        if phase == FINISHED:
            raise ServiceError("race_over", "the game is over")
        if phase != RACING:
            raise ServiceError("not_started", "the game has not started")
        if game.over:
            raise ServiceError("game_over", f"your game is over ({game.status})")

    async def _solve(self, room: Room, moves: list[str], what: str) -> dict:
        """A winning line from the position after ``moves``, or a ServiceError."""
        budget = self.config.solver_hint_s if what == "hint" else self.config.solver_finish_s
        try:
            with self._solver_slot():
                out = await self.solver().solve(
                    room.deal, room.settings.to_dict(), moves, max_seconds=budget
                )
        except ServiceError:
            raise
        except Exception:
            log.exception("solver failed", room=room.code)
            raise ServiceError("solver_failed", "the solver failed; try again") from None
        if out["result"] == "lose":
            raise ServiceError("no_winning_line", "this position cannot be won any more")
        if out["result"] != "win" or not out["line"]:
            raise ServiceError("unknown", f"no winning line found within {budget:g} s")
        return out

    async def on_finish(self, conn: Conn) -> None:
        """Finish it for me: play the solver's winning line, each move stored, acknowledged
        and counted like any other. In a practice game, while it is on. In a race, only
        once the player's own race is over (their game is over for the ranking, or the
        race has finished): the line is then played in a new practice continuation of
        their final position (its own room, ``parent`` naming the race), so the race's
        logs and ranking never change."""
        hub = self._player_hub(conn)
        assert hub.room is not None and conn.game is not None and conn.player is not None
        room, game = hub.room, conn.game
        if game.status == "won":
            raise ServiceError("game_over", "your game is already won")
        if room.practice:
            self._check_playing(hub, game)
            entries = None
            moves = [str(m) for m in game.log]
        else:
            if hub.phase() != FINISHED and not conn.over:
                raise ServiceError(
                    "race_not_over", "finish it for me is off until your own race is over"
                )
            entries = [
                e
                for e in await self.store.moves(room.code, conn.player)
                if not e.startswith("resign@")
            ]
            moves = _solver_moves(entries)
        out = await self._solve(room, moves, "finish")
        if entries is not None:  # a race: continue in a practice room of its own
            name = next(
                (p["name"] for p in hub.public.get("players", ()) if p["id"] == conn.player),
                "player",
            )
            fork, pid, secret = await self._new_room(
                name,
                room.settings,
                1,
                True,
                None,
                room.rank_by,
                practice=True,
                deal=room.deal,
                parent=room.code,
            )
            copy = replay(Game(fork.game_deal, fork.settings), entries)
            prog = {**progress(copy, 0), "last_ms": 0}
            key = ranking.rank_key(prog, fork.rank_by, 0)
            await self.store.seed_moves(fork.code, pid, entries, prog, key)
            await self._enter_as_player(conn, fork, pid, f"{fork.code}.{pid}.{secret}", entries)
        assert conn.game is not None
        line = out["line"]
        first = conn.game.moves + 1
        await conn.send(P.encode_text("finishing", seq=first, moves=len(line)))
        for text in line:
            if (
                self.stopping
                or conn.game is None
                or not await self._play(
                    conn, conn.game.moves + 1, None, time.perf_counter(), Move.parse(text)
                )
            ):
                break

    async def on_rematch(self, conn: Conn) -> None:
        """A new room on the same settings, once the race is over; everyone in the old
        room is told its code (``room.rematch`` in a ``room`` event); the first rematch
        asked for is the one: later askers join it."""
        hub = self._player_hub(conn)
        if hub.phase() != FINISHED:
            raise ServiceError("race_not_over", "a rematch is for a finished race")
        loaded = await self.store.load_room(hub.code)
        if loaded is None:
            raise ServiceError("no_room", f"no room {hub.code}")
        old = Room.from_json(loaded[0])
        seat = old.seat(conn.player or "")
        name = seat.name if seat else "player"
        if old.rematch is None:
            new, pid, secret = await self._new_room(
                name,
                old.settings,
                old.capacity,
                old.private,
                old.time_limit,
                old.rank_by,
                practice=old.practice,
                winnable_only=old.winnable_only,
                spectator_delay=old.spectator_delay,
            )
            named = await self.room_op(old.code, lambda r: set_rematch(r, new.code, now_ms()))
            if named.rematch == new.code:
                await self._enter_as_player(conn, new, pid, f"{new.code}.{pid}.{secret}")
                return
            # another player's rematch came first: ours is dropped, theirs joined
            await self.room_op(new.code, lambda r: finish(r, now_ms(), "abandoned"))
            old = named
        assert old.rematch is not None
        await self.on_join(conn, P.Join(old.rematch, name))

    async def _reload_game(self, hub: RoomHub, player: str) -> Game:
        assert hub.room is not None
        return replay(
            Game(hub.room.game_deal, hub.room.settings), await self.store.moves(hub.code, player)
        )

    async def _ack(self, conn: Conn, hub: RoomHub, seq: int, t0: float, duplicate: bool) -> None:
        game = conn.game
        assert game is not None
        move = str(game.log[seq - 1]) if seq <= len(game.log) else None
        if move is None:  # a resignation is not in game.log
            move = "resign"
        await conn.send(
            P.encode_text(
                "ack",
                seq=seq,
                move=move,
                duplicate=duplicate,
                board=board_view(game, hub.elapsed()),
            )
        )

    async def _game_over(self, conn: Conn, hub: RoomHub) -> None:
        """The player's own game is over: they may watch the others; the race may end."""
        undo = hub.undo
        _, stored, _ = await self.store.snapshot(hub.code)  # every committed move, any node
        if all(
            is_over(stored.get(p["id"]) or initial_progress(), undo)
            for p in hub.public.get("players", ())
        ):
            await self.finish_room(hub.code, "all_over")
        elif hub.phase() != FINISHED:
            await conn.send(P.encode_text("boards", boards=await hub.ensure_boards()))


def _solver_moves(entries: list[str]) -> list[str]:
    """A stored log (``TEXT@AT_MS``) as the solver's move list; a resignation is dropped
    (the solver searches a resigned position as if play had gone on)."""
    return [e.rpartition("@")[0] for e in entries if not e.startswith("resign@")]


_PROGRESS_KEYS = ("foundation", "moves", "reached_moves", "reached_ms", "status", "score")


def _type_of(message: object) -> str:
    return P.TYPE_OF.get(type(message), "?")


def _response(status: int, body: bytes, content_type: str) -> Response:
    headers = Headers(
        [
            ("Content-Type", content_type),
            ("Content-Length", str(len(body))),
            ("Cache-Control", "no-store"),
        ]
    )
    return Response(status, HTTPStatus(status).phrase, headers, body)


_PLACEHOLDER = b"""<!doctype html><meta charset="utf-8"><title>Klondike Race</title>
<h1>Klondike Race</h1><p>The server is running. Connect a WebSocket client to this address;
docs/protocol.md describes the messages.</p>
"""
