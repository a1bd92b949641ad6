"""The production topology of docker-compose.yml, from real processes: Debian's
redis-server (a primary, append-only everysec, and two replicas) and redis-sentinel
(three), two `klondike-race serve` nodes configured as compose configures them
(KR_SENTINELS, KR_REPLICA_ACKS=1), and Debian's HAProxy with deploy/haproxy.cfg in front.
Races are played through the balancer while a node is SIGKILLed (and restarted), then
the Redis primary is SIGKILLed while a replica lags: Sentinel promotes the up-to-date
replica, the nodes follow by themselves, every racer resumes, no acknowledged move is
lost, the balancer never fails requests for more than a second, and each node's /readyz
answers all through the failover, unready for one of the documented reasons meanwhile
(bench/readyz_failover.py times those answers)."""

from __future__ import annotations

import asyncio
import contextlib
import itertools
import os
import re
import signal
import time
from collections.abc import Callable

import redis
from websockets.exceptions import ConnectionClosed, InvalidHandshake, InvalidStatus

from klondike_race.service.embedded import free_port
from klondike_race.service.store import moves_key
from tests.servers import ServerProcess

from .conftest import Client, http, start_race, winnable
from .topology import (
    MASTER,
    RedisProcess,
    SentinelProcess,
    balancer,
    kill_group,
    until_answers,
    wait_for,
)

DOWN_AFTER_MS = 1000  # sentinel down-after-milliseconds (compose: 2000)
ROOMS = 4  # races of two racers each
PACE = 0.05  # seconds between a racer's moves
BACKOFF = (0.25, 5.0)  # docs/client.md: try again after 0.25 s, doubling up to 5 s


class Racer:
    """A bot racer through the balancer: sends a move (draw, or recycle when the stock is
    empty) every ``PACE`` seconds, keeps every acknowledged move, and on a lost connection
    reconnects through the balancer and resumes, backing off."""

    def __init__(self, client: Client, lb: int) -> None:
        self.lb = lb
        self.client: Client | None = client
        assert client.token and client.player
        self.token, self.player = client.token, client.player
        self.code = next(m for m in client.seen if m["type"] == "welcome")["room"]["code"]
        self.board = next(m for m in client.seen if m["type"] == "start")["board"]
        self.seq = 0  # moves stored, as far as this racer knows
        self.acked: dict[int, str] = {}  # seq -> the move acknowledged under it
        self.acked_at: list[float] = []  # when each ack arrived (monotonic)
        self.lost: list[str] = []  # how each connection or attempt ended
        self.resumed_at: list[float] = []

    def acks_since(self, t: float) -> int:
        return sum(1 for at in self.acked_at if at >= t)

    def resumes_since(self, t: float) -> int:
        return sum(1 for at in self.resumed_at if at >= t)

    def since(self, t: float) -> tuple[object, ...]:
        """Who this racer is, its resumes and acks since ``t`` and how its last three
        connections or attempts ended: what a failure says of it."""
        return (self.player, self.code, self.resumes_since(t), self.acks_since(t), self.lost[-3:])

    async def run(self, stop: asyncio.Event) -> None:
        delay = BACKOFF[0]
        while not stop.is_set():
            try:
                if self.client is None:
                    await self.resume()
                await self.move()
            except (ConnectionClosed, InvalidHandshake, OSError, TimeoutError) as err:
                self.lost.append(describe(err))
                if self.client is not None:
                    self.client.ws.transport.abort()
                    self.client = None
                await asyncio.sleep(delay)
                delay = min(2 * delay, BACKOFF[1])
            else:
                delay = BACKOFF[0]
                await asyncio.sleep(PACE)

    async def resume(self) -> None:
        self.client = await Client.open(self.lb, open_timeout=5)
        welcome = await self.client.request("resume", "welcome", token=self.token)
        assert welcome["type"] == "welcome", welcome
        # the server holds every move it acknowledged (and perhaps one it could not)
        assert welcome["seq"] >= max(self.acked, default=0), (welcome["seq"], self.player)
        self.seq, self.board = welcome["seq"], welcome["board"]
        self.resumed_at.append(time.monotonic())

    async def move(self) -> None:
        assert self.client is not None
        seq = self.seq + 1
        action = "draw" if self.board["stock"] else "recycle"
        await self.client.send("move", seq=seq, action=action)
        answer = await self.client.expect("ack", "refused", "error")
        assert answer["type"] == "ack" and not answer.get("duplicate"), answer
        self.acked[seq] = answer["move"]
        self.acked_at.append(time.monotonic())
        self.seq, self.board = seq, answer["board"]


def describe(err: Exception) -> str:
    if isinstance(err, ConnectionClosed):
        return f"close {err.rcvd.code if err.rcvd else 1006}"
    if isinstance(err, InvalidStatus):
        return f"http {err.response.status_code}"
    return type(err).__name__


class Probe:
    """A fresh ``GET path`` every 50 ms, all through the test: ``/healthz`` through the
    balancer, or a node's own ``/readyz``. A request fails when it is refused or answered
    anything but 200, or gets no answer within ``WAIT`` s; a slow 200 (a busy machine) is
    an answer, timed in ``slowest`` (as every answer is)."""

    WAIT = 5.0

    def __init__(self, port: int, path: str = "/healthz") -> None:
        self.port, self.path = port, path
        self.results: list[tuple[float, int]] = []  # (sent at, status; 0: no answer)
        self.slowest = 0.0
        self.said: set[str] = set()  # the bodies of answers other than 200, numbers as N

    async def run(self, stop: asyncio.Event) -> None:
        while not stop.is_set():
            sent = time.monotonic()
            try:
                status, _, body = await asyncio.wait_for(
                    http(self.port, "GET", self.path), self.WAIT
                )
            except (OSError, TimeoutError, ValueError, IndexError):
                status, body = 0, b""
            self.slowest = max(self.slowest, time.monotonic() - sent)
            self.results.append((sent, status))
            if status != 200:
                self.said.add(re.sub(r"\d+(\.\d+)?", "N", body.decode(errors="replace").strip()))
            await asyncio.sleep(max(0.0, 0.05 - (time.monotonic() - sent)))

    def longest_failure(self) -> float:
        """The longest time from a failed request to the next one answered 200."""
        longest, since = 0.0, None
        for sent, status in self.results:
            if status != 200:
                since = sent if since is None else since
            elif since is not None:
                longest, since = max(longest, sent - since), None
        if since is not None:
            longest = max(longest, self.results[-1][0] - since)
        return longest

    def failures(self) -> dict[int, int]:
        out: dict[int, int] = {}
        for _, status in self.results:
            if status != 200:
                out[status] = out.get(status, 0) + 1
        return out


async def until(
    check: Callable[[], bool],
    what: str,
    tasks: list[asyncio.Task[None]],
    timeout: float = 15.0,
    state: Callable[[], object] | None = None,
) -> float:
    """Wait for ``check``; fail at once if a racer failed. Returns the time it took. On a
    timeout the failure says ``state()`` too, when given."""
    start = time.monotonic()
    while not check():
        for task in tasks:
            if task.done():
                task.result()  # a racer's assertion, raised here
                raise AssertionError("a racer stopped")
        if time.monotonic() - start > timeout:
            said = f": {state()}" if state is not None else ""
            raise AssertionError(f"timed out waiting for {what}{said}")
        await asyncio.sleep(0.02)
    return time.monotonic() - start


async def connections(port: int) -> tuple[int, int]:
    """A node's open WebSocket connections and connections accepted, from its /metrics."""
    _, _, body = await http(port, "GET", "/metrics")
    values = dict(line.split(" ", 1) for line in body.decode().splitlines() if line[:1] != "#")
    return int(float(values["kr_connections"])), int(float(values["kr_connections_total"]))


def node_env(sentinels: list[SentinelProcess]) -> dict[str, str]:
    """A node's environment as docker-compose.yml sets it, with this machine's ports."""
    return {
        "KR_SENTINELS": ",".join(f"127.0.0.1:{s.port}" for s in sentinels),
        "KR_SENTINEL_MASTER": MASTER,
        "KR_REPLICA_ACKS": "1",
        "KR_REPLICA_WAIT_MS": "500",
        "KR_LOG_JSON": "1",
    }


async def test_the_production_topology_loses_no_acknowledged_move(tmp_path) -> None:
    began = time.monotonic()
    redises: list[RedisProcess] = []
    sentinels: list[SentinelProcess] = []
    nodes: list[ServerProcess] = []
    lb = None
    stop = asyncio.Event()
    tasks: list[asyncio.Task[None]] = []
    try:
        # ---- Redis: a primary, two replicas, three Sentinels ---------------------------------
        primary = RedisProcess(tmp_path / "primary")
        redises.append(primary)
        redises += [RedisProcess(tmp_path / f"replica{i}", primary.port) for i in (1, 2)]
        wait_for(
            lambda: all(r.replication()["master_link_status"] == "up" for r in redises[1:]),
            "the replicas to sync",
        )
        sentinels += [
            SentinelProcess(tmp_path / f"sentinel{i}", primary.port, DOWN_AFTER_MS)
            for i in (1, 2, 3)
        ]
        wait_for(
            lambda: all(
                (m := s.master())["num-other-sentinels"] == 2 and m["num-slaves"] == 2
                for s in sentinels
            ),
            "the Sentinels to know each other and both replicas",
        )
        # ---- two nodes and the balancer ------------------------------------------------------
        env = node_env(sentinels)
        nodes += [ServerProcess(None, **env) for _ in range(2)]
        await asyncio.gather(*(asyncio.to_thread(n.start) for n in nodes))
        lb_port = free_port()
        lb = balancer(lb_port, [n.port for n in nodes], tmp_path / "haproxy")
        await until_answers(lb_port)
        setup = time.monotonic() - began
        probe = Probe(lb_port)
        tasks.append(asyncio.create_task(probe.run(stop)))

        # ---- races through the balancer ------------------------------------------------------
        racers = []
        for i in range(ROOMS):
            deal = {"cards": winnable(index=i)["cards"]}  # never stuck: draws go on for ever
            racers += [Racer(c, lb_port) for c in await start_race(lb_port, deal=deal)]
        tasks += [asyncio.create_task(r.run(stop)) for r in racers]
        await until(lambda: all(len(r.acked) >= 20 for r in racers), "the races", tasks)

        # ---- a node SIGKILLed: its racers resume on the other one ----------------------------
        on_node = [(await connections(n.port))[0] for n in nodes]
        assert sum(on_node) == len(racers), on_node
        victim = nodes[on_node.index(max(on_node))]  # the busier node: at least half of them
        victim.kill()
        killed = time.monotonic()
        resumed_in = await until(
            lambda: (
                sum(r.resumes_since(killed) for r in racers) >= max(on_node)
                and all(r.acks_since(killed) >= 5 for r in racers)
            ),
            "every racer of the killed node to resume",
            tasks,
        )
        # it comes back on its port and the balancer sends it connections again
        restarted = ServerProcess(None, port=victim.port, **env)
        nodes[nodes.index(victim)] = restarted
        await asyncio.to_thread(restarted.start)
        await until_served_by(restarted.port, lb_port)
        # from here each node's own /readyz is asked every 50 ms (how a balancer sees it)
        readiness = [Probe(n.port, "/readyz") for n in nodes]
        tasks += [asyncio.create_task(r.run(stop)) for r in readiness]

        # ---- the Redis primary SIGKILLed while a replica lags --------------------------------
        named = {s.primary_port() for s in sentinels}
        assert len(named) == 1, named
        primary = next(r for r in redises if r.port in named)
        fresh, lagging = (r for r in redises if r is not primary)
        os.kill(lagging.process.pid, signal.SIGSTOP)  # it holds no move from here on
        paused = time.monotonic()
        await asyncio.to_thread(
            wait_for,
            lambda: all(_sees_down(s, lagging.port) for s in sentinels),
            "the Sentinels to see the paused replica down",
        )
        await until(lambda: all(r.acks_since(paused) >= 5 for r in racers), "acks", tasks)
        kill_group(primary.process)
        primary_killed = time.monotonic()
        await asyncio.to_thread(
            wait_for,
            lambda: fresh.replication()["role"] == "master",
            "Sentinel to promote the up-to-date replica",
        )
        # the lagging replica comes back: Sentinel points it at the new primary as part of
        # the failover (the new primary acknowledges no move until a replica follows it)
        os.kill(lagging.process.pid, signal.SIGCONT)
        await asyncio.to_thread(
            wait_for,
            lambda: all(s.primary_port() == fresh.port for s in sentinels),
            "every Sentinel to name the new primary",
        )
        failover = time.monotonic() - primary_killed
        await until(
            lambda: all(
                r.resumes_since(primary_killed) and r.acks_since(primary_killed) >= 5
                for r in racers
            ),
            "every racer to resume and play on after the failover",
            tasks,
            timeout=30,
            # each racer's resumes and acks since, and how its last connections ended;
            # the primary each Sentinel names (a loaded machine once had them fail over
            # again)
            state=lambda: (
                [r.since(primary_killed) for r in racers],
                [s.primary_port() for s in sentinels],
            ),
        )
        recovered_in = time.monotonic() - primary_killed
        await until(
            lambda: all(r.results[-1][1] == 200 for r in readiness), "both nodes ready", tasks
        )
        stop.set()
        await asyncio.gather(*tasks)
        assert all(n.process is not None and n.process.poll() is None for n in nodes)

        # ---- nothing acknowledged is lost ----------------------------------------------------
        # on the primary the Sentinels name now: the up-to-date replica promoted above, or,
        # when a stalled machine had them fail over once more, the other one, which by then
        # follows it (moves wait for a replica's acknowledgement: KR_REPLICA_ACKS)
        named = {s.primary_port() for s in sentinels}
        assert len(named) == 1, named
        now_primary = next(r for r in redises if r.port in named)
        assert now_primary is not primary and now_primary.replication()["role"] == "master"
        with now_primary.client() as new_primary:
            for r in racers:
                log = [e.decode() for e in new_primary.lrange(moves_key(r.code, r.player), 0, -1)]
                assert len(log) >= max(r.acked)
                for seq, move in r.acked.items():
                    assert log[seq - 1].split("@")[0] == move, (r.player, seq)
                check = await Client.open(lb_port)
                welcome = await check.request("resume", "welcome", token=r.token)
                assert welcome["seq"] == len(log) >= max(r.acked)
                await check.close()
                if r.client is not None:
                    await r.client.close()
        lost = sorted({how for r in racers for how in r.lost})
        assert set(lost) <= {"close 1006", "close 1013", "http 502", "http 503"}, lost
        print(
            f"\nsetup {setup:.1f} s; node killed: every racer resumed in {resumed_in:.2f} s;"
            f" primary killed: Sentinel failover {failover:.2f} s, every racer playing again"
            f" {recovered_in:.2f} s after the kill, longest time without an ack"
            f" {longest_gap(racers):.2f} s; longest failing run through the"
            f" balancer {probe.longest_failure():.2f} s (failures {probe.failures()}, slowest"
            f" answer {probe.slowest:.2f} s);"
            f" racers lost connections: {lost}; {sum(len(r.acked) for r in racers)} moves"
            f" acknowledged; total {time.monotonic() - began:.1f} s"
        )
        for i, r in enumerate(readiness):
            print(
                f"node {i + 1}'s /readyz through the failover: {len(r.results)} answers;"
                f" unready for {r.longest_failure():.2f} s at the longest ({r.failures()}),"
                f" saying {sorted(r.said)}"
            )
        # every /readyz was answered, ready or unready for one of the documented reasons
        for r in readiness:
            assert set(r.failures()) <= {503}, r.failures()
            assert r.said <= {
                "redis unreachable: no answer for N s",
                "N replica needed (KR_REPLICA_ACKS), N connected",
            }, r.said
        assert probe.longest_failure() <= 1.0, probe.failures()
    finally:
        stop.set()
        for task in tasks:
            task.cancel()
        await asyncio.gather(*tasks, return_exceptions=True)
        for node in nodes:
            if node.process is not None and node.process.poll() is None:
                node.process.kill()
                node.process.wait()
        for process in [lb] + [p.process for p in (*sentinels, *redises)]:
            if process is not None:
                kill_group(process)


def longest_gap(racers: list[Racer]) -> float:
    """The longest time in which no racer got an ack."""
    acks = sorted(t for r in racers for t in r.acked_at)
    return max(b - a for a, b in itertools.pairwise(acks))


def _sees_down(sentinel: SentinelProcess, port: int) -> bool:
    with redis.Redis(port=sentinel.port, socket_timeout=2) as c:
        replicas = c.sentinel_slaves(MASTER)
    return any(r["port"] == port and r["is_sdown"] for r in replicas)


async def until_served_by(node: int, lb: int, timeout: float = 10.0) -> None:
    """Open connections through the balancer until one lands on ``node``."""
    deadline = time.monotonic() + timeout
    before = (await connections(node))[1]
    while (await connections(node))[1] == before:
        assert time.monotonic() < deadline, "the balancer does not use the restarted node"
        with contextlib.suppress(ConnectionClosed, InvalidHandshake, OSError):
            c = await Client.open(lb)
            assert (await c.request("ping", "pong"))["type"] == "pong"
            await c.close()
        await asyncio.sleep(0.1)
