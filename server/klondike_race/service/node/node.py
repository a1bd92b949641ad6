"""A ``Node`` is one server process: it wires the parts together and runs them.

It keeps connection handles and per-room caches (hubs) only; rooms, move logs and
leaderboards are in Redis, so any node can serve any connection. Room events from other
nodes arrive through Redis pub/sub.
"""

from __future__ import annotations

import asyncio
import secrets
from collections.abc import Awaitable, Callable, Coroutine
from pathlib import Path
from typing import Any

import orjson
import redis.asyncio as aioredis
import structlog
from redis.asyncio.cluster import ClusterNode, RedisCluster
from redis.asyncio.retry import Retry
from redis.asyncio.sentinel import Sentinel, SentinelConnectionPool
from redis.backoff import ExponentialBackoff
from redis.exceptions import ConnectionError as RedisConnectionError
from redis.exceptions import TimeoutError as RedisTimeoutError
from websockets.asyncio.server import Server, serve

from ... import solver
from ..clock import Clock
from ..config import Config
from ..contracts import HubHost
from ..domain.room import Room
from ..fanout import Fanout
from ..http import Api, Routes
from ..metrics import Metrics
from ..roomevent import RoomEvent
from ..store import CHANNEL, Store
from ..store.arenas import ARENA_DUE
from ..store.base import UNAVAILABLE
from ..store.commit import CommitConnection
from ..store.multiplexed import Multiplexed
from ..store.played import PLAYED_DUE
from ..store.slot_scripts import events_channel, node_channel
from ..transport import MessageConnection
from .arena_deals import ArenaDeals
from .arena_table import ArenaTables
from .arenas import Arenas
from .assist import Assist
from .challenges import Challenges
from .conn import Addresses, Conn
from .dispatch import Connections
from .ghosts import Ghosts
from .lobby import Lobby
from .played import PlayedOps
from .players import Players
from .race import Race
from .ratings import RatingOps
from .registry import Attendance, Hubs
from .replays import Replays
from .rooms import RoomOps
from .shards import ShardedEvents
from .solving import Solving
from .sweeper import Sweeper
from .tasks import Background

log = structlog.get_logger("klondike_race.node")
ROOT = Path(__file__).resolve().parents[4]
SESSIONS_CHECK_S = 2.0  # how often ended sessions are looked for (docs/protocol.md)
READY_PROBE_S = 0.5  # how often Redis is asked what /readyz answers (each try as long)
READY_SILENT_S = 1.5  # Redis silent this long: the node is not ready
UNREACHABLE = "redis unreachable"
CLOCK_WARN_MS = 1000  # a machine's clock this far off Redis's is said in the log at start
LISTEN_POLL_S = 1.0  # the pub/sub listener looks whether the node is stopping this often


class Node:
    def __init__(self, config: Config, redis_url: str, clock: Clock | None = None) -> None:
        """A node of ``config`` on ``redis_url``, reading the time from ``clock`` (by
        default a new one: the machine's, shifted by ``KR_CLOCK_OFFSET_MS`` on a dev
        server)."""
        self.config = config
        self.id = secrets.token_hex(6)
        offset = config.clock_offset_ms if config.dev else 0
        self.clock = clock = clock or Clock(offset)
        # commands time out (a hung Redis must not hang a player forever) and are tried
        # again on a broken connection (a Redis restart leaves stale ones in the pool:
        # every script is safe to repeat, its sequence or revision check answers a
        # repeat); the pub/sub connection waits for messages as long as it takes
        self.redis, self.sub_redis, self._sentinel = _clients(config, redis_url)
        self.background = background = Background()
        spawn = background.spawn
        # what is counted before the parts that keep it exist (/metrics, the lobby)
        self.hubs = hubs = Hubs()
        conns: set[Conn] = set()
        self.metrics = metrics = Metrics(lambda: len(conns), lambda: len(hubs))
        # on a Redis Cluster: sharded pub/sub, per room (node/shards.py), and each commit
        # goes per slot (store/moves.py); else the group commit's own connection
        self.shards: ShardedEvents | None = None
        listen: Callable[[str, bool], Awaitable[None]] | None = None
        line = None
        if isinstance(self.redis, RedisCluster):
            self.shards = shards = ShardedEvents(self.redis, self._received, self._resubscribed)

            def listen(code: str, on: bool) -> Awaitable[None]:
                return shards.listen(events_channel(code), on)

        else:
            if config.commit_connection:
                line = _own_connection(config, redis_url, self._sentinel)
            # the other commands on one connection too, unless writes WAIT for replicas
            # (a WAIT would hold up every command behind it there)
            if config.command_connection and not config.replica_acks:
                commands = _own_connection(config, redis_url, self._sentinel, True)
                if commands is not None:
                    self.redis = Multiplexed(self.redis, commands)
        replicas = (config.replica_acks, config.replica_wait_ms)
        self.store = store = Store(
            self.redis, self.id, metrics.redis.observe, replicas, line, listen, clock
        )
        self.fanout = fanout = Fanout(config.spectator_batch_ms / 1000)
        self.solving = solving = Solving(config, store, hubs)
        self.ratings = ratings = RatingOps(store, clock)
        self.played = played = PlayedOps(store, hubs, clock)

        def analyse(room: Room) -> None:
            spawn(solving.analyse(room))

        def finished(room: Room, owed: set[str]) -> None:
            """A race this node finished: its analysis, its ratings, an arena race's
            points and its players' play statistics, each when owed, at once (the
            sweeper does each should this node die first). (``arenas`` is made below: it
            makes rooms through RoomOps.)"""
            if "rooms:analysis" in owed:
                analyse(room)
            if "rooms:rating" in owed:
                spawn(ratings.apply(room.code))
            if ARENA_DUE in owed:
                spawn(arenas.count(room))
            if PLAYED_DUE in owed:
                spawn(played.apply(room.code))

        self.rooms = rooms = RoomOps(config, store, hubs, finished, clock)
        self.race = race = Race(store, rooms, metrics, clock)
        host = HubHost(store, fanout, config, spawn, rooms.finish, race.time_out, clock, metrics)
        self.attendance = attendance = Attendance(hubs, host)
        ghosts = Ghosts(store, hubs, rooms, spawn, clock)
        addresses = Addresses(config.challenge_secret, store.challenges.secret)
        self.lobby = lobby = Lobby(
            config,
            store,
            attendance,
            rooms,
            solving,
            ghosts,
            spawn,
            lambda: len(conns),
            clock,
            addresses,
        )
        self.challenges = challenges = Challenges(
            config, store, rooms, lobby, solving, fanout, clock, addresses
        )
        self.arena_deals = deals = ArenaDeals(config, store, solving, clock)
        self.tables = tables = ArenaTables(config, store, fanout, clock)
        self.arenas = arenas = Arenas(
            config, store, rooms, lobby, tables, spawn, clock, self.id, addresses, deals
        )
        self.sweeper = Sweeper(
            config,
            store,
            hubs,
            rooms,
            analyse,
            ratings.apply,
            race.resign_away,
            arenas.count,
            arenas.finalize_due,
            clock,
            played.apply,
        )
        self.players = players = Players(store, config.password_profile, clock)
        self.replays = replays = Replays(store, clock)
        assist = Assist(solving, rooms, lobby, race, clock)
        self.connections = Connections(
            config,
            metrics,
            fanout,
            attendance,
            lobby,
            race,
            assist,
            players,
            challenges,
            replays,
            arenas,
            conns,
            clock,
        )
        client_dir = Path(config.client_dir) if config.client_dir else ROOT / "client"
        apis: dict[str, Api] = {
            "/api/players/": self.ratings.profile,
            "/api/challenges": self.challenges.http,
            "/api/replays/": self.replays.http,
            "/api/arenas": self.arenas.http,
        }
        self.routes = Routes(client_dir, self.metrics.render, self.unready, apis)
        self.server: Server | None = None
        self.own_server: Server | None = None  # KR_WORKER_PORT
        self._listener: asyncio.Task[None] | None = None
        self._pubsub: Any = None
        self.stopping = False
        # /readyz answers from the last probe (``_probe``), never waiting on Redis
        self._answered = 0.0  # when Redis last answered a probe (event-loop time)
        self._probed: str | None = "not started"  # why the last answer was not ready

    async def unready(self) -> str | None:
        """Why this node cannot serve now, or None, at once (/readyz): as the last probe
        found (``_probe``); unreachable too when no probe has had an answer for
        ``READY_SILENT_S`` (the probes themselves held up)."""
        silent = asyncio.get_running_loop().time() - self._answered
        if self._probed == UNREACHABLE or silent > READY_SILENT_S:
            return f"{UNREACHABLE}: no answer for {silent:.1f} s"
        return self._probed

    async def _probe(self) -> None:
        """``probe_once`` every ``READY_PROBE_S``, whatever a probe meets: one that fails
        in a way not foreseen is logged (the first of a run) and counts as no answer."""
        while True:
            await asyncio.sleep(READY_PROBE_S)
            try:
                await self.probe_once()
            except Exception:
                if self._probed != UNREACHABLE:
                    log.exception("readiness probe failed")
                self._probed = UNREACHABLE

    async def probe_once(self) -> None:
        """Whether Redis answers (within ``READY_PROBE_S``) and, when moves wait for
        replicas (``KR_REPLICA_ACKS``), has that many connected (on a Redis Cluster each
        primary's replicas are not looked at), kept for /readyz. Its answer to ``TIME``
        keeps the node's clock on Redis's (``Clock.agree``)."""
        needed = self.store.replicas[0] if self.shards is None else 0
        clock = self.clock
        try:
            async with asyncio.timeout(READY_PROBE_S):
                sent = clock.machine_ms()
                seconds, micros = await self.redis.time()
                answered = clock.machine_ms()
                info = await self.redis.info("replication") if needed else {}
        except (*UNAVAILABLE, OSError, TimeoutError):
            self._probed = UNREACHABLE
            return
        clock.agree(seconds * 1000 + micros // 1000, sent, answered)
        self.metrics.clock_correction.set(clock.correction_ms / 1000)
        self._answered = asyncio.get_running_loop().time()
        connected = int(info.get("connected_slaves", 0))
        self._probed = None
        if connected < needed:
            plural = "s" * (needed > 1)
            self._probed = (
                f"{needed} replica{plural} needed (KR_REPLICA_ACKS), {connected} connected"
            )

    async def sweep(self) -> int:
        return await self.sweeper.sweep()

    # ---- lifecycle ----------------------------------------------------------------------
    async def _prepare_challenges(self) -> None:
        """Today's and tomorrow's challenge deals, prepared ahead (once, by one node)."""
        while True:
            try:
                await self.challenges.prepare_ahead()
            except asyncio.CancelledError:
                raise
            except Exception:
                log.exception("challenge preparation failed")
            await asyncio.sleep(self.config.sweep_interval_s)

    async def start(self) -> int:
        await self.redis.ping()
        await self.probe_once()  # (its clock agreed with Redis's before anything reads it)
        if abs(self.clock.correction_ms) > CLOCK_WARN_MS:
            log.warning(
                "this machine's clock is off Redis's; the node reads Redis's time",
                redis_minus_machine_ms=self.clock.correction_ms,
            )
        await self.store.sweeping.heartbeat(self.connections.open)
        self.background.spawn(self._probe())
        self.background.spawn(self._heartbeat())
        self.background.spawn(self._sessions_ended())
        self.background.spawn(self.sweeper.run())
        self.background.spawn(self.lobby.matcher())
        self.background.spawn(self.challenges.leaderboards.run())
        self.background.spawn(self.arenas.run())
        here = self.arenas.here  # the arenas with players here: their pools are kept full
        self.background.spawn(self.arena_deals.run(lambda: list(here), self.arenas.find))
        self.background.spawn(self.tables.run())
        self.background.spawn(self._prepare_challenges())
        self.store.start()
        if self.shards is not None:
            self.shards.start()
            await self.shards.listen(node_channel(self.id), True)
        else:
            self._pubsub = self.sub_redis.pubsub(ignore_subscribe_messages=True)
            await self._pubsub.subscribe(CHANNEL)
            self._listener = asyncio.create_task(self._listen(), name="pubsub")
        self.server = await self._listen_on(self.config.port, self.config.reuse_port)
        if self.config.worker_port:  # a worker's own port, besides the one it shares
            self.own_server = await self._listen_on(self.config.worker_port, False)
        port: int = self.server.sockets[0].getsockname()[1]
        core = solver.native.describe(solver.CORE)
        log.info("listening", node=self.id, host=self.config.host, port=port, solver=core)
        return port

    async def _listen_on(self, port: int, reuse_port: bool) -> Server:
        return await serve(
            self.connections.handler,
            self.config.host,
            port,
            process_request=self.routes,
            create_connection=MessageConnection,
            max_size=self.config.max_message,
            compression=None,
            ping_interval=20,
            ping_timeout=20,
            close_timeout=2,
            max_queue=4,
            reuse_port=reuse_port or None,
        )

    async def stop(self) -> None:
        """Graceful: stop accepting, close connections (1001), write pending moves."""
        self.stopping = True
        self.solving.stopping = True
        for server in (self.server, self.own_server):
            if server is not None:
                server.close()
                await server.wait_closed()
        await self.attendance.close_all()
        await self.store.close()
        if self._listener is not None:
            self._listener.cancel()
            await asyncio.gather(self._listener, return_exceptions=True)
        await self._quietly("closing pub/sub", self._pubsub and self._pubsub.aclose())
        if self.shards is not None:
            await self._quietly("closing sharded pub/sub", self.shards.close())
        await self.background.cancel()
        await self._quietly("leaving the live nodes", self.store.sweeping.node_gone())
        await self.solving.close()
        self.fanout.close()
        await self.redis.aclose()
        if self.sub_redis is not self.redis:
            await self.sub_redis.aclose()
        for client in self._sentinel.sentinels if self._sentinel else ():
            await client.aclose()
        log.info("stopped", node=self.id)

    async def _quietly(self, what: str, call: Coroutine[Any, Any, Any] | None) -> None:
        """Await a step of stopping; a failure is logged, and stopping goes on."""
        if call is None:
            return
        try:
            await call
        except Exception as err:
            log.warning(f"{what} failed while stopping", error=repr(err))

    async def _sessions_ended(self) -> None:
        """Every SESSIONS_CHECK_S: connections here signed in with a session that ended
        on any node (sign out everywhere, a new password) are guests again."""
        since = self.clock.now_ms()
        while True:
            await asyncio.sleep(SESSIONS_CHECK_S)
            try:
                now = self.clock.now_ms()
                ended = await self.store.accounts.ended_since(since - 1000)  # clocks differ
                since = now
                if ended:
                    conns = list(self.connections.conns)
                    for conn, key in await self.players.sessions_ended(conns, ended):
                        await self.lobby.unseat(conn, key)
            except Exception:
                log.exception("session check failed")

    async def _heartbeat(self) -> None:
        """Every 10 s: this node is alive, and in the node set of each room it has open
        (a room it had gone missing from catches up on its events)."""
        while True:
            await asyncio.sleep(10)
            try:
                await self.store.sweeping.heartbeat(self.connections.open)
                await self.attendance.rejoin()
            except Exception:
                log.exception("heartbeat failed")

    async def _listen(self) -> None:
        """Room events and quick-match news published by other nodes, until the node
        stops. Read with a timeout and the stop looked at between reads, not ended by the
        task's cancellation alone: after a Redis restart, redis-py 8.2's pub/sub was seen
        to swallow that cancellation (4 runs in 48 of test_redis_restart's outage test)
        and read on, and ``stop`` waited for it forever."""
        assert self._pubsub is not None
        while self._running():
            try:
                message = await self._pubsub.get_message(timeout=LISTEN_POLL_S)
                if message is not None and message.get("type") == "message":
                    self._received(message["data"])
            except asyncio.CancelledError:
                raise
            except Exception:
                if not self._running():
                    return
                log.exception("pubsub listener failed; reconnecting")
                await asyncio.sleep(0.5)
                try:
                    await self._pubsub.subscribe(CHANNEL)
                    # what was published meanwhile never came; a restarted Redis may have
                    # lost this node's place in node sets: back in each, caught up
                    await self.attendance.rejoin(list(self.hubs.hubs.values()))
                except Exception as err:
                    log.warning("pubsub resubscribe failed", error=repr(err))

    def _running(self) -> bool:
        """Not stopping (a call, which type checkers do not narrow across awaits)."""
        return not self.stopping

    def _received(self, data: bytes) -> None:
        """``KEY|ORIGIN|JSON``: a room event (KEY is its code) or quick-match news
        (``mm:TICKET``), published by node ORIGIN."""
        raw_key, _, rest = data.partition(b"|")
        origin, _, payload = rest.partition(b"|")
        key = raw_key.decode()
        if key.startswith("mm:"):
            self.lobby.matched(key[3:], orjson.loads(payload))
            return
        if key.startswith("ar:"):
            self.arenas.entered(key[3:], orjson.loads(payload))
            return
        if origin.decode() == self.id:  # our own commit, already delivered here
            return
        hub = self.hubs.get(key)
        event = RoomEvent.stored(orjson.loads(payload))
        if hub is not None and event is not None:
            hub.feed(event)

    def _resubscribed(self, channels: list[str]) -> None:
        """Rooms listened to again after a gap (a failover): their events since, read
        back from the rooms' kept events."""
        for channel in channels:
            code = channel.partition("{")[2].rstrip("}")
            hub = self.hubs.get(code)
            if channel.startswith("kr:events:") and hub is not None:
                self.background.spawn(self._catch_up(code))

    async def _catch_up(self, code: str) -> None:
        hub = self.hubs.get(code)
        if hub is None or hub.version is None:
            return
        for stored in await self.store.rooms.events_since(code, hub.version):
            event = RoomEvent.stored(stored)
            if event is not None:
                hub.feed(event)


def _own_connection(
    config: Config, redis_url: str, sentinel: Sentinel | None, coalesce: bool = False
) -> CommitConnection | None:
    """A connection of the node's own (the group commit's; with ``coalesce``, the other
    commands'): to the URL's Redis, or to the primary Sentinel names at each
    (re)connection (store/commit.py)."""
    if sentinel is None:
        return CommitConnection.for_url(redis_url, coalesce)
    name = config.sentinel_master

    async def primary() -> tuple[str, int]:
        host, port = await sentinel.discover_master(name)
        return str(host), int(port)

    return CommitConnection(primary, coalesce=coalesce)


class _SentinelBlockingPool(SentinelConnectionPool, aioredis.BlockingConnectionPool):
    """Sentinel's pool of the primary, bounded as ``BlockingConnectionPool`` is."""


def _clients(config: Config, redis_url: str) -> tuple[Any, Any, Sentinel | None]:
    """The command client and the pub/sub client: of ``redis_url``, or of the primary
    that Sentinel names (``KR_SENTINELS``), followed through failovers (with the
    Sentinel client), or of a Redis Cluster (``KR_REDIS_CLUSTER``: one client, which
    follows moved slots and failovers; node/shards.py does its sharded pub/sub).

    The command client's pool is bounded (``KR_REDIS_CONNECTIONS``): a burst of
    commands waits for a connection rather than opening one each, as redis-py's
    default pool would up to its limit and then refuse the command."""
    options: dict[str, Any] = {
        "socket_timeout": 10,
        "socket_connect_timeout": 5,
        "health_check_interval": 5,
        "retry": Retry(ExponentialBackoff(cap=0.5, base=0.05), 3),
        "retry_on_error": [RedisConnectionError, RedisTimeoutError],
        "max_connections": config.redis_connections,
        "timeout": 10,  # waiting for a free connection
    }
    if config.redis_cluster:
        nodes = [h.rsplit(":", 1) for h in config.redis_cluster.split(",") if h.strip()]
        cluster = RedisCluster(
            startup_nodes=[ClusterNode(host.strip(), int(port)) for host, port in nodes],
            socket_timeout=options["socket_timeout"],
            socket_connect_timeout=options["socket_connect_timeout"],
            health_check_interval=options["health_check_interval"],
            max_connections=config.redis_connections,
            retry=Retry(ExponentialBackoff(cap=0.5, base=0.05), 6),
        )
        return cluster, cluster, None
    if config.sentinels:
        hosts = [h.rsplit(":", 1) for h in config.sentinels.split(",") if h.strip()]
        sentinel = Sentinel(
            [(host.strip(), int(port)) for host, port in hosts],
            sentinel_kwargs={"socket_timeout": 1, "socket_connect_timeout": 1},
        )
        return (
            sentinel.master_for(
                config.sentinel_master, connection_pool_class=_SentinelBlockingPool, **options
            ),
            sentinel.master_for(config.sentinel_master, socket_connect_timeout=5),
            sentinel,
        )
    pool = aioredis.BlockingConnectionPool.from_url(redis_url, **options)
    return (
        aioredis.Redis.from_pool(pool),
        aioredis.from_url(redis_url, socket_connect_timeout=5),
        None,
    )
