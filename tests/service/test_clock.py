"""A node's clock reads Redis's time, not its machine's (docs/operations.md, "Clocks"):
a race's time limit means the same on every node, whatever their machines' clocks say."""

from __future__ import annotations

import time

import redis

from klondike_race.service.clock import Clock, machine_ms

from .conftest import Client, http, make_config, running

LAG_MS = 5_000  # how far the lagging machine's clock is behind


def redis_ms(redis_url: str) -> int:
    with redis.Redis.from_url(redis_url) as r:
        seconds, micros = r.time()
    return seconds * 1000 + micros // 1000


def test_a_round_trip_moves_the_correction_only_as_far_as_it_must() -> None:
    now = [100_000]
    clock = Clock(machine=lambda: now[0])
    assert clock.now_ms() == 100_000
    # Redis said 105,000 while the machine read 100,000 to 100,010: Redis is 4,990 to
    # 5,000 ms ahead, and the clock moves to the nearest of those
    assert clock.agree(105_000, 100_000, 100_010) is True
    assert clock.correction_ms == 4_990 and clock.now_ms() == 104_990
    # a slower round trip that allows the correction as it is does not move it
    assert clock.agree(105_100, 100_000, 100_400) is False
    assert clock.correction_ms == 4_990
    # one that does not allow it moves it to its nearest edge, however slow
    assert clock.agree(104_000, 100_000, 100_300) is True
    assert clock.correction_ms == 4_000
    assert clock.agree(110_000, 100_000, 101_000) is True
    assert clock.correction_ms == 9_000
    # a test's shift is on top of Redis's time; shift_to reads the instant asked for
    clock.shift(60_000)
    assert clock.now_ms() == 100_000 + 9_000 + 60_000
    clock.shift_to(1_000_000)
    assert clock.now_ms() == 1_000_000
    now[0] += 250
    assert clock.now_ms() == 1_000_250


async def test_a_node_on_a_lagging_machine_ends_a_time_limit_with_the_others(
    redis_url: str,
) -> None:
    """Two nodes, the second on a machine whose clock is 5 s behind: it reads Redis's time
    from its start, and 1 s past a race's time limit its player's move is refused as the
    race being over, as on the first node (before, it was taken: 4 s were left by its
    clock). Its /metrics says the correction."""
    right = Clock()
    lagging = Clock(machine=lambda: machine_ms() - LAG_MS)
    config = make_config(redis_url)
    async with running(config, right) as one, running(config, lagging) as two:
        assert abs(lagging.now_ms() - redis_ms(redis_url)) < 1_000
        assert abs(lagging.now_ms() - right.now_ms()) < 1_000
        _, _, body = await http(two.port, "GET", "/metrics")
        line = next(x for x in body.decode().splitlines() if x.startswith("kr_clock_correction"))
        assert abs(float(line.split()[1]) - LAG_MS / 1000) < 1.0, line
        host = await Client.open(one.port)
        welcome = await host.request("create", "welcome", name="ann", time_limit=10)
        guest = await Client.open(two.port)
        await guest.request("join", "welcome", code=welcome["room"]["code"], name="bob")
        for c in (host, guest):
            await c.send("ready")
        start = (await guest.expect("start", timeout=5))["room"]
        await host.expect("start", timeout=5)
        assert (await guest.move("draw"))["type"] == "ack"
        # both clocks 1 s past the limit, at once (no waiting for it)
        past = start["ends_at"] + 1_000 - right.now_ms()
        right.shift(past)
        lagging.shift(past)
        for c in (guest, host):
            answer = await c.request("move", "refused", "ack", seq=c.seq + 1, action="draw")
            assert answer["type"] == "refused" and answer["reason"] == "race_over", answer
        await host.close()
        await guest.close()
    assert time.time() * 1000 < start["ends_at"]  # (the race's real limit never came)
