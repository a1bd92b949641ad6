"""The shipped load balancer (deploy/haproxy.cfg, run by Debian's haproxy) in front of two
real node processes: races through it, and a node SIGKILLed under it costs the players
no refused connection longer than a second."""

from __future__ import annotations

import asyncio
import time

from klondike_race.service.embedded import free_port
from tests.servers import ServerProcess

from .conftest import Client, http
from .topology import balancer, kill_group, until_answers


async def test_races_through_the_balancer_survive_a_node_killed(redis_url, tmp_path) -> None:
    one, two = ServerProcess(redis_url).start(), ServerProcess(redis_url).start()
    port = free_port()
    lb = balancer(port, [one.port, two.port], tmp_path / "haproxy")
    try:
        await until_answers(port)
        assert (await http(port, "GET", "/metrics"))[0] == 403  # nodes are scraped directly
        # four racers through the balancer: round robin puts them on both nodes
        host = await Client.open(port)
        welcome = await host.request("create", "welcome", name="ann", capacity=4)
        code = welcome["room"]["code"]
        racers = [host]
        for name in ("bob", "cat", "dan"):
            c = await Client.open(port)
            assert (await c.request("join", "welcome", code=code, name=name))["type"] == "welcome"
            racers.append(c)
        for c in racers:
            await c.send("ready")
        for c in racers:
            await c.expect("start", timeout=5)
        for c in racers:
            assert (await c.move("draw"))["type"] == "ack"
        tokens = [c.token for c in racers]
        one.kill()  # SIGKILL: the racers on it lose their connection
        killed = time.monotonic()
        # every racer reconnects through the balancer and resumes at once
        for i, token in enumerate(tokens):
            c = await Client.open(port)
            welcome = await c.request("resume", "welcome", token=token)
            assert welcome["type"] == "welcome" and welcome["seq"] == 1
            assert (await c.move("draw", seq=2))["type"] == "ack"
            racers[i] = c
        assert time.monotonic() - killed < 5
        # plain requests through it never fail for more than a second in a row
        failing_since = None
        longest = 0.0
        end = time.monotonic() + 3
        while time.monotonic() < end:
            try:
                status = (await http(port, "GET", "/healthz"))[0]
            except OSError:
                status = 0
            now = time.monotonic()
            if status == 200:
                failing_since = None
            else:
                failing_since = failing_since or now
                longest = max(longest, now - failing_since)
            await asyncio.sleep(0.02)
        assert longest <= 1.0
        for c in racers:
            await c.close()
    finally:
        kill_group(lb)
        for node in (one, two):
            if node.process is not None and node.process.poll() is None:
                node.stop()
