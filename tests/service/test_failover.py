"""Redis failover under Sentinel: a primary, a replica and three Sentinels (Debian's
redis-server and redis-sentinel); a node that follows the failover by itself, and moves
acknowledged only once a replica holds them (KR_REPLICA_ACKS), so none is lost."""

from __future__ import annotations

import asyncio
import time

import pytest
from websockets.exceptions import ConnectionClosed

from klondike_race.service.logs import configure
from klondike_race.service.node import Node
from klondike_race.service.store import moves_key

from .conftest import Client, make_config, start_race
from .test_http import get
from .topology import RedisProcess, SentinelProcess, kill_group, wait_for

# a Redis is killed under the nodes here (conftest.killed_redis_garbage)
pytestmark = pytest.mark.usefixtures("killed_redis_garbage")


async def test_a_failover_loses_no_acknowledged_move(tmp_path) -> None:
    configure(json=False, level="critical")
    redises: list[RedisProcess] = []
    sentinels: list[SentinelProcess] = []
    node = None
    try:
        redises.append(primary := RedisProcess(tmp_path / "primary"))
        redises.append(replica := RedisProcess(tmp_path / "replica", primary.port))
        wait_for(lambda: replica.replication()["master_link_status"] == "up", "the replica")
        sentinels += [
            SentinelProcess(tmp_path / f"sentinel{i}", primary.port, 400) for i in (1, 2, 3)
        ]
        wait_for(
            lambda: all(s.master()["num-other-sentinels"] == 2 for s in sentinels),
            "the Sentinels to know each other",
        )
        hosts = ",".join(f"127.0.0.1:{s.port}" for s in sentinels)
        config = make_config("", sentinels=hosts, replica_acks=1, replica_wait_ms=1000)
        node = Node(config, "")
        port = await node.start()
        assert await get(port, "/readyz") == (200, "ready\n")  # the replica is there
        a, b = await start_race(port)
        code = a.seen[0]["room"]["code"]
        acked = 0
        for seq in range(1, 11):
            answer = await a.move("draw", seq=seq)
            assert answer["type"] == "ack"
            acked = seq
        kill_group(primary.process)  # the primary dies; its replica has every acknowledged move
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
        assert replica.replication()["role"] == "master"
        with replica.client() as new_primary:
            assert new_primary.llen(moves_key(code, "p1")) == acked
        for c in (client, b):
            await c.close()
    finally:
        if node is not None:
            await node.stop()
        for process in [s.process for s in (*sentinels, *redises)]:
            kill_group(process)


async def test_a_move_no_replica_holds_is_not_acknowledged(redis_url) -> None:
    configure(json=False, level="critical")
    node = Node(make_config(redis_url), redis_url)
    port = await node.start()
    try:
        a, b = await start_race(port)
        assert await get(port, "/readyz") == (200, "ready\n")
        node.store.replicas = (1, 50)  # from now on a replica must hold each write
        # a balancer is told (at the node's next probe): no move can be acknowledged here
        await node.probe_once()
        assert await get(port, "/readyz") == (
            503,
            "1 replica needed (KR_REPLICA_ACKS), 0 connected\n",
        )
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
