"""Redis itself restarts mid-race (append-only, fsync always): nothing acknowledged is lost
and the same server process carries on once Redis is back."""

from __future__ import annotations

import asyncio
import os
import signal
import time

import pytest

from klondike_race.service.embedded import EmbeddedRedis
from klondike_race.service.logs import configure
from klondike_race.service.node import Node

from .conftest import Client, make_config, ready_when, start_race, winnable

# a Redis is killed under the nodes here (conftest.killed_redis_garbage)
pytestmark = pytest.mark.usefixtures("killed_redis_garbage")


async def test_redis_restart_mid_race(tmp_path) -> None:
    configure(json=False, level="critical")
    rds = EmbeddedRedis(tmp_path / "redis", appendfsync="always").start()
    node = Node(make_config(rds.url), rds.url)
    port = await node.start()
    try:
        ref = winnable(draw=1, index=11)
        a, b = await start_race(port, deal={"cards": ref["cards"]})
        last = None
        for step in ref["line"][:25]:
            last = await a.move(step)
            assert last["type"] == "ack"
        rds.process.kill()  # SIGKILL redis-server: only its AOF remains
        rds.process.wait()
        answer = None
        try:
            await a.send("move", seq=26, **_fields(ref["line"][25]))
            answer = await a.recv(2)
        except Exception:
            pass  # the connection may be closed with 1011: the move was not acknowledged
        acked = answer is not None and answer["type"] == "ack"
        rds = EmbeddedRedis(tmp_path / "redis", port=rds.port, appendfsync="always").start()
        await asyncio.sleep(0.2)
        c = await Client.open(port)
        welcome = await c.request("resume", "welcome", token=a.token)
        assert welcome["type"] == "welcome", welcome
        # the unacknowledged move may or may not have reached Redis; nothing acked is lost
        assert welcome["seq"] in ((26,) if acked else (25, 26))
        if welcome["seq"] == 25:
            assert welcome["board"] == last["board"]
        done = welcome["seq"]
        for i, step in enumerate(ref["line"][done:], start=done + 1):
            assert (await c.move(step, seq=i))["type"] == "ack"
        for x in (a, b, c):
            await x.close()
    finally:
        await node.stop()
        rds.stop()


def _fields(step) -> dict:
    from .conftest import step_fields

    return step_fields(step)


async def test_a_redis_outage_is_a_retryable_close_and_the_node_recovers(tmp_path) -> None:
    """While Redis is down: /healthz (alive) stays 200, /readyz says 503, and a request
    that needs Redis closes its connection with 1013 (try again later), not 1011. Once
    Redis is back, the same node serves every request (no stale connection fails)."""
    from websockets.exceptions import ConnectionClosed

    from .conftest import http

    configure(json=False, level="critical")
    rds = EmbeddedRedis(tmp_path / "redis", appendfsync="always").start()
    node = Node(make_config(rds.url), rds.url)
    port = await node.start()
    try:
        idle = [await Client.open(port) for _ in range(3)]
        for c in idle:  # connections in the pool, then left idle
            assert (await c.request("rooms", "rooms"))["type"] == "rooms"
        assert (await http(port, "GET", "/readyz"))[0] == 200
        rds.process.kill()
        rds.process.wait()
        assert (await http(port, "GET", "/healthz"))[0] == 200
        _, body = await ready_when(port, lambda status: status == 503)
        assert body.startswith(b"redis unreachable: no answer for "), body
        c = idle[0]
        await c.send("rooms")
        with pytest.raises(ConnectionClosed) as info:
            await c.recv(10)
        assert info.value.rcvd is not None and info.value.rcvd.code == 1013
        rds = EmbeddedRedis(tmp_path / "redis", port=rds.port, appendfsync="always").start()
        await ready_when(port, lambda status: status == 200)
        for c in idle[1:]:
            for _ in range(4):
                answer = await c.request("create", "welcome", name="ann")
                assert answer["type"] == "welcome", answer
        for c in idle[1:]:
            await c.close()
    finally:
        await node.stop()
        rds.stop()


async def test_readyz_never_waits_on_a_redis_that_does_not_answer(tmp_path) -> None:
    """A Redis that hangs (SIGSTOP: a dead primary during a failover looks the same) is
    never waited on by /readyz: it answers at once from the node's last probe, 503 once
    Redis has been silent for 1.5 s, and 200 again once Redis answers."""
    from .conftest import http

    configure(json=False, level="critical")
    rds = EmbeddedRedis(tmp_path / "redis").start()
    node = Node(make_config(rds.url), rds.url)
    port = await node.start()
    assert rds.process is not None
    try:
        assert (await http(port, "GET", "/readyz"))[0] == 200
        os.kill(rds.process.pid, signal.SIGSTOP)
        slowest = 0.0
        status, answers = 200, 0
        for _ in range(40):
            t0 = time.monotonic()
            status, _, body = await http(port, "GET", "/readyz")
            slowest = max(slowest, time.monotonic() - t0)
            answers += 1
            if status == 503:
                break
            await asyncio.sleep(0.1)
        assert status == 503 and body.startswith(b"redis unreachable: no answer for "), body
        # each answer came from the probe's last finding: far below a Redis timeout
        # (asking Redis, as /readyz once did, took up to its 1 s timeout here)
        print(f"\n/readyz with Redis stopped: 503 after {answers} answers, slowest {slowest:.3f} s")
        assert slowest < 0.5, slowest
        os.kill(rds.process.pid, signal.SIGCONT)
        await ready_when(port, lambda status: status == 200)
    finally:
        os.kill(rds.process.pid, signal.SIGCONT)
        await node.stop()
        rds.stop()
