"""A burst of clients larger than the node's Redis connection pool: every command waits
for a connection and is answered; the node never opens more connections than its bound."""

from __future__ import annotations

import asyncio

import redis

from klondike_race.service.logs import configure
from klondike_race.service.node import Node

from .conftest import Client, make_config


def _connected(redis_url: str) -> int:
    client = redis.Redis.from_url(redis_url)
    try:
        return len(client.client_list()) - 1  # less this client
    finally:
        client.close()


async def test_a_burst_beyond_the_pool_waits_for_connections(redis_url: str) -> None:
    configure(json=False, level="warning")
    node = Node(make_config(redis_url, redis_connections=3), redis_url)
    port = await node.start()
    clients: list[Client] = []
    try:
        first = await Client.open(port)
        clients.append(first)
        await first.request("hello", "identity", device="d" * 32)
        before = _connected(redis_url)
        clients += await asyncio.gather(*(Client.open(port) for _ in range(150)))
        answers = await asyncio.gather(
            *(
                c.request("hello", "identity", device=f"burst-device-{i:04d}-{'x' * 16}")
                for i, c in enumerate(clients[1:])
            )
        )
        assert [a["type"] for a in answers] == ["identity"] * 150
        assert len({a["player"]["id"] for a in answers}) == 150
        assert _connected(redis_url) - before <= 3  # the pool opens at most its bound
    finally:
        await asyncio.gather(*(c.close() for c in clients))
        await node.stop()
