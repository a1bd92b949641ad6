"""Redis failover under Sentinel: a primary, a replica and three Sentinels from the
bundled redis-server; nodes that follow the failover by themselves, and moves
acknowledged only once a replica holds them (KR_REPLICA_ACKS), so none is lost."""

from __future__ import annotations

import asyncio
import subprocess
import time
from pathlib import Path

import pytest
import redis
from websockets.exceptions import ConnectionClosed

from klondike_race.service.embedded import EmbeddedRedis, free_port, redis_server_binary
from klondike_race.service.logs import configure
from klondike_race.service.node import Node
from klondike_race.service.store import moves_key

from .conftest import Client, make_config, start_race


def sentinel(folder: Path, primary_port: int) -> tuple[subprocess.Popen[bytes], int]:
    port = free_port()
    folder.mkdir(parents=True)
    conf = folder / "sentinel.conf"
    conf.write_text(
        f"port {port}\nbind 127.0.0.1\ndir {folder}\n"
        f"sentinel monitor kr 127.0.0.1 {primary_port} 2\n"
        "sentinel down-after-milliseconds kr 400\n"
        "sentinel failover-timeout kr 2000\n"
        "sentinel parallel-syncs kr 1\n"
    )
    process = subprocess.Popen(
        [redis_server_binary(), str(conf), "--sentinel"],
        stdout=subprocess.DEVNULL,
        stderr=subprocess.DEVNULL,
    )
    return process, port


def info(port: int, section: str, *, master: bool = False) -> dict:
    with redis.Redis(port=port) as client:
        return client.sentinel_master("kr") if master else client.info(section)


def wait_for(check, timeout: float = 15.0) -> None:
    deadline = time.monotonic() + timeout
    while time.monotonic() < deadline:
        try:
            if check():
                return
        except redis.RedisError:
            pass
        time.sleep(0.1)
    raise AssertionError("timed out")


async def test_a_failover_loses_no_acknowledged_move(tmp_path) -> None:
    configure(json=False, level="critical")
    primary = EmbeddedRedis(tmp_path / "primary").start()
    replica = EmbeddedRedis(
        tmp_path / "replica", extra=("--replicaof", "127.0.0.1", str(primary.port))
    ).start()
    wait_for(lambda: info(replica.port, "replication")["master_link_status"] == "up")
    sentinels = [sentinel(tmp_path / f"sentinel{i}", primary.port) for i in range(3)]
    node = None
    try:
        wait_for(
            lambda: all(info(p, "", master=True)["num-other-sentinels"] == 2 for _, p in sentinels)
        )
        hosts = ",".join(f"127.0.0.1:{p}" for _, p in sentinels)
        config = make_config("", sentinels=hosts, replica_acks=1, replica_wait_ms=1000)
        node = Node(config, "")
        port = await node.start()
        a, b = await start_race(port)
        code = a.seen[0]["room"]["code"]
        acked = 0
        for seq in range(1, 11):
            answer = await a.move("draw", seq=seq)
            assert answer["type"] == "ack"
            acked = seq
        primary.process.kill()  # the primary dies; its replica has every acknowledged move
        primary.process.wait()
        # moves go on being sent: each is acknowledged (on the new primary) or its
        # connection closes with 1013 (not acknowledged); nothing else
        client = a
        closes = 0
        deadline = time.monotonic() + 30
        while acked < 15 and time.monotonic() < deadline:
            try:
                answer = await client.move("draw", seq=acked + 1)
            except ConnectionClosed as err:
                assert err.rcvd is not None and err.rcvd.code == 1013, err
                answer = None
            if answer is not None:
                assert answer["type"] == "ack", answer
                acked += 1
            else:
                closes += 1
                await asyncio.sleep(0.5)
                client = await Client.open(port)
                try:
                    welcome = await client.request("resume", "welcome", token=a.token)
                except ConnectionClosed as err:  # Redis not back yet: 1013 again
                    assert err.rcvd is not None and err.rcvd.code == 1013, err
                    continue
                assert welcome["type"] == "welcome", welcome
                assert welcome["seq"] >= acked  # nothing acknowledged is lost
                acked = welcome["seq"]
        assert acked >= 15
        assert info(replica.port, "replication")["role"] == "master"
        with redis.Redis(port=replica.port) as new_primary:
            assert new_primary.llen(moves_key(code, "p1")) == acked
        for c in (client, b):
            await c.close()
    finally:
        if node is not None:
            await node.stop()
        for process, _ in sentinels:
            process.kill()
            process.wait()
        replica.stop()
        if primary.process and primary.process.poll() is None:
            primary.stop()


async def test_a_move_no_replica_holds_is_not_acknowledged(redis_url) -> None:
    configure(json=False, level="critical")
    node = Node(make_config(redis_url), redis_url)
    port = await node.start()
    try:
        a, b = await start_race(port)
        node.store.replicas = (1, 50)  # from now on a replica must hold each write
        await a.send("move", seq=1, action="draw")
        with pytest.raises(ConnectionClosed) as info:
            while True:
                message = await a.recv()
                assert message["type"] != "ack"
        assert info.value.rcvd is not None and info.value.rcvd.code == 1013
        await b.close()
    finally:
        await node.stop()


async def test_a_room_change_no_replica_holds_is_not_acknowledged(redis_url) -> None:
    """Creating a room, joining it, getting ready: each waits for the replicas as a move
    does, and without them is answered by a 1013 close, never a welcome or an event."""
    configure(json=False, level="critical")
    node = Node(make_config(redis_url, replica_acks=1, replica_wait_ms=50), redis_url)
    port = await node.start()
    try:
        host = await Client.open(port)
        await host.send("create", name="host", capacity=2)
        with pytest.raises(ConnectionClosed) as info:
            while True:
                message = await host.recv()
                assert message["type"] not in ("welcome", "room"), message
        assert info.value.rcvd is not None and info.value.rcvd.code == 1013
        node.store.replicas = (0, 0)
        host = await Client.open(port)
        welcome = await host.request("create", "welcome", name="host", capacity=2)
        node.store.replicas = (1, 50)
        guest = await Client.open(port)
        await guest.send("join", name="guest", code=welcome["room"]["code"])
        with pytest.raises(ConnectionClosed) as info:
            while True:
                message = await guest.recv()
                assert message["type"] != "welcome", message
        assert info.value.rcvd is not None and info.value.rcvd.code == 1013
        await host.close()
    finally:
        await node.stop()
