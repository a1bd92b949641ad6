"""The group commit's own connection (store/commit.py) against a real redis-server: the
replies, error replies, a lost connection tried again, a Redis that answers too late, a
primary that became a replica, and the move log committing through it."""

from __future__ import annotations

import asyncio
import time
from pathlib import Path

import orjson
import pytest
import redis
import redis.asyncio as aioredis
from redis.exceptions import AuthenticationError, NoScriptError, ResponseError
from redis.exceptions import ConnectionError as RedisConnectionError
from redis.exceptions import TimeoutError as RedisTimeoutError

from klondike_race.service.config import Config
from klondike_race.service.embedded import EmbeddedRedis
from klondike_race.service.node.node import Node
from klondike_race.service.store import moves_key
from klondike_race.service.store.commit import CommitConnection, pack
from klondike_race.service.store.moves import MoveLog


def test_commands_are_packed_as_resp_arrays() -> None:
    assert pack([("SET", b"k", 5), (b"GET", "k")]) == (
        b"*3\r\n$3\r\nSET\r\n$1\r\nk\r\n$1\r\n5\r\n*2\r\n$3\r\nGET\r\n$1\r\nk\r\n"
    )


def test_only_plain_tcp_urls_get_a_connection() -> None:
    assert CommitConnection.for_url("unix:///tmp/redis.sock") is None
    assert CommitConnection.for_url("rediss://127.0.0.1:6380/0") is None
    line = CommitConnection.for_url("redis://user:secret@127.0.0.1:6380/3")
    assert line is not None
    assert (line.username, line.password, line.db) == ("user", "secret", 3)


async def test_replies_errors_and_the_database_of_the_url(redis_url: str) -> None:
    line = CommitConnection.for_url(redis_url.rsplit("/", 1)[0] + "/3")
    assert line is not None
    try:
        assert await line.call([("SET", "k", "v"), ("GET", "k"), ("INCR", "n")]) == [b"OK", b"v", 1]
        with pytest.raises(ResponseError, match="WRONGTYPE"):
            await line.call([("LPUSH", "k", "x")])
        with pytest.raises(NoScriptError):
            await line.call([("EVALSHA", "0" * 40, 0)])
        assert await line.call([("GET", "k")]) == [b"v"]  # still usable
    finally:
        line.close()
    plain = redis.Redis.from_url(redis_url)
    assert plain.get("k") is None  # it wrote to database 3, as the URL says
    assert redis.Redis.from_url(redis_url.rsplit("/", 1)[0] + "/3").get("k") == b"v"


async def test_a_killed_connection_is_opened_again_and_the_commands_sent_again(
    redis_url: str,
) -> None:
    line = CommitConnection.for_url(redis_url)
    assert line is not None
    try:
        (first,) = await line.call([("CLIENT", "ID")])
        redis.Redis.from_url(redis_url).client_kill_filter(_id=first)
        await asyncio.sleep(0.05)
        (second,) = await line.call([("CLIENT", "ID")])
        assert second != first
    finally:
        line.close()


async def asleep(client: aioredis.Redis, redis_url: str, seconds: float) -> asyncio.Task:
    """Redis put to sleep for ``seconds`` (``DEBUG SLEEP`` through ``client``), returned
    once it is asleep: a PING of another connection goes unanswered for 0.2 s (on a
    loaded machine the command can reach Redis well after its task is made)."""
    await client.ping()  # connected: the DEBUG SLEEP goes out as soon as its task runs
    sleeping = asyncio.create_task(client.execute_command("DEBUG", "SLEEP", str(seconds)))
    with redis.Redis.from_url(redis_url, socket_timeout=0.2) as probe:
        while True:
            try:
                await asyncio.to_thread(probe.ping)
            except redis.TimeoutError:
                return sleeping
            await asyncio.sleep(0.01)


async def test_a_late_answer_times_out_and_is_tried_again_on_a_new_connection(
    redis_url: str,
) -> None:
    line = CommitConnection.for_url(redis_url)
    assert line is not None
    line.timeout = 0.2
    other = aioredis.Redis.from_url(redis_url)
    try:
        await line.call([("PING",)])
        sleeping = await asleep(other, redis_url, 0.7)
        t0 = time.monotonic()
        (got,) = await line.call([("INCR", "tries")])
        assert time.monotonic() - t0 >= 0.2
        await sleeping
        # the tries that timed out still ran once Redis woke (a command sent is not taken
        # back: APPEND_MOVES answers a repeat by its sequence check), and the reply is the
        # last try's, never a dropped connection's late one
        tries = int(await other.get("tries"))
        assert got == tries and 2 <= tries <= 4
    finally:
        line.close()
        await other.aclose()


async def test_replies_lost_with_the_connection_leave_no_unread_error(redis_url: str) -> None:
    """Commands sent together whose connection times out: the ones after the first are
    awaited by no one, and asyncio reports no "exception was never retrieved"."""
    import gc

    line = CommitConnection.for_url(redis_url)
    assert line is not None
    line.timeout = 0.1
    reported: list[dict] = []
    loop = asyncio.get_running_loop()
    loop.set_exception_handler(lambda _, context: reported.append(context))
    other = aioredis.Redis.from_url(redis_url)
    try:
        # 2 s: the call's four tries of 0.1 s and their backoff (0.35 s) all fall within it
        # on a loaded machine (1.2 s once let the last try through)
        sleeping = await asleep(other, redis_url, 2)
        with pytest.raises(RedisTimeoutError):
            await line.call([("PING",), ("PING",), ("PING",)])
        await sleeping
        gc.collect()
        await asyncio.sleep(0)
        assert reported == []
        assert await line.call([("PING",)]) == [b"PONG"]
    finally:
        loop.set_exception_handler(None)
        line.close()
        await other.aclose()


async def test_a_refused_or_late_sign_in_leaves_no_connection_open(redis_url: str) -> None:
    admin = redis.Redis.from_url(redis_url)
    admin.config_set("requirepass", "secret")
    try:
        admin = redis.Redis.from_url(redis_url, password="secret")
        before = len(admin.client_list())
        line = CommitConnection.for_url(redis_url.replace("redis://", "redis://:wrong@"))
        assert line is not None
        with pytest.raises(AuthenticationError):
            await line.call([("PING",)])
        await connections_back_to(admin, before)  # each try's connection was closed
        good = CommitConnection.for_url(redis_url.replace("redis://", "redis://:secret@"))
        assert good is not None
        # a sign-in that times out (Redis asleep) closes its connection too
        good.timeout = 0.1
        sleeper = aioredis.Redis.from_url(redis_url, password="secret")
        try:
            sleeping = await asleep(sleeper, redis_url.replace("redis://", "redis://:secret@"), 2)
            with pytest.raises(RedisTimeoutError):
                await good.call([("PING",)])
            await sleeping
        finally:
            await sleeper.aclose()
        await connections_back_to(admin, before)
        good.timeout = 2.0
        assert await good.call([("PING",)]) == [b"PONG"]
        good.close()
    finally:
        admin.config_set("requirepass", "")


async def connections_back_to(admin: redis.Redis, count: int, within: float = 5.0) -> None:
    """Redis's client list is ``count`` long again (closed connections leave it as
    soon as Redis has read their close: at once on an idle machine, later on a busy one)."""
    deadline = time.monotonic() + within
    while len(admin.client_list()) != count:
        assert time.monotonic() < deadline, admin.client_list()
        await asyncio.sleep(0.02)


async def test_nothing_to_reach_raises_after_the_retries() -> None:
    async def nowhere() -> tuple[str, int]:
        return "127.0.0.1", 1

    line = CommitConnection(nowhere, connect_timeout=0.2)
    t0 = time.monotonic()
    with pytest.raises(RedisConnectionError, match="cannot reach Redis"):
        await line.call([("PING",)])
    assert time.monotonic() - t0 >= 0.05 + 0.1 + 0.2  # backed off between the tries


async def test_a_primary_turned_replica_is_left_for_the_primary(
    redis_url: str, tmp_path: Path
) -> None:
    primary = redis_url.split("//")[1].split("/")[0].split(":")
    replica = EmbeddedRedis(
        tmp_path / "replica", extra=("--replicaof", primary[0], primary[1])
    ).start()
    asked: list[str] = []

    async def where() -> tuple[str, int]:  # the replica first, as after a failover
        asked.append("?")
        return ("127.0.0.1", replica.port) if len(asked) == 1 else (primary[0], int(primary[1]))

    line = CommitConnection(where)
    try:
        assert await line.call([("SET", "after", "failover")]) == [b"OK"]
        assert len(asked) == 2
        assert redis.Redis.from_url(redis_url).get("after") == b"failover"
    finally:
        line.close()
        replica.stop()


async def test_the_move_log_commits_through_it_after_a_script_flush(redis_url: str) -> None:
    client = aioredis.Redis.from_url(redis_url)
    log = MoveLog(client, "node-a", lambda s: None)
    log.line = CommitConnection.for_url(redis_url)
    log.start()
    try:
        prog = {"foundation": 0, "moves": 1, "reached_moves": 0, "reached_ms": 0}
        body = orjson.dumps({"type": "progress"})
        first = await log.append("ABCD", "p1", 1, "draw@10", prog, 1, body)
        await client.script_flush()
        second = await log.append("ABCD", "p1", 2, "draw@20", prog, 1, body)
        again = await log.append("ABCD", "p1", 2, "draw@20", prog, 1, body)
        assert first > 0 and second > first and again < 0  # a repeat is answered, not stored
        assert await client.lrange(moves_key("ABCD", "p1"), 0, -1) == [b"draw@10", b"draw@20"]
    finally:
        await log.close()
        await client.aclose()


async def test_a_node_commits_through_it_unless_told_not_to(redis_url: str) -> None:
    """On by default (KR_COMMIT_CONNECTION unset or 1); KR_COMMIT_CONNECTION=0: redis-py."""
    for env, own in (
        ({}, True),
        ({"KR_COMMIT_CONNECTION": "1"}, True),
        ({"KR_COMMIT_CONNECTION": "0"}, False),
    ):
        node = Node(Config.from_env({**env, "REDIS_URL": redis_url}), redis_url)
        try:
            assert isinstance(node.store.log.line, CommitConnection) is own, env
        finally:
            await node.redis.aclose()
            await node.sub_redis.aclose()
