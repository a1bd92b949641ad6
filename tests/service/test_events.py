"""Room events reach each connection in version order, gaps filled from Redis."""

from __future__ import annotations

import asyncio

import orjson
import pytest
import redis
from websockets.exceptions import ConnectionClosed

from klondike_race.service.roomevent import RoomEvent
from klondike_race.service.store import moves_key, room_key
from tests.conftest import until

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
    hub.feed(RoomEvent(v + 2, {"type": "spectators", "count": 8}))
    hub.feed(RoomEvent(v + 2, {"type": "spectators", "count": 8}))  # a duplicate is dropped
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
    hub.feed(RoomEvent.stored(p1_moved(hub.version + 1, progress, 3, "d@300")))
    got = await watcher.expect("progress")
    assert got["progress"]["moves"] == 3 and "board" not in got
    boards = await watcher.expect("boards")
    assert boards["boards"]["p1"]["moves"] == 3 and boards["boards"]["p1"]["stock"] == 21
    assert boards["boards"]["p2"]["moves"] == 0
    # and the copy is in step again: the next move's board comes with its event
    rds.rpush(moves_key(code, "p1"), "d@400")
    hub.feed(RoomEvent.stored(p1_moved(hub.version + 1, progress, 4, "d@400")))
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
        await one.attendance.rejoin()
        got = await ann.expect("progress")
        assert (got["player"], got["progress"]["moves"]) == ("p2", 3), got
        assert one.id.encode() in rds.smembers(room_key(code) + ":nodes")
        for c in (ann, bob):
            await c.close()
    finally:
        await one.stop()
        await two.stop()


async def test_the_spectator_count_is_true_after_hundreds_leave_at_once(redis_url) -> None:
    """Each departure writes its node's count; written concurrently, an older count could
    land last and stay (a room told 29 spectators with 1 there). A node writes a room's
    count one write at a time, each of the count as it is then."""
    from klondike_race.service.node import Node

    from .conftest import make_config

    nodes = [Node(make_config(redis_url), redis_url) for _ in range(2)]
    ports = [await n.start() for n in nodes]
    try:
        a, b = await start_race(ports[0])
        code = a.seen[0]["room"]["code"]

        async def watch(port: int) -> Client:
            w = await Client.open(port)
            await w.request("watch", "welcome", code=code)
            return w

        watchers = await asyncio.gather(*(watch(ports[i % 2]) for i in range(300)))
        rds = redis.Redis.from_url(redis_url)
        spect = room_key(code) + ":spect"

        def counts() -> list[bytes | None]:
            return [rds.hget(spect, n.id) for n in nodes]

        await until(lambda: counts() == [b"150", b"150"])
        for w in watchers[2:]:
            w.ws.transport.abort()  # all at once, no closing handshake
        hubs = [n.hubs.get(code) for n in nodes]
        await until(lambda: all(len(h.conns) == 1 + (h is hubs[0]) * 2 for h in hubs))
        await asyncio.sleep(0.3)  # the last writes land
        assert counts() == [b"1", b"1"]
        await a.drain(0.2)
        told = [m["count"] for m in a.seen if m["type"] == "spectators"]
        assert told[-1] == 2
        late = await Client.open(ports[1])
        welcome = await late.request("watch", "welcome", code=code)
        assert welcome["spectators"] == 2  # before its own arrival is counted
        assert (await late.expect("spectators"))["count"] == 3
        for c in (a, b, watchers[0], watchers[1], late):
            await c.close()
    finally:
        for n in nodes:
            await n.stop()


async def test_a_spectator_count_written_late_does_not_stay(node, redis_url) -> None:
    """The interleaving made to happen: the first departure's write is held up in flight,
    the second's is sent meanwhile. The count stored is the count after both."""
    a, b = await start_race(node.port)
    code = a.seen[0]["room"]["code"]
    one, two = await Client.open(node.port), await Client.open(node.port)
    for w in (one, two):
        await w.request("watch", "welcome", code=code)
    rds = redis.Redis.from_url(redis_url)
    spect = room_key(code) + ":spect"
    await until(lambda: rds.hget(spect, node.id) == b"2")
    rooms = node.store.rooms
    real = rooms.set_spectators
    held = asyncio.Event()

    async def held_first(code: str, count: int) -> tuple[int, int]:
        if not held.is_set():
            held.set()
            await asyncio.sleep(0.3)  # a slow round trip
        return await real(code, count)

    rooms.set_spectators = held_first  # type: ignore[method-assign]
    await one.close()
    await held.wait()
    await two.close()
    # 0 once both writes have landed: the node's entry gone (a stale 1 would stay)
    await until(lambda: rds.hget(spect, node.id) is None)
    await a.drain(0.2)
    assert [m["count"] for m in a.seen if m["type"] == "spectators"][-1] == 0
    for c in (a, b):
        await c.close()


async def test_events_arriving_during_a_resync_come_after_it_in_order(node, redis_url) -> None:
    """A resync reads the room's version, then more (the room, its analysis, the boards).
    Events that arrive meanwhile, past that version, are not delivered before the resync's
    snapshot nor dropped: they follow it, once each, in version order."""
    a, b = await start_race(node.port)
    code = a.seen[0]["room"]["code"]
    watcher = await Client.open(node.port)
    await watcher.request("watch", "welcome", code=code)
    await watcher.expect("spectators")
    hub = node.hubs.get(code)
    v = hub.version
    rds = redis.Redis.from_url(redis_url)
    rooms = node.store.rooms
    real_load = rooms.load
    loading, go_on = asyncio.Event(), asyncio.Event()

    async def held_load(code: str):  # the resync's second read, held up
        loading.set()
        await go_on.wait()
        return await real_load(code)

    rooms.load = held_load  # type: ignore[method-assign]
    resync = asyncio.create_task(hub.resync())
    await loading.wait()
    rooms.load = real_load  # type: ignore[method-assign]
    # stored by other nodes after the resync read the version, published to this one
    later = [{"v": v + i, "type": "spectators", "count": 10 + i} for i in (1, 2)]
    for event in later:
        rds.zadd(room_key(code) + ":events", {orjson.dumps(event): event["v"]})
        rds.set(room_key(code) + ":ver", event["v"])
        hub.feed(RoomEvent.stored(event))
    await asyncio.sleep(0.05)
    go_on.set()
    await resync
    got = [await watcher.expect("resync", "spectators") for _ in range(3)]
    assert [(m["type"], m["v"]) for m in got] == [
        ("resync", v),
        ("spectators", v + 1),
        ("spectators", v + 2),
    ]
    assert hub.version == v + 2
    assert not [m for m in await watcher.drain(0.4) if "v" in m]  # nothing twice
    for c in (a, b, watcher):
        await c.close()


async def test_a_move_read_back_before_its_commit_answers_comes_as_its_ack(node) -> None:
    """This node reads the room's stored events (a gap filled, a catch-up) after the
    store ran a move's commit and before its answer came back: the move's event waits for
    the answer, so the mover gets the ack in the event's place, not a progress of their
    own move, and the others get the progress once, in order."""
    a, b = await start_race(node.port)
    code = a.seen[0]["room"]["code"]
    hub = node.hubs.get(code)
    log = node.store.log
    real_append = log.append
    loop = asyncio.get_running_loop()
    ran = asyncio.Event()

    def late_answer(*args, **kwargs):  # the store runs it now, its answer comes later
        answer = real_append(*args, **kwargs)
        late: asyncio.Future[int] = loop.create_future()

        def came(f: asyncio.Future[int]) -> None:
            ran.set()
            loop.call_later(0.3, late.set_result, f.result())

        answer.add_done_callback(came)
        return late

    log.append = late_answer  # type: ignore[method-assign]
    await a.send("move", seq=1, action="draw")
    await ran.wait()
    log.append = real_append  # type: ignore[method-assign]
    v = hub.version
    await hub.events_missed()  # reads the stored move back meanwhile
    await asyncio.sleep(0.1)
    assert hub.version == v  # held for the commit's answer
    ack = await a.expect("ack")
    assert ack["seq"] == 1 and ack["v"] == v + 1
    assert not [m for m in a.seen if m["type"] == "progress"]
    await b.expect("progress")  # (others' updates may be batched: a busy machine is slow)
    await b.drain(0.2)  # and nothing more
    assert [m["v"] for m in b.seen if m["type"] == "progress"] == [v + 1]
    for c in (a, b):
        await c.close()


async def test_a_move_made_while_the_boards_are_read_is_on_them(node) -> None:
    """A connection that sees boards arrives: the node reads the players' move logs to
    make its copies of their games. A move of a player whose log was read already, made
    before the others' were (their reads are one round trip, but the move's event may
    still arrive while it is on its way: here the reads are split to widen that window),
    comes as an event while the copies are not made yet: it is played on them when they
    are (the welcome, and later boards, show it), not lost until that player's next
    move."""
    a, b = await start_race(node.port, private=True)  # spectators see the boards, live
    code = a.seen[0]["room"]["code"]
    log = node.store.log
    real_read_each = log.read_each
    second, go_on = asyncio.Event(), asyncio.Event()

    async def held_read_each(room: str, players: list[str]) -> list[list[str]]:
        assert players[0] == "p1"
        first = await real_read_each(room, players[:1])
        second.set()  # the first player's log is read by now
        await go_on.wait()
        return first + await real_read_each(room, players[1:])

    log.read_each = held_read_each  # type: ignore[method-assign]
    try:
        watcher = await Client.open(node.port)
        await watcher.send("watch", code=code)
        await second.wait()
        moved = await a.move("draw")  # p1's move: logged after its log was read
        assert moved["type"] == "ack"
        go_on.set()
        welcome = await watcher.expect("welcome")
    finally:
        log.read_each = real_read_each  # type: ignore[method-assign]
    assert welcome["boards"]["p1"]["stock"] == moved["board"]["stock"], welcome["boards"]["p1"]
    assert welcome["boards"]["p1"]["moves"] == 1
    for c in (a, b, watcher):
        await c.close()


async def test_a_racers_events_keep_their_order_when_the_batch_timer_shares_their_turn(
    node, redis_url
) -> None:
    """Others' progress reaches a racer batched (it waits for its phase's timer); a room
    or spectators event, or the racer's own ack, is not (it waits for the end of the loop
    turn). When the timer is due in the turn that delivered them, it runs after the code
    that pushed them: the batched progress must not leave ahead of the unbatched event
    before it. The timer's turn is made to come right after the deliveries, by a wrapper
    of the node's real flush (a racer saw ``progress v13, v10, v11`` at a race's start)."""
    from klondike_race.service.fanout import phase_of

    a, b = await start_race(node.port)
    code = a.seen[0]["room"]["code"]
    assert (await b.move("draw"))["type"] == "ack"
    moved = await a.expect("progress")  # p2's move, as another node would publish it
    hub = node.hubs.get(code)
    racer = next(c for c in hub.conns if c.player == a.seen[0]["player"])
    v = hub.version
    progress = moved["progress"]
    later = [
        {**p1_moved(v + 1, progress, 2, "d@2000"), "player": "p2"},  # batched for a
        {"v": v + 2, "type": "spectators", "count": 7},  # not batched
        {**p1_moved(v + 3, progress, 3, "d@3000"), "player": "p2"},  # batched again
    ]
    rds = redis.Redis.from_url(redis_url)
    for event in later:  # stored by another node
        rds.zadd(room_key(code) + ":events", {orjson.dumps(event): event["v"]})
    rds.set(room_key(code) + ":ver", v + 3)
    fanout = node.fanout
    real_flush = fanout._flush_batched
    fed = asyncio.Event()

    def deliver_then_flush() -> None:
        if not fed.is_set() and fanout._turn == phase_of(racer.ws):
            fed.set()  # delivered in this turn, ahead of the due timer
            for event in later[1:]:
                hub.feed(RoomEvent.stored(event))
        real_flush()

    fanout._flush_batched = deliver_then_flush  # type: ignore[method-assign]
    try:
        hub.feed(RoomEvent.stored(later[0]))  # held for a: the batch timer runs
        got = [await a.expect("progress", "spectators") for _ in range(3)]
    finally:
        fanout._flush_batched = real_flush  # type: ignore[method-assign]
    assert fed.is_set()
    assert [(m["type"], m["v"]) for m in got] == [
        ("progress", v + 1),
        ("spectators", v + 2),
        ("progress", v + 3),
    ]
    for c in (a, b):
        await c.close()


async def test_a_move_held_for_an_earlier_event_is_not_acknowledged_after_its_mover_left(
    node, redis_url
) -> None:
    """A racer's stored move waits in the hub for an earlier event still on its way from
    another node, and the racer leaves meanwhile: ``left`` is the last the room tells
    them (an ack after it would carry the room's version to a connection that is out of
    it, or already in another room). The move is stored: the other racer gets it."""
    a, b = await start_race(node.port)
    code = a.seen[0]["room"]["code"]
    hub = node.hubs.get(code)
    v = hub.version
    rds = redis.Redis.from_url(redis_url)
    rds.set(room_key(code) + ":ver", v + 1)  # v+1 stored elsewhere, its publication late
    await a.send("move", seq=1, action="draw")
    await until(lambda: v + 2 in hub.pending)  # the move's event, held for v+1
    assert (await a.request("leave", "left"))["type"] == "left"
    late = {"v": v + 1, "type": "spectators", "count": 7}
    rds.zadd(room_key(code) + ":events", {orjson.dumps(late): v + 1})  # the gap is filled
    moved = await b.expect("progress")
    assert (moved["v"], moved["player"], moved["progress"]["moves"]) == (v + 2, a.player, 1)
    assert hub.version == v + 2
    after = a.seen[a.seen.index(next(m for m in a.seen if m["type"] == "left")) :]
    assert [m["type"] for m in after + await a.drain(0.3)] == ["left"]
    for c in (a, b):
        await c.close()


async def test_a_room_whose_opening_failed_is_opened_anew_for_those_waiting_on_it(node) -> None:
    """Two connections ask for a room not open on this node at once: the second waits for
    the first one's opening, which fails (Redis went away). The first is closed with 1013
    (try again later, docs/protocol.md); the second is not handed the failed hub: it opens
    the room again and is welcomed."""
    a, b = await start_race(node.port)
    code = a.seen[0]["room"]["code"]
    for c in (a, b):
        assert (await c.request("leave", "left"))["type"] == "left"
    await until(lambda: node.hubs.get(code) is None)  # nobody here: closed
    rooms = node.store.rooms
    real_enter = rooms.enter
    loading, fail = asyncio.Event(), asyncio.Event()

    async def failing_enter(code: str):  # the opening's first step
        rooms.enter = real_enter  # type: ignore[method-assign]  # (the next opening's)
        loading.set()
        await fail.wait()
        raise redis.exceptions.ConnectionError("Connection reset by peer")

    rooms.enter = failing_enter  # type: ignore[method-assign]
    one, two = await Client.open(node.port), await Client.open(node.port)
    await one.send("watch", code=code)
    await loading.wait()
    await two.send("watch", code=code)
    await asyncio.sleep(0.1)  # the second is waiting for the first one's opening
    fail.set()
    with pytest.raises(ConnectionClosed):
        await one.expect("welcome", "error")
    assert one.ws.close_code == 1013
    welcome = await two.expect("welcome", "error")
    assert welcome["type"] == "welcome" and welcome["room"]["code"] == code, welcome
    assert welcome["room"]["phase"] == "racing" and set(welcome["boards"]) == {"p1", "p2"}
    for c in (a, b, one, two):
        await c.close()
