"""Fixtures: a real redis-server on a free port, a real Redis Cluster
(tests/service/cluster.py), the race server in-process on port 0 or as a subprocess,
and a small WebSocket client."""

from __future__ import annotations

import asyncio
import gc
import secrets
import time
import warnings
from collections.abc import AsyncIterator, Callable, Iterator
from contextlib import asynccontextmanager
from datetime import timedelta
from typing import TYPE_CHECKING, Any

import orjson
import pytest
import redis
from websockets.asyncio.client import ClientConnection, connect

from klondike_race.service.clock import Clock
from klondike_race.service.config import Config
from klondike_race.service.domain import challenge as ch
from klondike_race.service.embedded import EmbeddedRedis
from klondike_race.service.logs import configure
from klondike_race.service.node import Node
from tests.conftest import reference_deals

if TYPE_CHECKING:
    from .cluster import Cluster

# Field names of client messages (docs/protocol.md), for the tests that send random ones.
WIRE_FIELDS = (
    "type", "seq", "from", "to", "count", "action", "name", "code", "settings", "token",
    "since", "player", "capacity", "private", "time_limit", "rank_by", "deal", "id",
    "spectator_delay", "rated",
)  # fmt: skip


@pytest.fixture(scope="session")
def redis_server(tmp_path_factory: pytest.TempPathFactory) -> Iterator[EmbeddedRedis]:
    server = EmbeddedRedis(tmp_path_factory.mktemp("redis"), appendfsync="always").start()
    yield server
    server.stop()


@pytest.fixture(scope="module")
def cluster(tmp_path_factory: pytest.TempPathFactory) -> Iterator[Cluster]:
    """A real Redis Cluster (tests/service/cluster.py), one per test module that uses it."""
    from .cluster import Cluster  # it starts its processes with topology.py, which imports us

    made = Cluster(tmp_path_factory.mktemp("cluster"))
    yield made
    made.stop()


@pytest.fixture
def killed_redis_garbage() -> Iterator[None]:
    """For tests that kill a Redis under in-process nodes: the connections that were
    open to it are dropped broken by redis-py, unclosed (their sockets are closed when
    collected). Collected when the test ends, so that the ResourceWarning of their
    collection is neither counted against a later test that happens to collect them nor
    hidden anywhere else."""
    yield
    with warnings.catch_warnings():
        warnings.simplefilter("ignore", ResourceWarning)
        gc.collect()


@pytest.fixture
def redis_url(redis_server: EmbeddedRedis) -> str:
    client = redis.Redis.from_url(redis_server.url)
    client.flushall()
    client.close()
    return redis_server.url


def make_config(redis_url: str, **overrides: Any) -> Config:
    values: dict[str, Any] = {
        "host": "127.0.0.1",
        "port": 0,
        "redis_url": redis_url,
        "countdown_ms": 150,
        "dev": True,
        # tests play whole winning lines as fast as the acks come, several races on one
        # connection (over 300 messages a second on a quiet machine): the limit is not
        # what they test (test_refusals.py and test_strictness.py set their own)
        "rate": 2000.0,
        "burst": 4000.0,
        # no dailies: a node with them prepares four deals with the solver as it starts
        # (its worker processes started for them: over half the CPU of a test that
        # starts a node and plays a race). The tests of dailies use daily_config.
        "daily_draws": "none",
        # a finished race's analysis: a node's stop waits for one under way, so the
        # tests' nodes give it 1 s per position instead of 5 (reference deals decide
        # within milliseconds)
        "solver_analysis_s": 1.0,
        # every node prepares today's and tomorrow's daily deals when it starts, and a
        # stop waits for a certification under way: 3 s per candidate, not 10
        "solver_challenge_s": 3.0,
        # argon2's cheapest parameters: the tests sign in about a hundred times, and each
        # hash of the default profile is a quarter of a CPU-second (test_players.py checks
        # the default's parameters)
        "password_profile": "CHEAPEST",
        # the tests' players all connect from 127.0.0.1: the limit on attempts per
        # address is tested where it is set (test_challenges.py)
        "attempts_per_address": 1000,
    }
    values.update(overrides)
    return Config(**values)


# ---- daily challenges ------------------------------------------------------------------
SECRET = "test-secret"  # the tests' KR_CHALLENGE_SECRET: their daily seeds are fixed


def day_id(offset_days: int = 0) -> str:
    """The Draw 1 daily of today (on the server's clock), or ``offset_days`` from it."""
    today = ch.day_of(Clock().now_ms())
    return ch.daily_id(today + timedelta(days=offset_days), 1)


def daily_config(redis_url: str, **more: Any) -> Config:
    """A node with one daily (Draw 1), quick to certify, its leaderboards pushed often."""
    return make_config(
        redis_url,
        daily_draws="1",
        challenge_secret=SECRET,
        solver_challenge_s=3.0,
        solver_challenge_tries=5,
        board_interval_ms=50,
        **more,
    )


@pytest.fixture
def clocked() -> Clock:
    """A clock of the test's own, for the nodes it starts, to shift or freeze."""
    return Clock()


@asynccontextmanager
async def running(config: Config, clock: Clock | None = None) -> AsyncIterator[Node]:
    """A node of ``config`` (reading the time from ``clock``: by default a new one)
    started (its port as ``node.port``), stopped after."""
    configure(json=False, level="warning")
    assert config.redis_url is not None
    node = Node(config, config.redis_url, clock)
    node.port = await node.start()  # type: ignore[attr-defined]
    try:
        yield node
    finally:
        await node.stop()


@pytest.fixture
async def daily(redis_url: str, clocked: Clock) -> AsyncIterator[Node]:
    async with running(daily_config(redis_url), clocked) as node:
        yield node


async def guest(port: int, **headers: str) -> Client:
    """A new guest (a device of its own) on a new connection; ``headers`` with it."""
    client = (
        await Client.open(port, additional_headers=headers) if headers else await Client.open(port)
    )
    await client.request("hello", "identity", device=secrets.token_urlsafe(24))
    return client


@pytest.fixture
async def node(redis_url: str) -> AsyncIterator[Node]:
    configure(json=False, level="warning")
    node = Node(make_config(redis_url), redis_url)
    node.port = await node.start()  # type: ignore[attr-defined]
    yield node
    await node.stop()


async def http(port: int, method: str, path: str) -> tuple[int, dict[str, str], bytes]:
    """One plain HTTP/1.1 request on a fresh connection: status, headers, body."""
    reader, writer = await asyncio.open_connection("127.0.0.1", port)
    request = f"{method} {path} HTTP/1.1\r\nHost: localhost\r\nConnection: close\r\n\r\n"
    try:
        writer.write(request.encode())
        data = await reader.read()
    finally:  # closed even when the caller's timeout cancels the read
        writer.close()
    await writer.wait_closed()
    head, _, body = data.partition(b"\r\n\r\n")
    lines = head.decode().split("\r\n")
    headers = dict(line.split(": ", 1) for line in lines[1:])
    return int(lines[0].split()[1]), headers, body


async def ready_when(
    port: int, wanted: Callable[[int], bool], within: float = 4.0
) -> tuple[int, bytes]:
    """/readyz asked every 0.1 s until ``wanted(status)``: (status, body). Its documented
    bound (docs/operations.md: the node's probe every 0.5 s, unready after 1.5 s without
    an answer) with room for a busy machine: ``within`` s."""
    deadline = time.monotonic() + within
    while True:
        status, _, body = await http(port, "GET", "/readyz")
        if wanted(status):
            return status, body
        if time.monotonic() > deadline:
            raise AssertionError(f"/readyz still {status} {body!r} after {within} s")
        await asyncio.sleep(0.1)


class Client:
    """A real WebSocket client that keeps every message it receives, in order."""

    def __init__(self, ws: ClientConnection) -> None:
        self.ws = ws
        self.seen: list[dict] = []
        self.raw: list[str] = []
        self._index = 0
        self.token: str | None = None
        self.player: str | None = None
        self.seq = 0

    @classmethod
    async def open(cls, port: int, **kwargs: Any) -> Client:
        kwargs.setdefault("max_queue", None)  # keep everything: tests read at their pace
        ws = await connect(f"ws://127.0.0.1:{port}/ws", compression=None, **kwargs)
        return cls(ws)

    async def send(self, type: str, **fields: Any) -> None:
        await self.ws.send(orjson.dumps({"type": type, **fields}).decode())

    async def send_raw(self, data: str | bytes) -> None:
        await self.ws.send(data)

    async def recv(self, timeout: float = 15.0) -> dict:
        if self._index < len(self.seen):
            self._index += 1
            return self.seen[self._index - 1]
        raw = await asyncio.wait_for(self.ws.recv(), timeout)
        self.raw.append(raw)
        message = orjson.loads(raw)
        self.seen.append(message)
        self._index += 1
        return message

    async def expect(self, *types: str, timeout: float = 15.0) -> dict:
        """The next message of one of ``types``, skipping others (still kept in seen)."""
        deadline = time.monotonic() + timeout
        while True:
            message = await self.recv(max(0.01, deadline - time.monotonic()))
            if message["type"] in types:
                if message["type"] in ("welcome", "resumed") and message.get("player"):
                    self.player = message["player"]
                    self.seq = message.get("seq", self.seq)
                if message.get("token"):
                    self.token = message["token"]
                return message

    async def request(self, type: str, *answers: str, timeout: float = 15.0, **fields: Any) -> dict:
        await self.send(type, **fields)
        return await self.expect(*answers, "error", timeout=timeout)

    async def move(self, step: Any, seq: int | None = None) -> dict:
        """Send one move (a reference-line step, or a wire dict) and wait for its answer."""
        if seq is None:
            seq = self.seq + 1
        fields = step_fields(step)
        await self.send("move", seq=seq, **fields)
        answer = await self.expect("ack", "refused", "error")
        if answer["type"] == "ack" and not answer.get("duplicate"):
            self.seq = max(self.seq, seq)
        return answer

    async def drain(self, wait: float = 0.05) -> list[dict]:
        out = []
        while True:
            try:
                out.append(await self.recv(wait))
            except TimeoutError:
                return out

    async def close(self) -> None:
        await self.ws.close()


def step_fields(step: Any) -> dict:
    if step in ("draw", "recycle", "undo"):
        return {"action": step}
    return {"from": step["from"], "to": step["to"], "count": step["count"]}


def winnable(draw: int = 1, index: int = 0) -> dict:
    wins = [d for d in reference_deals() if d["result"] == "win" and d["draw"] == draw]
    return wins[index]


async def start_race(
    port: int, players: int = 2, deal: dict | None = None, **create: Any
) -> list[Client]:
    """Create a room, seat ``players`` clients, make all ready, wait for the start."""
    host = await Client.open(port)
    fields: dict[str, Any] = {"name": "host", "capacity": max(2, players)}
    if deal is not None:
        fields["deal"] = deal
    fields.update(create)
    welcome = await host.request("create", "welcome", **fields)
    assert welcome["type"] == "welcome", welcome
    clients = [host]
    for i in range(1, players):
        c = await Client.open(port)
        answer = await c.request("join", "welcome", code=welcome["room"]["code"], name=f"p{i}")
        assert answer["type"] == "welcome", answer
        clients.append(c)
    if players == 1:
        await host.send("start")
    else:
        for c in clients:
            await c.send("ready")
    for c in clients:
        await c.expect("start", timeout=5)
    return clients
