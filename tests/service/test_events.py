"""Room events reach each connection in version order, gaps filled from Redis."""

from __future__ import annotations

import asyncio

import orjson
import redis

from klondike_race.service.store import room_key

from .conftest import Client, start_race


async def test_a_lost_event_is_fetched_and_order_is_kept(node, redis_url) -> None:
    a, b = await start_race(node.port)
    code = a.seen[0]["room"]["code"]
    watcher = await Client.open(node.port)
    await watcher.request("watch", "welcome", code=code)
    await asyncio.sleep(0.1)
    await watcher.drain(0.1)
    hub = node.hubs[code]
    v = hub.version
    rds = redis.Redis.from_url(redis_url)
    # event v+1 was stored by "another node" but its publication was lost ...
    lost = {"v": v + 1, "type": "spectators", "count": 7}
    rds.zadd(room_key(code) + ":events", {orjson.dumps(lost): v + 1})
    rds.set(room_key(code) + ":ver", v + 2)
    # ... and event v+2 arrives first
    hub.feed({"v": v + 2, "type": "spectators", "count": 8})
    hub.feed({"v": v + 2, "type": "spectators", "count": 8})  # a duplicate is dropped
    got = [await watcher.expect("spectators") for _ in range(2)]
    assert [(m["v"], m["count"]) for m in got] == [(v + 1, 7), (v + 2, 8)]
    assert hub.version == v + 2
    assert not [m for m in await watcher.drain(0.3) if m["type"] == "spectators"]
    for c in (a, b, watcher):
        await c.close()


async def test_spectators_of_a_dead_node_stop_counting(node, redis_url) -> None:
    a, b = await start_race(node.port)
    code = a.seen[0]["room"]["code"]
    rds = redis.Redis.from_url(redis_url)
    rds.hset(room_key(code) + ":spect", "crashed-node", 5)  # its node:{id} key is gone
    watcher = await Client.open(node.port)
    welcome = await watcher.request("watch", "welcome", code=code)
    assert welcome["spectators"] == 1
    assert rds.hgetall(room_key(code) + ":spect") == {node.id.encode(): b"1"}
    for c in (a, b, watcher):
        await c.close()
