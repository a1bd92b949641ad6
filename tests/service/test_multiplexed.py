"""The node's commands on one connection (store/multiplexed.py) against a real
redis-server: replies as redis-py gives them, one write per turn of the event loop,
pipelines and transactions, scripts, a watch on a pooled connection, a lost connection
tried again, and when a node uses it."""

from __future__ import annotations

import asyncio
from collections.abc import AsyncIterator
from typing import Any

import pytest
import redis
import redis.asyncio as aioredis
from redis.exceptions import ResponseError, WatchError

from klondike_race.service.config import Config
from klondike_race.service.node.node import Node
from klondike_race.service.store.commit import CommitConnection
from klondike_race.service.store.multiplexed import Multiplexed


@pytest.fixture
async def client(redis_url: str) -> AsyncIterator[Multiplexed]:
    line = CommitConnection.for_url(redis_url, coalesce=True)
    assert line is not None
    multiplexed = Multiplexed(aioredis.Redis.from_url(redis_url), line)
    try:
        yield multiplexed
    finally:
        await multiplexed.aclose()


async def session(r: Any, p: str) -> list[Any]:
    """The commands the store uses, on keys under ``p``: their parsed replies."""
    return [
        await r.set(p + "s", "v"),
        await r.set(p + "s", "w", nx=True),
        await r.get(p + "s"),
        await r.get(p + "none"),
        await r.mget([p + "s", p + "none"]),
        await r.incr(p + "n"),
        await r.hset(p + "h", mapping={"a": 1, "b": "x"}),
        await r.hsetnx(p + "h", "a", 2),
        await r.hget(p + "h", "a"),
        await r.hmget(p + "h", ["a", "b", "c"]),
        await r.hgetall(p + "h"),
        await r.hgetall(p + "none"),
        await r.hlen(p + "h"),
        await r.zadd(p + "z", {"m": 1.5, "n": 2, "o": -3}),
        await r.zrange(p + "z", 0, -1, withscores=True),
        await r.zrange(p + "z", 0, 0),
        await r.zrevrange(p + "z", 0, -1, withscores=True),
        await r.zrangebyscore(p + "z", 0, "+inf", withscores=True),
        await r.zscore(p + "z", "m"),
        await r.zscore(p + "z", "none"),
        await r.zmscore(p + "z", ["n", "none"]),
        await r.zcard(p + "z"),
        await r.zrem(p + "z", "o"),
        await r.zremrangebyscore(p + "z", 0, 1.6),
        await r.lpush(p + "l", "a", "b"),
        await r.lrange(p + "l", 0, -1),
        await r.lpop(p + "l"),
        await r.llen(p + "l"),
        await r.sadd(p + "set", "a", "b"),
        await r.smembers(p + "set"),
        await r.srem(p + "set", "a"),
        await r.expire(p + "s", 100),
        await r.pexpire(p + "h", 100_000),
        await r.exists(p + "s", p + "none"),
        await r.delete(p + "n"),
        await r.ping(),
        (await r.info("server"))["redis_version"],
        await r.restore(p + "copy", 0, await r.dump(p + "h")),
        await r.hgetall(p + "copy"),
    ]


async def test_replies_are_parsed_as_redis_py_parses_them(
    client: Multiplexed, redis_url: str
) -> None:
    plain = aioredis.Redis.from_url(redis_url)
    try:
        expected = await session(plain, "plain:")
    finally:
        await plain.aclose()
    assert await session(client, "line:") == expected
    assert expected[2] == b"v" and expected[14] == [(b"o", -3.0), (b"m", 1.5), (b"n", 2.0)]


async def test_the_commands_of_one_turn_go_in_one_write(client: Multiplexed) -> None:
    await client.ping()  # connected
    replies = client.line._replies
    assert replies is not None and replies.transport is not None
    transport, writes = replies.transport, []
    write = transport.write

    def counted(data: Any) -> None:
        writes.append(bytes(data))
        write(data)

    transport.write = counted  # type: ignore[method-assign]  (a spy: the write still happens)
    got = await asyncio.gather(*(client.incr("n") for _ in range(200)), client.get("n"))
    assert sorted(got[:200]) == list(range(1, 201)) and got[200] == b"200"
    assert len(writes) == 1 and writes[0].count(b"INCR") == 200
    await client.get("n")
    assert len(writes) == 2  # (the next turn's, alone)


async def test_pipelines_transactions_and_their_errors(client: Multiplexed) -> None:
    async with client.pipeline(transaction=False) as pipe:
        pipe.set("a", 1)
        pipe.hset("h", "f", "v")
        pipe.hgetall("h")
        pipe.zadd("z", {"m": 2})
        pipe.zrange("z", 0, -1, withscores=True)
        assert await pipe.execute() == [True, 1, {b"f": b"v"}, 1, [(b"m", 2.0)]]
    async with client.pipeline(transaction=True) as pipe:
        pipe.incr("a")
        pipe.get("a")
        assert await pipe.execute() == [2, b"2"]
    # an error reply in a pipeline: the others ran, the first error raises, named
    async with client.pipeline(transaction=False) as pipe:
        pipe.incr("a")
        pipe.lpush("h", "x")  # a hash
        pipe.incr("a")
        with pytest.raises(ResponseError, match=r"Command # 2 \(LPUSH h x\).*WRONGTYPE"):
            await pipe.execute()
    assert await client.get("a") == b"4"
    async with client.pipeline(transaction=False) as pipe:
        pipe.incr("a")
        pipe.lpush("h", "x")
        got = await pipe.execute(raise_on_error=False)
        assert got[0] == 5 and isinstance(got[1], ResponseError)
    # a transaction Redis refuses to queue runs nothing
    async with client.pipeline(transaction=True) as pipe:
        pipe.incr("a")
        pipe.execute_command("GET")  # no key: refused when queued
        with pytest.raises(ResponseError, match="wrong number of arguments"):
            await pipe.execute()
    assert await client.get("a") == b"5"
    async with client.pipeline(transaction=False) as pipe:
        assert await pipe.execute() == []
    # multi() makes a pipeline a transaction: refused when queued, it runs nothing
    async with client.pipeline(transaction=False) as pipe:
        pipe.multi()
        pipe.incr("a")
        pipe.execute_command("GET")
        with pytest.raises(ResponseError, match="wrong number of arguments"):
            await pipe.execute()
    assert await client.get("a") == b"5"


async def test_scripts_are_loaded_again_after_a_flush(client: Multiplexed) -> None:
    script = client.register_script("return redis.call('INCRBY', KEYS[1], ARGV[1])")
    assert await script(keys=["n"], args=[2]) == 2
    await client.script_flush()
    assert await script(keys=["n"], args=[3]) == 5  # (NOSCRIPT, loaded, run again)
    async with client.pipeline(transaction=False) as pipe:  # in a pipeline too
        await client.script_flush()
        await script(keys=["n"], args=[1], client=pipe)
        pipe.get("n")
        assert await pipe.execute() == [6, b"6"]


async def test_a_watch_is_kept_on_a_pooled_connection(client: Multiplexed, redis_url: str) -> None:
    other = redis.Redis.from_url(redis_url)
    await client.set("k", 1)
    async with client.pipeline(transaction=True) as pipe:
        await pipe.watch("k")
        assert await pipe.get("k") == b"1"
        other.set("k", 2)  # changed meanwhile: the transaction runs nothing
        pipe.multi()
        pipe.set("k", 10)
        with pytest.raises(WatchError):
            await pipe.execute()
    assert await client.get("k") == b"2"
    async with client.pipeline(transaction=True) as pipe:
        await pipe.watch("k")
        pipe.multi()
        pipe.incr("k")
        pipe.hset("h", "f", "v")
        assert await pipe.execute() == [3, 1]
    other.close()


async def test_a_killed_connection_is_opened_again(client: Multiplexed, redis_url: str) -> None:
    first = await client.client_id()
    redis.Redis.from_url(redis_url).client_kill_filter(_id=first)
    await asyncio.sleep(0.05)
    second = await client.client_id()
    assert second != first
    assert await client.set("after", 1) is True


async def test_a_node_sends_its_commands_through_it_where_it_may(redis_url: str) -> None:
    """By default; not with KR_COMMAND_CONNECTION=0, nor when writes wait for replicas
    (a WAIT would hold up the shared connection), nor on a Unix socket (redis-py's)."""
    for env, url, own in (
        ({}, redis_url, True),
        ({"KR_COMMAND_CONNECTION": "1"}, redis_url, True),
        ({"KR_COMMAND_CONNECTION": "0"}, redis_url, False),
        ({"KR_REPLICA_ACKS": "1"}, redis_url, False),
        ({}, "unix:///nowhere/redis.sock", False),
    ):
        node = Node(Config.from_env({**env, "REDIS_URL": url}), url)
        try:
            assert isinstance(node.redis, Multiplexed) is own, env
            if own:
                assert await node.redis.ping() is True
                assert await node.store.rooms.load("NONE") is None
        finally:
            await node.redis.aclose()
            await node.sub_redis.aclose()
