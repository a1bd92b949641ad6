"""Quick match by rating on an injected clock (store/matchmaking.py): close ratings pair
at once, far ones only once the window has widened enough, anyone after 10 s, never a
player with their own other device. Real Redis."""

from __future__ import annotations

import asyncio
import secrets
import time
from collections.abc import AsyncIterator

import orjson
import pytest
import redis.asyncio as aioredis

from klondike_race.service.domain import rating
from klondike_race.service.store.matchmaking import ANYONE_MS, PER_S, WINDOW, Matchmaking

from .conftest import Client

T0 = 1_800_000_000_000


@pytest.fixture
async def mm(redis_url: str) -> AsyncIterator[Matchmaking]:
    client = aioredis.from_url(redis_url)
    yield Matchmaking(client, "test", lambda _s: None)
    await client.aclose()


def player(who: str = "", address: str = "") -> dict:
    return {"name": who or "anon", "who": who, "guest": True, "address": address}


def tickets(pairs: list) -> list[tuple[str, str]]:
    return [(a[0], b[0]) for a, b in pairs]


async def test_close_ratings_pair_at_once_with_the_closest(mm) -> None:
    # a alone
    assert await mm.match(T0, 1, "a", 1500, player("g-a")) == []
    # c arrives close to a: paired at once, the older first
    got = await mm.match(T0 + 100, 1, "c", 1560, player("g-c"))
    assert tickets(got) == [("a", "c")]
    # each with the node holding its ticket (quick-match news goes to it)
    assert got[0][0][1] == {**player("g-a"), "node": "test"}
    assert got[0][1][1] == {**player("g-c"), "node": "test"}
    assert await mm.waiting(1) == 0
    # the closest of several: d waits, e comes far from it, g close to it
    assert await mm.match(T0, 1, "d", 1500, player("g-d")) == []
    assert await mm.match(T0, 1, "e", 1900, player("g-e")) == []
    got = await mm.match(T0, 1, "g", 1450, player("g-g"))
    assert tickets(got) == [("d", "g")]
    assert tickets(await mm.match(T0, 1, "h", 1850, player("g-h"))) == [("e", "h")]


async def test_far_ratings_pair_once_the_window_has_widened(mm) -> None:
    far = 300  # needs (300 - 100) / 50 = 4 s of waiting
    assert await mm.match(T0, 1, "a", 1500, player("g-a")) == []
    assert await mm.match(T0, 1, "b", 1500 + far, player("g-b")) == []
    wait_ms = (far - WINDOW) * 1000 // PER_S
    assert await mm.match(T0 + wait_ms - 50, 1) == []
    assert await mm.waiting(1) == 2
    got = await mm.match(T0 + wait_ms, 1)
    assert tickets(got) == [("a", "b")]


async def test_anyone_after_ten_seconds_but_never_oneself(mm) -> None:
    assert await mm.match(T0, 1, "a", 1000, player("g-a")) == []
    assert await mm.match(T0 + 1, 1, "b", 2900, player("g-b")) == []
    # the window at 9.9 s is 100 + 9.9 * 50 = 595 points: not 1900
    assert await mm.match(T0 + ANYONE_MS - 100, 1) == []
    assert tickets(await mm.match(T0 + ANYONE_MS, 1)) == [("a", "b")]
    # the same player on two devices never meets themselves, even after 10 s
    assert await mm.match(T0, 1, "x1", 1500, player("a-x")) == []
    assert await mm.match(T0, 1, "x2", 1500, player("a-x")) == []
    assert await mm.match(T0 + 60_000, 1) == []
    got = await mm.match(T0 + 60_000, 1, "y", 1500, player("g-y"))
    assert tickets(got) == [("x1", "y")]
    # x2 still waits, for anyone else (an anonymous player, who "")
    assert tickets(await mm.match(T0 + 60_000, 1, "n0", 1500, player())) == [("x2", "n0")]
    # anonymous players may meet each other
    assert await mm.match(T0, 1, "n1", 1500, player()) == []
    assert tickets(await mm.match(T0, 1, "n2", 1500, player())) == [("n1", "n2")]


async def test_cancelled_and_expired_tickets_never_pair(mm, redis_url) -> None:
    assert await mm.match(T0, 1, "a", 1500, player("g-a")) == []
    await mm.cancel("a", 1)
    assert await mm.match(T0, 1, "b", 1500, player("g-b")) == []
    # b waited over an hour: dropped
    assert await mm.match(T0 + 3_600_001, 1, "c", 1500, player("g-c")) == []
    assert await mm.waiting(1) == 1


async def test_waiting_players_are_paired_once_their_windows_meet(node, redis_url) -> None:
    """Over WebSockets: a 1700 and a 1500 player both wait, then the node's matcher pairs
    them once the window reaches 200 points (2 s)."""
    client = aioredis.from_url(redis_url)
    a, b = await Client.open(node.port), await Client.open(node.port)
    who = []
    for c in (a, b):
        got = await c.request("hello", "identity", device=secrets.token_urlsafe(24))
        who.append(got["player"]["id"])
    stats = {**rating.empty_stats(), "mu": rating.MU + 200 / rating.SCALE}
    await client.hset(f"player:{who[0]}:stats", "draw1", orjson.dumps(stats))
    t0 = time.monotonic()
    assert (await a.request("quick", "queued", name="ann"))["type"] == "queued"
    # a waits longer, so the pair is seated a first: tickets queued in the same millisecond
    # of the server's clock are ordered by their random names
    await asyncio.sleep(0.005)
    assert (await b.request("quick", "queued", name="bob"))["type"] == "queued"
    for c in (a, b):
        welcome = await c.expect("welcome", timeout=5)
        assert welcome["room"]["quick"] and welcome["room"]["rated"]
        assert (await c.expect("matched"))["token"] == c.token
    assert 1.9 < time.monotonic() - t0 < 4
    assert [p["who"] for p in welcome["room"]["players"]] == who
    for c in (a, b):
        await c.close()
    await client.aclose()


async def test_another_address_is_matched_before_the_same_one(mm) -> None:
    """A ticket from the waiting one's client address (a second identity) is its match only
    when no ticket from another address is in its window, whatever the ratings."""
    assert await mm.match(T0, 1, "own", 1500, player("g-own", "home")) == []
    assert await mm.match(T0 + 1, 1, "far", 1800, player("g-far", "elsewhere")) == []
    assert await mm.match(T0 + 2, 1, "scout", 1300, player("g-scout", "home")) == []
    # the next pass, 4 s on: the first's window (300 points) holds both; the scout,
    # closer, is passed over
    assert tickets(await mm.match(T0 + 4_000, 1)) == [("own", "far")]
    # alone with the same address, it is matched (the race moves no rating)
    again = await mm.match(T0 + 4_000, 1, "own2", 1300, player("g-own", "home"))
    assert tickets(again) == [("scout", "own2")]
    # a ticket that keeps no address (an older node's) shares none
    assert await mm.match(T0, 1, "a", 1500, player("g-a")) == []
    assert tickets(await mm.match(T0, 1, "b", 1500, player("g-b"))) == [("a", "b")]


async def test_each_variant_has_its_own_queue(mm) -> None:
    """A Draw 3 ticket never pairs with a Draw 1 one, however long they wait."""
    assert await mm.match(T0, 1, "one", 1500, player("g-1")) == []
    assert await mm.match(T0, 3, "three", 1500, player("g-3")) == []
    assert await mm.match(T0 + 60_000, 1) == [] and await mm.match(T0 + 60_000, 3) == []
    assert (await mm.waiting(1), await mm.waiting(3)) == (1, 1)
    got = await mm.match(T0 + 60_000, 3, "three-b", 1500, player("g-3b"))
    assert tickets(got) == [("three", "three-b")]
    assert (await mm.waiting(1), await mm.waiting(3)) == (1, 0)


async def test_a_draw_three_quick_match_races_draw_three(node) -> None:
    """Over WebSockets: two Draw 3 tickets make a Draw 3 race, rated in its variant; a
    Draw 1 player waiting meanwhile is left alone; a draw of 2 is refused."""
    ann, bob, cat = [await Client.open(node.port) for _ in range(3)]
    bad = await cat.request("quick", "queued", name="cat", draw=2)
    assert (bad["type"], bad["reason"]) == ("error", "bad_field"), bad
    assert (await cat.request("quick", "queued", name="cat"))["draw"] == 1
    assert (await ann.request("quick", "queued", name="ann", draw=3))["draw"] == 3
    await bob.send("quick", name="bob", draw=3)
    for c in (ann, bob):
        welcome = await c.expect("welcome", timeout=5)
        assert welcome["room"]["settings"]["draw"] == 3 and welcome["room"]["quick"]
    assert [m["type"] for m in await cat.drain(0.6)] == []  # still queued for Draw 1
    for c in (ann, bob, cat):
        await c.close()


@pytest.mark.parametrize("enter", ["create", "watch"])
async def test_entering_a_room_takes_the_ticket_out_of_the_queue(node, enter) -> None:
    """A connection is in one room at a time: a queued player who then creates a room (or
    watches one) is no longer waiting for a quick match, and is never pulled out of that
    room into one."""
    ann, bob, host = [await Client.open(node.port) for _ in range(3)]
    other = await host.request("create", "welcome", name="host")
    assert (await ann.request("quick", "queued", name="ann"))["type"] == "queued"
    if enter == "create":
        welcome = await ann.request("create", "welcome", name="ann")
    else:
        welcome = await ann.request("watch", "welcome", code=other["room"]["code"])
    assert welcome["type"] == "welcome", welcome
    assert (await bob.request("quick", "welcome", "queued", name="bob"))["type"] == "queued"
    later = await ann.drain(0.8)  # the node re-pairs every 0.5 s
    assert [m for m in later if m["type"] in ("welcome", "matched")] == [], later
    for c in (ann, bob, host):
        await c.close()


async def test_a_create_takes_the_ticket_out_before_its_room_is_made(node) -> None:
    """A winnable-only create spends seconds searching deals (the text seed "1000076" is
    undecided in Draw 3 within the 1 s a seed gets): an opponent who comes meanwhile is
    queued, not paired with the player who is creating a room."""
    ann, bob = [await Client.open(node.port) for _ in range(2)]
    assert (await ann.request("quick", "queued", name="ann"))["type"] == "queued"
    await ann.send(
        "create", name="ann", winnable_only=True, deal={"seed": "1000076"}, settings={"draw": 3}
    )
    await asyncio.sleep(0.3)  # the search of the first seed is under way
    assert (await bob.request("quick", "welcome", "queued", name="bob"))["type"] == "queued"
    welcome = await ann.expect("welcome", "error", timeout=30)
    assert welcome["type"] == "welcome" and not welcome["room"]["quick"], welcome
    later = await ann.drain(0.8)  # the node re-pairs every 0.5 s
    assert [m for m in later if m["type"] in ("welcome", "matched")] == [], later
    for c in (ann, bob):
        await c.close()


async def test_a_refused_watch_leaves_the_ticket_queued(node) -> None:
    """A refusal changes nothing: a queued player's watch of no room keeps the ticket."""
    ann, bob = [await Client.open(node.port) for _ in range(2)]
    assert (await ann.request("quick", "queued", name="ann"))["type"] == "queued"
    got = await ann.request("watch", "welcome", code="ZZZZZZ")
    assert (got["type"], got.get("reason")) == ("error", "no_room"), got
    assert (await bob.request("quick", "welcome", "queued", name="bob"))["type"] == "welcome"
    assert (await ann.expect("welcome"))["room"]["quick"] is True
    for c in (ann, bob):
        await c.close()


async def test_leave_queue_takes_the_ticket_out_and_keeps_the_connection(node) -> None:
    """``leave_queue``: the ticket leaves the queue (``unqueued``, its draw), the
    connection stays open and is never paired; with no ticket it is ``not_queued``."""
    ann, bob = [await Client.open(node.port) for _ in range(2)]
    got = await ann.request("leave_queue", "unqueued")
    assert (got["type"], got.get("reason")) == ("error", "not_queued"), got
    assert (await ann.request("quick", "queued", name="ann", draw=3))["type"] == "queued"
    assert await ann.request("leave_queue", "unqueued") == {"type": "unqueued", "draw": 3}
    assert (await bob.request("quick", "welcome", "queued", name="bob", draw=3))["type"] == "queued"
    later = await ann.drain(0.8)  # the node re-pairs every 0.5 s
    assert [m for m in later if m["type"] in ("welcome", "matched")] == [], later
    assert (await ann.request("ping", "pong"))["type"] == "pong"  # still connected
    again = await ann.request("leave_queue", "unqueued")
    assert again.get("reason") == "not_queued", again
    # queued again, the player is paired as ever
    assert (await ann.request("quick", "welcome", "queued", name="ann", draw=3))[
        "type"
    ] == "welcome"
    for c in (ann, bob):
        await c.close()
