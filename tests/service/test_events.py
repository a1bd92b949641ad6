"""Room events reach each connection in version order, gaps filled from Redis."""

from __future__ import annotations

import asyncio

import orjson
import redis

from klondike_race.service.store import moves_key, room_key

from .conftest import Client, start_race


async def test_a_lost_event_is_fetched_and_order_is_kept(node, redis_url) -> None:
    a, b = await start_race(node.port)
    code = a.seen[0]["room"]["code"]
    watcher = await Client.open(node.port)
    await watcher.request("watch", "welcome", code=code)
    await asyncio.sleep(0.1)
    await watcher.drain(0.1)
    hub = node.hubs.get(code)
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
    await watcher.request("watch", "welcome", code=code)
    count = await watcher.expect("spectators")  # after the welcome: the watcher counted
    assert count["count"] == 1
    assert rds.hgetall(room_key(code) + ":spect") == {node.id.encode(): b"1"}
    for c in (a, b, watcher):
        await c.close()


def p1_moved(v: int, progress: dict, seq: int, entry: str) -> dict:
    """A progress event as another node's commit stores it."""
    return {
        "v": v,
        "type": "progress",
        "player": "p1",
        "progress": progress,
        "seq": seq,
        "entry": entry,
    }


async def test_a_board_missed_by_this_node_is_rebuilt_from_the_move_log(node, redis_url) -> None:
    """Events name the move, not the board: a node that shows boards plays each move on
    its own copy of the game; when a move never reached it, it reloads the games from the
    logs and sends everyone who sees boards all of them."""
    a, b = await start_race(node.port)
    code = a.seen[0]["room"]["code"]
    watcher = await Client.open(node.port)
    welcome = await watcher.request("watch", "welcome", code=code)
    assert welcome["boards"]["p1"]["moves"] == 0
    assert (await a.move("draw"))["type"] == "ack"
    update = await watcher.expect("progress")
    assert update["board"]["moves"] == 1 and update["board"]["stock"] == 23
    hub = node.hubs.get(code)
    rds = redis.Redis.from_url(redis_url)
    # another node committed p1's moves 2 and 3; the event of move 2 never arrived here
    rds.rpush(moves_key(code, "p1"), "d@200", "d@300")
    progress = {**update["progress"], "moves": 3}
    hub.feed(p1_moved(hub.version + 1, progress, 3, "d@300"))
    got = await watcher.expect("progress")
    assert got["progress"]["moves"] == 3 and "board" not in got
    boards = await watcher.expect("boards")
    assert boards["boards"]["p1"]["moves"] == 3 and boards["boards"]["p1"]["stock"] == 21
    assert boards["boards"]["p2"]["moves"] == 0
    # and the copy is in step again: the next move's board comes with its event
    rds.rpush(moves_key(code, "p1"), "d@400")
    hub.feed(p1_moved(hub.version + 1, progress, 4, "d@400"))
    got = await watcher.expect("progress")
    assert got["board"]["moves"] == 4 and got["board"]["stock"] == 20
    for c in (a, b, watcher):
        await c.close()


async def test_two_nodes_in_a_room_never_echo_a_racers_own_move(redis_url) -> None:
    from klondike_race.service.node import Node

    from .conftest import make_config

    one = Node(make_config(redis_url), redis_url)
    two = Node(make_config(redis_url), redis_url)
    port_one, port_two = await one.start(), await two.start()
    try:
        a, b = await start_race(port_one)
        code = a.seen[0]["room"]["code"]
        watcher = await Client.open(port_two)  # the room now has two nodes
        await watcher.request("watch", "welcome", code=code)
        rds = redis.Redis.from_url(redis_url)
        rds.sadd(room_key(code) + ":nodes", "dead-node")  # died without leaving
        for seq in range(1, 21):
            assert (await a.move("draw", seq=seq))["type"] == "ack"
        await asyncio.sleep(0.3)
        own = [m for m in await a.drain(0.2) + a.seen if m.get("player") == "p1"]
        assert [m for m in own if m["type"] == "progress"] == []
        # the other racer and the watcher on the other node got every move
        await b.drain(0.2)
        moves = [m["progress"]["moves"] for m in b.seen if m["type"] == "progress"]
        assert moves == list(range(1, 21))
        await watcher.drain(0.2)
        seen = [m["board"]["moves"] for m in watcher.seen if m["type"] == "progress"]
        assert seen[-1] == 20
        members = {m.decode() for m in rds.smembers(room_key(code) + ":nodes")}
        assert members == {one.id, two.id}  # the dead node left at the next event
        for c in (a, b, watcher):
            await c.close()
    finally:
        await one.stop()
        await two.stop()


async def test_nothing_comes_before_a_welcome_and_versions_only_go_up(node) -> None:
    a, b = await start_race(node.port)
    code = a.seen[0]["room"]["code"]
    # a watcher's own arrival changes the spectator count: that event follows its welcome
    watcher = await Client.open(node.port)
    await watcher.send("watch", code=code)
    first = await watcher.recv()
    assert first["type"] == "welcome"
    count = await watcher.expect("spectators")
    assert count["v"] > first["v"] and count["count"] == 1
    # b reconnects while a plays fast: `resumed` comes first, then every event once, in
    # version order
    token, since = b.token, first["v"]
    await b.ws.close()

    async def play() -> None:
        for seq in range(1, 21):  # the stock holds 24 cards
            await a.send("move", seq=seq, action="draw")
            await asyncio.sleep(0.002)

    player = asyncio.create_task(play())
    c = await Client.open(node.port)
    await c.send("resume", token=token, since=since)
    await player
    await asyncio.sleep(0.3)
    got = await c.drain(0.3)
    assert got[0]["type"] == "resumed"
    versions = [m["v"] for m in got[1:] if "v" in m]
    assert versions == sorted(set(versions))  # each once, only going up
    assert versions[0] == since + 1
    moves = [m["progress"]["moves"] for m in got if m["type"] == "progress"]
    assert moves == list(range(1, 21))
    for client in (a, c, watcher):
        await client.close()


async def test_a_node_missing_from_the_node_set_is_back_with_what_it_missed(
    redis_url,
) -> None:
    """A Redis restart can lose this node's entry in a room's node set (or a closing
    hub's leaving come after a new one's joining): the other node's moves are then not
    published to it. Its next rejoin (every heartbeat) puts it back and fetches what it
    missed; a move of its own meanwhile is acknowledged in version order, after the
    events before it, and its racer never gets the own move's progress as well."""
    from klondike_race.service.node import Node

    from .conftest import make_config

    one = Node(make_config(redis_url), redis_url)
    two = Node(make_config(redis_url), redis_url)
    port_one, port_two = await one.start(), await two.start()
    try:
        ann = await Client.open(port_one)
        code = (await ann.request("create", "welcome", name="ann"))["room"]["code"]
        bob = await Client.open(port_two)
        assert (await bob.request("join", "welcome", code=code, name="bob"))["type"]
        for c in (ann, bob):
            await c.send("ready", ready=True)
        for c in (ann, bob):
            await c.expect("start")
        rds = redis.Redis.from_url(redis_url)
        rds.srem(room_key(code) + ":nodes", one.id)  # lost
        assert (await bob.move("draw", seq=1))["type"] == "ack"  # not published to one
        assert (await bob.move("draw", seq=2))["type"] == "ack"
        rds.sadd(room_key(code) + ":nodes", one.id)  # back, nothing fetched yet
        mine = await ann.move("draw", seq=1)  # a gap before it: fetched, then its ack
        assert mine["type"] == "ack"
        since = [m for m in ann.seen if m.get("v", 0) > 0 and m["type"] in ("progress", "ack")]
        assert [(m["type"], m.get("player")) for m in since][-3:] == [
            ("progress", "p2"),
            ("progress", "p2"),
            ("ack", None),
        ], since
        versions = [m["v"] for m in since]
        assert versions == sorted(versions) and len(set(versions)) == len(versions), since
        await asyncio.sleep(0.5)
        assert [m for m in await ann.drain(0.2) if m.get("player") == "p1"] == []  # no echo
        # lost again, and nothing of its own to show the gap: the heartbeat's rejoin
        rds.srem(room_key(code) + ":nodes", one.id)
        assert (await bob.move("draw", seq=3))["type"] == "ack"
        await asyncio.sleep(0.3)
        assert [m for m in await ann.drain(0.1) if m["type"] == "progress"] == []
        await one.hubs.rejoin()
        got = await ann.expect("progress")
        assert (got["player"], got["progress"]["moves"]) == ("p2", 3), got
        assert one.id.encode() in rds.smembers(room_key(code) + ":nodes")
        for c in (ann, bob):
            await c.close()
    finally:
        await one.stop()
        await two.stop()


async def test_the_spectator_count_is_true_after_many_leave_at_once(node, redis_url) -> None:
    """Each departure writes this node's count; written concurrently, an older count could
    land last and stay (a room told 29 spectators with 1 there). Writes of one room are
    one after another, each of the count as it is then."""
    a, b = await start_race(node.port)
    code = a.seen[0]["room"]["code"]
    watchers = [await Client.open(node.port) for _ in range(40)]
    for w in watchers:
        await w.request("watch", "welcome", code=code)
    hub = node.hubs.get(code)
    rds = redis.Redis.from_url(redis_url)
    spect = room_key(code) + ":spect"
    for _ in range(200):
        if rds.hget(spect, node.id) == b"40":
            break
        await asyncio.sleep(0.02)
    for w in watchers[1:]:
        w.ws.transport.abort()  # all at once, no closing handshake
    for _ in range(200):
        if sum(1 for c in hub.conns if c.role == "spectator") == 1:
            break
        await asyncio.sleep(0.02)
    await asyncio.sleep(0.3)  # the last writes land
    assert rds.hget(spect, node.id) == b"1"
    told = [m["count"] for m in a.seen + await a.drain(0.2) if m["type"] == "spectators"]
    assert told[-1] == 1
    late = await Client.open(node.port)
    welcome = await late.request("watch", "welcome", code=code)
    assert welcome["spectators"] == 1  # before its own arrival is counted
    assert (await late.expect("spectators"))["count"] == 2
    for c in (a, b, watchers[0], late):
        await c.close()
