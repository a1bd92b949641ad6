"""Rematch: after a race, a new room on the same settings, announced to everyone."""

from __future__ import annotations

from klondike_race.service.logs import configure
from klondike_race.service.node import Node

from .conftest import Client, make_config, start_race


async def test_rematch_creates_one_room_and_tells_everyone(node) -> None:
    settings = {"draw": 3, "passes": 3, "undo": True}
    a, b = await start_race(node.port, settings=settings, time_limit=600, capacity=3, private=True)
    code = a.seen[0]["room"]["code"]
    viewer = await Client.open(node.port)
    await viewer.request("watch", "welcome", code=code)
    early = await a.request("rematch", "welcome")
    assert early["type"] == "error" and early["reason"] == "race_not_over"
    for c in (a, b):
        assert (await c.request("resign", "ack", seq=1))["type"] == "ack"
    for c in (a, b, viewer):
        room = await c.expect("room")
        while room["room"]["phase"] != "finished":
            room = await c.expect("room")
    assert (await viewer.request("rematch", "welcome"))["reason"] == "not_a_player"
    # a asks: a new room on the same settings, a seated in it as its host
    welcome = await a.request("rematch", "welcome")
    assert welcome["type"] == "welcome" and welcome["token"]
    new = welcome["room"]
    assert new["code"] != code and new["phase"] == "waiting"
    assert new["settings"] == a.seen[0]["room"]["settings"]
    assert (new["capacity"], new["time_limit"], new["host"]) == (3, 600, "p1")
    # the others (players and spectators) get an event naming it
    for c in (b, viewer):
        event = await c.expect("room")
        assert event["room"]["code"] == code and event["room"]["rematch"] == new["code"]
    # b asks too: the same room, not a second one
    joined = await b.request("rematch", "welcome")
    assert joined["type"] == "welcome" and joined["room"]["code"] == new["code"]
    assert [p["id"] for p in joined["room"]["players"]] == ["p1", "p2"]
    # the two can race again
    await a.send("ready")
    await b.send("ready")
    for c in (a, b):
        await c.expect("start")
    assert (await a.move("draw"))["type"] == "ack"
    for c in (a, b, viewer):
        await c.close()


async def test_analysis_and_rematch_across_two_nodes(redis_url) -> None:
    """Players on different nodes: the analysis (made once, by the node that finished the
    race) and the rematch reach both."""
    configure(json=False, level="warning")
    one = Node(make_config(redis_url), redis_url)
    two = Node(make_config(redis_url), redis_url)
    ports = [await one.start(), await two.start()]
    try:
        a = await Client.open(ports[0])
        code = (await a.request("create", "welcome", name="ann"))["room"]["code"]
        b = await Client.open(ports[1])
        assert (await b.request("join", "welcome", code=code, name="bob"))["type"] == "welcome"
        for c in (a, b):
            await c.send("ready")
        for c in (a, b):
            await c.expect("start")
        assert (await a.move("draw"))["type"] == "ack"
        for c in (a, b):
            assert (await c.request("resign", "ack", seq=c.seq + 1))["type"] == "ack"
        got = [await c.expect("analysis", timeout=30) for c in (a, b)]
        assert got[0]["analysis"] == got[1]["analysis"] and got[0]["v"] == got[1]["v"]
        assert set(got[0]["analysis"]["players"]) == {"p1", "p2"}
        welcome = await b.request("rematch", "welcome")
        new = welcome["room"]["code"]
        event = await a.expect("room")
        assert event["room"]["rematch"] == new
        joined = await a.request("rematch", "welcome")
        assert joined["room"]["code"] == new and joined["player"] == "p2"
        for c in (a, b):
            await c.close()
    finally:
        await one.stop()
        await two.stop()
