"""The sweeper: rooms nobody plays any more are closed, and finished rooms expire."""

from __future__ import annotations

import asyncio
import time
from collections.abc import AsyncIterator

import orjson
import pytest
import redis

from klondike_race.service.logs import configure
from klondike_race.service.node import Node
from klondike_race.service.node.sweeper import DEADLINE_GRACE_MS
from klondike_race.service.store import moves_key, room_key

from .conftest import Client, make_config, start_race

FAST = {
    "sweep_interval_s": 0.2,
    "abandoned_s": 1,
    "away_s": 1,
    "waiting_abandoned_s": 1,
    "keep_finished_s": 3,
}


@pytest.fixture
async def nodes(redis_url: str, request: pytest.FixtureRequest) -> AsyncIterator[list[Node]]:
    """Two nodes on one Redis, both sweeping every 0.2 s (settings of FAST; a test may
    change some: ``@pytest.mark.parametrize("nodes", [{...}], indirect=True)``)."""
    configure(json=False, level="warning")
    out = []
    for _ in range(2):
        node = Node(make_config(redis_url, **{**FAST, **getattr(request, "param", {})}), redis_url)
        node.port = await node.start()  # type: ignore[attr-defined]
        out.append(node)
    yield out
    for node in out:
        await node.stop()


def state(rds: redis.Redis, code: str) -> dict | None:
    raw = rds.hget(room_key(code), "state")
    return orjson.loads(raw) if raw else None


async def test_abandoned_rooms_are_closed_once_and_expire(nodes, redis_url) -> None:
    one, two = nodes
    rds = redis.Redis.from_url(redis_url)
    # a race without a time limit that everyone leaves
    a, b = await start_race(one.port)
    gone = a.seen[0]["room"]["code"]
    assert (await a.move("draw"))["type"] == "ack"
    # a public waiting room whose host leaves
    host = await Client.open(two.port)
    waiting = (await host.request("create", "welcome", name="w"))["room"]["code"]
    # a race whose players stay (on the other node)
    c, d = await start_race(two.port)
    stays = c.seen[0]["room"]["code"]
    lister = await Client.open(one.port)
    # a race is listed once its players' node has marked it in a sweep (0.2 s here; a
    # busy machine can stall one)
    deadline = time.monotonic() + 10
    while True:
        listed = await lister.request("rooms", "rooms")
        codes = {r["code"] for r in listed["rooms"]}
        if {gone, waiting, stays} <= codes:
            break
        assert time.monotonic() < deadline, codes
        await asyncio.sleep(0.1)
    for client in (a, b, host):
        await client.close()
    await asyncio.sleep(2.5)
    for code, reason in ((gone, "abandoned"), (waiting, "abandoned")):
        room = state(rds, code)
        assert room is not None and room["status"] == "finished", room
        assert room["end_reason"] == reason
        assert 0 < rds.ttl(room_key(code)) <= 3
        assert rds.zscore("rooms:active", code) is None
    assert 0 < rds.ttl(moves_key(gone, "p1")) <= 3
    # closed once, though two nodes sweep
    events = [orjson.loads(e) for e in rds.zrange(room_key(gone) + ":events", 0, -1)]
    ends = [e for e in events if e["type"] == "room" and e["room"]["phase"] == "finished"]
    assert len(ends) == 1
    # the race with players connected goes on
    assert state(rds, stays)["status"] == "started"
    assert (await c.move("draw"))["type"] == "ack"
    # listed while its players' node marks it each sweep (0.2 s here: a busy machine
    # can stall a sweep past the two intervals a listing waits, hiding it for a moment)
    deadline = time.monotonic() + 10
    while True:
        listed = await lister.request("rooms", "rooms")
        codes = {r["code"] for r in listed["rooms"]}
        assert gone not in codes and waiting not in codes
        if stays in codes:
            break
        assert time.monotonic() < deadline, codes
        await asyncio.sleep(0.1)
    # after the retention (its keys' TTL, at most 3 s, read above) its keys are gone
    deadline = time.monotonic() + 4
    while state(rds, gone) is not None or rds.exists(moves_key(gone, "p1")):
        assert time.monotonic() < deadline, rds.pttl(room_key(gone))
        await asyncio.sleep(0.1)
    listed = await lister.request("rooms", "rooms")
    assert gone not in {r["code"] for r in listed["rooms"]}
    for client in (c, d, lister):
        await client.close()


# finished rooms kept 30 s, not 3: the watcher that reads the results comes a good second
# after the end, longer on a busy machine
@pytest.mark.parametrize("nodes", [{"keep_finished_s": 30}], indirect=True, ids=["kept_30_s"])
async def test_a_time_limit_that_ends_with_nobody_there_ends_the_race(nodes, redis_url) -> None:
    """Not after KR_ABANDONED_S of idleness: at the first sweep past the limit (with its
    grace), with results: every unfinished game out of time, the record ended."""
    one, _ = nodes
    rds = redis.Redis.from_url(redis_url)
    a, b = await start_race(one.port, time_limit=10)
    code = a.seen[0]["room"]["code"]
    ends_at = next(m for m in a.seen if m["type"] == "start")["room"]["ends_at"]
    assert rds.zscore("rooms:deadlines", code) == ends_at
    assert (await a.move("draw"))["type"] == "ack"
    for client in (a, b):
        await client.close()
    # idle long past KR_ABANDONED_S (1 s) yet not closed: a race with a time limit waits
    # for it (a player may come back)
    await asyncio.sleep(3)
    assert state(rds, code)["status"] == "started"
    wait = ends_at / 1000 + DEADLINE_GRACE_MS / 1000 + 1 - time.time()
    await asyncio.sleep(max(0.0, wait))
    room = state(rds, code)
    assert room["status"] == "finished" and room["end_reason"] == "time_limit", room
    assert rds.zscore("rooms:deadlines", code) is None
    assert rds.zscore("rooms:active", code) is None
    watcher = await Client.open(one.port)
    welcome = await watcher.request("watch", "welcome", code=code)
    assert welcome["type"] == "welcome", welcome
    assert {r["status"] for r in welcome["leaderboard"]} == {"out_of_time"}
    await watcher.close()


# KR_ABANDONED_S 2: a room a player is connected to is marked every sweep (0.2 s), and a
# loaded machine's sweeps stalled past 1 s, which let the other node take it for abandoned;
# each wait below is longer than it, so only a connected player can have kept the room
@pytest.mark.parametrize("nodes", [{"abandoned_s": 2}], indirect=True, ids=["abandoned_s=2"])
async def test_a_returning_player_keeps_the_room_alive(nodes, redis_url) -> None:
    one, _ = nodes
    rds = redis.Redis.from_url(redis_url)
    a, b = await start_race(one.port)
    code = a.seen[0]["room"]["code"]
    token = b.token
    await b.close()
    for _ in range(5):  # a stays connected: the room is touched every sweep
        await asyncio.sleep(0.5)
        assert state(rds, code)["status"] == "started"
    back = await Client.open(one.port)
    assert (await back.request("resume", "welcome", token=token))["type"] == "welcome"
    await a.close()
    await asyncio.sleep(2.5)
    assert state(rds, code)["status"] == "started"
    await back.close()
    for _ in range(150):  # abandoned 2 s after the last player left, at a sweep
        if state(rds, code)["status"] == "finished":
            break
        await asyncio.sleep(0.1)
    assert state(rds, code)["status"] == "finished"


async def finished(client: Client, timeout: float = 5.0) -> dict:
    """The room event that says the race is over, as ``client`` gets it."""
    deadline = time.monotonic() + timeout
    while True:
        event = await client.expect("room", timeout=max(0.01, deadline - time.monotonic()))
        if event["room"]["phase"] == "finished":
            return event


async def seat_race(one: Node, two: Node) -> tuple[Client, Client]:
    """Ann on one node, Bob on the other, racing."""
    ann = await Client.open(one.port)  # type: ignore[attr-defined]
    code = (await ann.request("create", "welcome", name="ann", capacity=2))["room"]["code"]
    bob = await Client.open(two.port)  # type: ignore[attr-defined]
    assert (await bob.request("join", "welcome", code=code, name="bob"))["type"] == "welcome"
    for c in (ann, bob):
        await c.send("ready", ready=True)
    for c in (ann, bob):
        await c.expect("start")
    return ann, bob


# KR_ABANDONED_S 3: a busy machine stalled Ann's node's sweeps past 1 s, and the other node
# took her race, her connection open, for abandoned (the test is of Bob away, not that)
@pytest.mark.parametrize("nodes", [{"abandoned_s": 3}], indirect=True, ids=["abandoned_s=3"])
async def test_players_away_are_resigned_once_the_other_games_ended(nodes, redis_url) -> None:
    """Bob leaves for good; Ann resigns: the race ends within KR_AWAY_S (and a sweep),
    Bob's game as it stood, resigned for him (its log says so), with the results."""
    one, two = nodes
    rds = redis.Redis.from_url(redis_url)
    ann, bob = await seat_race(one, two)
    code = ann.seen[0]["room"]["code"]
    assert (await bob.move("draw"))["type"] == "ack"
    await bob.close()
    await asyncio.sleep(1.5)  # away past KR_AWAY_S, but Ann plays on: nothing ends
    assert state(rds, code)["status"] == "started"
    assert (await ann.request("resign", "ack", seq=1))["type"] == "ack"
    t0 = time.monotonic()
    event = await finished(ann)
    assert time.monotonic() - t0 < 1 + 3 * 0.2 + 1  # away, a sweep or so, and the step
    assert event["room"]["end_reason"] == "all_over"
    rows = {r["player"]: r for r in event["leaderboard"]}
    assert rows[bob.player]["status"] == "resigned" and rows[bob.player]["moves"] == 1
    assert rds.lrange(moves_key(code, bob.player), 0, -1)[-1].startswith(b"resign@")
    told = [m for m in ann.seen if m["type"] == "progress" and m["player"] == bob.player]
    assert told and told[-1]["progress"]["status"] == "resigned"
    deadline = time.monotonic() + 2  # (the node that ended it untracks it just after)
    while rds.zscore("rooms:partly_over", code) is not None and time.monotonic() < deadline:
        await asyncio.sleep(0.05)
    assert rds.zscore("rooms:partly_over", code) is None
    await ann.close()


# KR_AWAY_S 3 for absences of 0.5 s: on a busy machine a reconnection and resume take
# longer than the 0.5 s the test sleeps, and the test is of absences short of the bound
@pytest.mark.parametrize(
    "nodes", [{"away_s": 3, "abandoned_s": 10}], indirect=True, ids=["away_s=3"]
)  # (a connected player's room is never abandoned; 1 s raced a loaded machine's sweeps)
async def test_a_player_back_in_time_plays_on(nodes, redis_url) -> None:
    """Away less than KR_AWAY_S at a time: never resigned, however long the race."""
    one, two = nodes
    rds = redis.Redis.from_url(redis_url)
    ann, bob = await seat_race(one, two)
    code = ann.seen[0]["room"]["code"]
    token = bob.token
    assert (await ann.request("resign", "ack", seq=1))["type"] == "ack"
    for _ in range(3):  # away 0.5 s, back, away again: each absence shorter than 3 s
        await bob.close()
        await asyncio.sleep(0.5)
        bob = await Client.open(two.port)  # seen by the other node's marks
        assert (await bob.request("resume", "welcome", token=token))["type"] == "welcome"
        await asyncio.sleep(0.5)
    assert state(rds, code)["status"] == "started"
    assert (await bob.move("draw"))["type"] == "ack"  # still Bob's game to play
    await bob.close()
    event = await finished(ann, timeout=10)  # Bob away for good: resigned after 3 s
    rows = {r["player"]: r for r in event["leaderboard"]}
    assert rows["p2"]["status"] == "resigned" and rows["p2"]["moves"] == 1
    await ann.close()


async def test_a_player_who_never_came_is_resigned_from_the_start(nodes, redis_url) -> None:
    """A seat taken and left during the countdown (``leave`` then keeps the seat): its
    player is away from the start, resigned once the others' games ended."""
    one, _ = nodes
    host = await Client.open(one.port)
    code = (await host.request("create", "welcome", name="ann", capacity=2))["room"]["code"]
    bob = await Client.open(one.port)
    assert (await bob.request("join", "welcome", code=code, name="bob"))["type"] == "welcome"
    await host.send("ready", ready=True)
    await bob.send("ready", ready=True)
    while (await bob.expect("room"))["room"]["phase"] != "countdown":
        pass
    assert (await bob.request("leave", "left"))["type"] == "left"
    await bob.close()
    await host.expect("start", timeout=5)
    assert (await host.request("resign", "ack", seq=1))["type"] == "ack"
    event = await finished(host)
    rows = {r["player"]: r for r in event["leaderboard"]}
    assert rows["p2"]["status"] == "resigned" and rows["p2"]["moves"] == 0
    await host.close()


async def test_the_lobby_lists_no_race_nobody_is_connected_to(redis_url) -> None:
    """A public race whose players have all gone stays open for their return
    (``KR_ABANDONED_S``) but leaves the lobby's list within two sweep intervals."""
    configure(json=False, level="warning")
    node = Node(make_config(redis_url, sweep_interval_s=0.2, abandoned_s=60), redis_url)
    port = await node.start()
    try:
        a, b = await start_race(port)
        code = a.seen[0]["room"]["code"]
        looker = await Client.open(port)

        async def listed() -> list[str]:
            got = await looker.request("rooms", "rooms")
            return [r["code"] for r in got["rooms"]]

        async def with_the_race() -> dict:
            """A listing that shows the race (a sweep stalled past two intervals on a
            loaded machine hides it for a moment)."""
            for _ in range(100):
                got = await looker.request("rooms", "rooms")
                if code in [r["code"] for r in got["rooms"]]:
                    return got
                await asyncio.sleep(0.1)
            raise AssertionError(f"{code} never listed")

        await asyncio.sleep(0.6)  # connected through several sweeps: listed
        got = await with_the_race()  # with the lobby's counts: 3 here, racing 1
        assert (got["online"], got["racing"]) == (3, 1)
        other = Node(make_config(redis_url), redis_url)  # another node: its heartbeat counts
        await other.start()
        try:
            await other.store.sweeping.heartbeat(5)
            assert (await looker.request("rooms", "rooms"))["online"] == 8
        finally:
            await other.stop()
        assert (await looker.request("rooms", "rooms"))["online"] == 3  # gone with it
        await a.close()
        await b.close()
        await asyncio.sleep(0.6)  # nobody since: not listed, still a started race
        assert code not in await listed()
        assert state(redis.Redis.from_url(redis_url), code)["status"] == "started"
        back = await Client.open(port)  # a player returns: listed again
        assert (await back.request("resume", "welcome", token=a.token))["type"] == "welcome"
        assert code in await listed()
        for c in (back, looker):
            await c.close()
    finally:
        await node.stop()


# KR_AWAY_S 3 and a recording of 4.8 s: its player, moving every 0.6 s, is never away on a
# busy machine, and a ghost taken for away would be resigned before its end
@pytest.mark.parametrize(
    "nodes", [{"away_s": 3, "abandoned_s": 10}], indirect=True, ids=["away_s=3"]
)  # (a connected player's room is never abandoned; 1 s raced a loaded machine's sweeps)
async def test_a_ghost_is_never_away(nodes) -> None:
    """A ghost's seat has no connection: it is the server's. The player resigning at
    once leaves it to play its recorded game to its end, not resigned for being away."""
    from .test_ghosts import record

    one, _ = nodes
    code = await record(one.port, moves=8, gap=0.6)  # 4.8 s of recorded play
    me = await Client.open(one.port)
    assert (await me.request("ghost", "welcome", code=code, player="p1", name="Me"))["type"]
    assert (await me.request("resign", "ack", seq=1))["type"] == "ack"
    event = await finished(me, timeout=15)
    ghost = next(r for r in event["leaderboard"] if r["player"] == "p2")
    # all its moves, then its recorded resignation (resigned for being away, after 3 s
    # of a race, it would have made about 5)
    assert ghost["moves"] == 8 and ghost["status"] == "resigned", ghost
    told = [
        m["progress"]["moves"] for m in me.seen if m["type"] == "progress" and m["player"] == "p2"
    ]
    assert told[:8] == list(range(1, 9)), told
    await me.close()
