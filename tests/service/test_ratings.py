"""Ratings, statistics and race histories: which races count, which are rated, applied
exactly once even when the finishing node never applies them, claimed by an account, and
read over HTTP. Real Redis, real WebSockets."""

from __future__ import annotations

import asyncio
import itertools
import secrets
import time
import urllib.error
import urllib.request
from collections.abc import AsyncIterator
from typing import Any

import orjson
import pytest
import redis

from klondike_race.engine import Settings
from klondike_race.service.domain import rating
from klondike_race.service.domain.options import RoomOptions
from klondike_race.service.domain.room import FINISHED, Room, add_player
from klondike_race.service.node import Node
from klondike_race.service.store import room_key
from klondike_race.service.store.ratings import GUEST_KEEP_S

from .conftest import Client, make_config, running, winnable

PASSWORD = "correct horse battery"
PROFILE_KEYS = {"id", "name", "guest", "variants", "history", "daily", "arenas", "stats"}
VARIANT_KEYS = {
    "rating", "provisional", "races", "wins", "win_rate", "solved", "best_time_ms",
    "fewest_moves", "average_foundation", "streak", "best_streak", "rating_history",
}  # fmt: skip
ENTRY_KEYS = {
    "code",
    "at",
    "variant",
    "rank",
    "players",
    "result",
    "rated",
    "rating_before",
    "rating_after",
    "replay",
}


# ---- the pure rules -------------------------------------------------------------------
def test_ratings_move_with_the_finishing_order() -> None:
    start = [(rating.MU, rating.SIGMA)] * 3
    first, second, third = rating.rate(start, [1, 2, 3])
    assert first[0] > second[0] > third[0]
    assert first[0] > rating.MU > third[0]
    assert all(sigma < rating.SIGMA for _, sigma in (first, second, third))
    tied = rating.rate(start[:2], [1, 1])
    assert tied[0] == tied[1] and abs(tied[0][0] - rating.MU) < 1e-9
    a, b, c = rating.rate(start, [1, 1, 3])
    assert a == b and a[0] > rating.MU > c[0]
    assert rating.display(rating.MU) == 1500
    assert rating.display(rating.MU + 1) == 1540
    assert rating.provisional(True, 1.0) and rating.provisional(False, rating.SIGMA)
    assert not rating.provisional(False, rating.PROVISIONAL_SIGMA)


def test_race_results_are_named_in_order() -> None:
    assert rating.result(1, {"foundation": 3, "status": "resigned"}) == "won"
    assert rating.result(2, {"foundation": 52, "status": "won"}) == "solved"
    assert rating.result(2, {"foundation": 9, "status": "resigned"}) == "resigned"
    assert rating.result(3, {"foundation": 9, "status": "out_of_time"}) == "timed_out"
    assert rating.result(2, {"foundation": 9, "status": "stuck"}) == "lost"


def finished_room(addresses: list[str], **options: Any) -> Room:
    """A finished race whose seats ``p1``, ``p2``, … (players ``g-1``, ``g-2``, …) were
    taken from ``addresses`` (keyed, as seats keep them)."""
    room = Room("ABCDEF", 0, {"seed": "1"}, "salt", RoomOptions(Settings(), **options))
    for i, address in enumerate(addresses, 1):
        room, _ = add_player(room, f"n{i}", "h", 0, f"g-{i}", True, address)
    return Room.from_json({**room.to_json(), "status": FINISHED, "ended": 1})


def settled_by_seat(room: Room) -> dict[str, rating.Outcome]:
    """Each seat's outcome, in seat order the race's finishing order."""
    composites = {s.id: i for i, s in enumerate(room.seats)}
    outcomes = rating.settle(room, {}, composites, {}, 5)
    return {o.who.replace("g-", "p"): o for o in outcomes}


def test_seats_sharing_a_client_address_are_left_out_of_the_rating() -> None:
    """A second identity costs nothing: seats taken from one address (the player's
    scout, or their own throwaway to beat) move no rating; the others are rated among
    themselves, when two or more are left."""
    four = finished_room(["x", "y", "x", "z"], capacity=4)  # p1 and p3 share one
    assert rating.shared_address(four) == {"p1", "p3"}
    got = settled_by_seat(four)
    for pid in ("p1", "p3"):
        entry = got[pid].entry
        assert entry["rated"] is False and entry["flags"] == ["address"]
        assert entry["rating_before"] == entry["rating_after"] == 1500
        assert (got[pid].stats["mu"], got[pid].stats["history"]) == (rating.MU, [])
        assert got[pid].stats["races"] == 1  # still counted
    start = (rating.MU, rating.SIGMA)
    second, fourth = rating.rate([start, start], [2, 4])  # ranked among themselves
    assert (got["p2"].stats["mu"], got["p2"].stats["sigma"]) == second
    assert (got["p4"].stats["mu"], got["p4"].stats["sigma"]) == fourth
    assert got["p2"].entry["rated"] is True and "flags" not in got["p2"].entry
    assert got["p2"].entry["rating_after"] > 1500 > got["p4"].entry["rating_after"]
    # the one seat left has nobody to be rated against; the two sharing are flagged
    three = settled_by_seat(finished_room(["x", "x", "y"], capacity=3))
    assert [o.entry["rated"] for o in three.values()] == [False] * 3
    assert [o.entry.get("flags") for o in three.values()] == [["address"], ["address"], None]
    # seats that kept no address (stored before seats kept one) share none
    old = settled_by_seat(finished_room(["", ""]))
    assert [o.entry["rated"] for o in old.values()] == [True, True]
    # an unrated race (a private room) was to move no rating anyway: no flag
    private = settled_by_seat(finished_room(["x", "x"], private=True))
    assert [(o.entry["rated"], "flags" in o.entry) for o in private.values()] == [
        (False, False)
    ] * 2


# ---- helpers --------------------------------------------------------------------------
@pytest.fixture
async def node(redis_url: str) -> AsyncIterator[Node]:
    """A node behind a trusted balancer (``KR_TRUST_FORWARDED``): each client of these
    tests comes from an address of its own (``at``), as players on their own devices do
    (seats sharing one are left out of the rating)."""
    async with running(make_config(redis_url, trust_forwarded=True)) as node:
        yield node


ADDRESSES = (f"198.51.100.{n % 250 + 1}" for n in itertools.count())


def at(address: str | None = None) -> dict[str, Any]:
    """A connection's keywords: from ``address``, else from a new one."""
    return {"additional_headers": {"X-Forwarded-For": address or next(ADDRESSES)}}


async def guest(port: int, address: str | None = None) -> tuple[Client, str]:
    c = await Client.open(port, **at(address))
    got = await c.request("hello", "identity", device=secrets.token_urlsafe(24))
    return c, got["player"]["id"]


async def account(port: int, name: str) -> tuple[Client, str]:
    c = await Client.open(port, **at())
    got = await c.request("register", "identity", name=name, password=PASSWORD)
    assert got["type"] == "identity", got
    return c, got["player"]["id"]


async def race(
    clients: list[Client], plan: list[Any], ref: dict | None = None, **create: Any
) -> str:
    """A race of ``clients`` (the first hosts) on a winnable deal; each plays by ``plan``:
    ``"win"`` (the whole reference line), ``n`` (the line until n foundation cards, then
    resign) or ``0`` (resign at once). Returns the room's code once it finished."""
    ref = ref or winnable(draw=1)
    host = clients[0]
    fields = {"name": "host", "deal": {"cards": ref["cards"]}}
    if not create.get("practice"):  # (a practice game is one seat)
        fields["capacity"] = max(2, len(clients))
    welcome = await host.request("create", "welcome", **{**fields, **create})
    assert welcome["type"] == "welcome", welcome
    code = welcome["room"]["code"]
    for i, c in enumerate(clients[1:]):
        got = await c.request("join", "welcome", code=code, name=f"p{i + 2}")
        assert got["type"] == "welcome", got
    if len(clients) == 1 and not create.get("practice"):
        await host.send("start")
    elif len(clients) > 1:
        for c in clients:
            await c.send("ready")
    for c in clients:
        if not create.get("practice"):
            await c.expect("start")
    for c, what in zip(clients, plan, strict=True):
        for step in ref["line"] if what else ():
            got = await c.move(step)
            assert got["type"] == "ack", got
            if what != "win" and got["board"]["foundation"] >= what:
                break
        if what != "win":
            got = await c.request("resign", "ack", seq=c.seq + 1)
            assert got["type"] == "ack", got
            c.seq += 1
    room = await host.expect("room")
    while room["room"]["phase"] != "finished":
        room = await host.expect("room")
    return code


async def settled(redis_url: str, code: str, timeout: float = 5.0) -> None:
    """Wait until the race's statistics are applied."""
    rds = redis.Redis.from_url(redis_url)
    deadline = time.monotonic() + timeout
    while rds.hget(room_key(code), "rated") is None:
        assert time.monotonic() < deadline, f"race {code} never applied"
        await asyncio.sleep(0.02)


async def profile(port: int, what: str) -> tuple[int, Any]:
    def get() -> tuple[int, Any]:
        url = f"http://127.0.0.1:{port}/api/players/{what}"
        try:
            with urllib.request.urlopen(url, timeout=5) as r:
                assert r.headers["Content-Type"] == "application/json"
                return r.status, orjson.loads(r.read())
        except urllib.error.HTTPError as err:
            return err.code, orjson.loads(err.read())

    return await asyncio.to_thread(get)


async def draw1(port: int, who: str) -> dict:
    status, body = await profile(port, who)
    assert status == 200, body
    return body["variants"]["draw1"]


# ---- races ----------------------------------------------------------------------------
async def test_a_race_moves_ratings_in_finishing_order(node, redis_url) -> None:
    (a, ka), (b, kb), (c, kc) = [await guest(node.port) for _ in range(3)]
    code = await race([a, b, c], ["win", 2, 0])
    await settled(redis_url, code)
    ra, rb, rc = [await draw1(node.port, k) for k in (ka, kb, kc)]
    assert ra["rating"] > rb["rating"] > rc["rating"]
    assert ra["rating"] > 1500 > rc["rating"]
    assert all(v["provisional"] for v in (ra, rb, rc))  # guests
    assert ra["races"] == 1 and ra["wins"] == 1 and ra["win_rate"] == 1.0 and ra["solved"] == 1
    assert ra["streak"] == ra["best_streak"] == 1 and ra["average_foundation"] == 52.0
    assert ra["fewest_moves"] == winnable(draw=1)["steps"] and ra["best_time_ms"] > 0
    assert rb["wins"] == 0 and rb["solved"] == 0 and rb["best_time_ms"] is None
    assert rb["average_foundation"] >= 2 and rc["average_foundation"] == 0
    assert ra["rating_history"] == [{"at": ra["rating_history"][0]["at"], "rating": ra["rating"]}]
    # what pairing goes by, read together in one round trip: in order, 1500 for a player
    # with no race and for no one, and Draw 3 unmoved
    together = await node.lobby.ratings_of([kc, "", ka, "g-nobody", kb], 1)
    assert together == [rc["rating"], 1500, ra["rating"], 1500, rb["rating"]]
    assert await node.lobby.ratings_of([ka], 3) == [1500]
    assert await node.lobby.ratings_of([], 1) == []
    _, body = await profile(node.port, kb)
    assert set(body) == PROFILE_KEYS and set(body["variants"]) == {"draw1"}
    assert set(body["variants"]["draw1"]) == VARIANT_KEYS
    (entry,) = body["history"]
    assert set(entry) == ENTRY_KEYS
    assert entry == {
        "code": code,
        "at": entry["at"],
        "variant": "draw1",
        "rank": 2,
        "players": 3,
        "result": "resigned",
        "rated": True,
        "rating_before": 1500,
        "rating_after": rb["rating"],
        "replay": f"/replay/{code}",
    }
    assert body["guest"] is True and body["name"] == "p2" and body["id"] == kb  # her seat's
    (won,) = (await profile(node.port, ka))[1]["history"]
    assert won["result"] == "won" and won["rank"] == 1
    for cl in (a, b, c):
        await cl.close()


async def test_a_tie_shares_a_rank_and_moves_nobody_apart(node, redis_url) -> None:
    (a, ka), (b, kb) = await guest(node.port), await guest(node.port)
    anon = await Client.open(node.port, **at())  # races at the default rating, nothing stored
    code = await race([a, b, anon], [0, 0, "win"])
    await settled(redis_url, code)
    ra, rb = await draw1(node.port, ka), await draw1(node.port, kb)
    assert ra["rating"] == rb["rating"] < 1500
    for k in (ka, kb):
        (entry,) = (await profile(node.port, k))[1]["history"]
        assert entry["rank"] == 2 and entry["result"] == "resigned" and entry["players"] == 3
    rds = redis.Redis.from_url(redis_url)
    assert not [k for k in rds.scan_iter("player:*:stats") if b"g-" not in k]  # only guests
    for cl in (a, b, anon):
        await cl.close()


async def test_practice_abandoned_private_and_lone_races_move_no_rating(node, redis_url) -> None:
    rds = redis.Redis.from_url(redis_url)
    (a, ka), (b, kb) = await guest(node.port), await guest(node.port)
    # practice and a lone racer: not counted at all
    await race([a], ["win"], practice=True)
    await race([a], [0])
    # abandoned: not counted
    host = await a.request("create", "welcome", name="a")
    code = host["room"]["code"]
    await b.request("join", "welcome", code=code, name="b")
    for c in (a, b):
        await c.send("ready")
    await a.expect("start")
    await node.rooms.finish(code, "abandoned")
    await asyncio.sleep(0.3)
    assert rds.zscore("rooms:rating", code) is None
    status, body = await profile(node.port, ka)  # her profile, from her first game: no race
    assert status == 200 and (body["variants"], body["history"]) == ({}, []), body
    # private and not marked rated: counted, not rated
    code = await race([a, b], ["win", 0], private=True)
    await settled(redis_url, code)
    ra = await draw1(node.port, ka)
    assert ra["races"] == 1 and ra["wins"] == 1 and ra["rating"] == 1500
    assert ra["rating_history"] == []
    (entry,) = (await profile(node.port, ka))[1]["history"]
    assert entry["rated"] is False and entry["rating_before"] == entry["rating_after"] == 1500
    # private and marked rated: rated
    code = await race([a, b], ["win", 0], private=True, rated=True)
    await settled(redis_url, code)
    ra, rb = await draw1(node.port, ka), await draw1(node.port, kb)
    assert ra["races"] == 2 and ra["rating"] > 1500 > rb["rating"]
    assert (await profile(node.port, ka))[1]["history"][0]["rated"] is True
    for c in (a, b):
        await c.close()


async def test_the_rated_option_is_read_strictly(node) -> None:
    c = await Client.open(node.port)
    for fields, why in [
        ({"rated": "yes", "private": True}, "'rated'"),
        ({"rated": 1, "private": True}, "'rated'"),
        ({"rated": True}, "private rooms"),
        ({"rated": True, "practice": True, "private": True}, "never rated"),
        # a practice game is one private seat: saying otherwise is refused, not rewritten
        ({"practice": True, "capacity": 3}, "one private seat"),
        ({"practice": True, "capacity": 2}, "one private seat"),
        ({"practice": True, "private": False}, "one private seat"),
        # undo is off in rated races, as in quick matches, dailies and arenas
        ({"settings": {"undo": True}}, "undo is off in rated races"),
        ({"settings": {"undo": True}, "private": True, "rated": True}, "undo is off in rated"),
    ]:
        got = await c.request("create", "welcome", name="a", **fields)
        assert got["type"] == "error" and got["reason"] == "bad_field", got
        assert why in got["message"], got
    public = await c.request("create", "welcome", name="a")
    assert public["room"]["rated"] is True
    await c.request("leave", "left")
    private = await c.request("create", "welcome", name="a", private=True)
    assert private["room"]["rated"] is False
    await c.request("leave", "left")
    marked = await c.request("create", "welcome", name="a", private=True, rated=True)
    assert marked["room"]["rated"] is True
    await c.request("leave", "left")
    friendly = await c.request("create", "welcome", name="a", private=True, settings={"undo": True})
    assert friendly["room"]["settings"]["undo"] is True and friendly["room"]["rated"] is False
    await c.close()


async def test_a_second_identity_at_the_players_address_moves_no_rating(node, redis_url) -> None:
    """A public room and a quick match, each seated from one address (a player and their
    second identity): counted, rated for nobody, each entry flagged; the seats keep the
    address keyed, and no message carries it."""
    rds = redis.Redis.from_url(redis_url)
    home = next(ADDRESSES)
    (a, ka), (b, kb) = await guest(node.port, home), await guest(node.port, home)
    code = await race([a, b], ["win", 0])
    await settled(redis_url, code)
    # quick match: the same two
    assert (await a.request("quick", "queued", name="ann"))["type"] == "queued"
    got = await b.request("quick", "queued", "welcome", name="bob")  # (matched at once)
    if got["type"] == "queued":
        got = await b.expect("welcome", timeout=10)
    quick = (await a.expect("welcome", timeout=10))["room"]
    assert quick["quick"] and quick["rated"] and got["room"]["code"] == quick["code"]
    for c in (a, b):
        await c.expect("start")
        got = await c.request("resign", "ack", seq=1)
        assert got["type"] == "ack", got
    await settled(redis_url, quick["code"])
    for who in (ka, kb):
        stats = await draw1(node.port, who)
        assert stats["races"] == 2 and stats["rating"] == 1500 and stats["rating_history"] == []
        history = (await profile(node.port, who))[1]["history"]
        assert {e["code"] for e in history} == {code, quick["code"]}
        assert all(e["rated"] is False and e["flags"] == ["address"] for e in history)
    for room in (code, quick["code"]):
        seats = orjson.loads(rds.hget(room_key(room), "state"))["seats"]
        kept = {seat[7] for seat in seats}
        assert len(kept) == 1 and len(kept.pop()) == 24  # one address, as a keyed hash
    kept = orjson.loads(rds.hget(room_key(code), "state"))["seats"][0][7]
    assert not any(kept in raw for c in (a, b) for raw in c.raw)
    assert home not in (await profile(node.port, ka))[1].__repr__()
    for c in (a, b):
        await c.close()


# ---- exactly once ---------------------------------------------------------------------
async def test_ratings_apply_once_when_the_finishing_node_never_does(
    node, redis_url, monkeypatch: pytest.MonkeyPatch
) -> None:
    rds = redis.Redis.from_url(redis_url)

    async def killed(code: str) -> bool:  # the node died right after finishing
        return False

    monkeypatch.setattr(node.ratings, "apply", killed)
    (a, ka), (b, _) = await guest(node.port), await guest(node.port)
    code = await race([a, b], ["win", 0])
    await asyncio.sleep(0.2)
    due = rds.zscore("rooms:rating", code)
    assert due is not None and due > time.time() * 1000 + 20_000  # a grace of 30 s
    assert rds.hget(room_key(code), "rated") is None
    await node.sweep()  # not due yet
    assert rds.hget(room_key(code), "rated") is None
    status, body = await profile(node.port, ka)  # a profile since its seat, no race yet
    assert status == 200 and (body["variants"], body["history"]) == ({}, []), body
    rds.zadd("rooms:rating", {code: 0})  # the grace has passed
    await node.sweep()
    assert rds.hget(room_key(code), "rated") == b"2"
    assert rds.zscore("rooms:rating", code) is None
    once = await draw1(node.port, ka)
    assert once["races"] == 1 and once["rating"] > 1500
    # a later sweep (the entry back, as if claimed before the application) changes nothing
    rds.zadd("rooms:rating", {code: 0})
    await node.sweep()
    assert await draw1(node.port, ka) == once
    assert len((await profile(node.port, ka))[1]["history"]) == 1
    # two callers at once: one applies
    code = await race([a, b], ["win", 0])
    await asyncio.sleep(0.2)
    sweeper_rate = node.sweeper.rate
    got = await asyncio.gather(*[sweeper_rate(code) for _ in range(4)])
    assert sorted(got) == [False, False, False, True]
    twice = await draw1(node.port, ka)
    assert twice["races"] == 2 and twice["streak"] == 2 and len(twice["rating_history"]) == 2
    for c in (a, b):
        await c.close()


# ---- claiming and the HTTP route ------------------------------------------------------
async def test_an_account_claims_its_guest_statistics(node, redis_url) -> None:
    (a, ka), (b, kb) = await guest(node.port), await guest(node.port)
    code = await race([a, b], ["win", 0])
    await settled(redis_url, code)
    before = await draw1(node.port, ka)
    arena = {"arena": "arena-p0123456789abcdef", "title": "Draw 1 arena", "starts": 1, "rank": 1}
    await node.store.arenas.add_line(ka, {**arena, "players": 2}, 3600)  # a final arena's
    made = await a.request("register", "identity", name="Ann", password=PASSWORD)
    key = made["player"]["id"]
    assert (await profile(node.port, ka))[0] == 404  # moved
    status, body = await profile(node.port, key)
    assert status == 200 and body["id"] == key and body["name"] == "Ann"
    assert body["guest"] is False
    claimed = body["variants"]["draw1"]
    assert claimed["races"] == 1 and claimed["rating"] == before["rating"]
    assert claimed["provisional"] is True  # one race: sigma still high
    assert body["history"][0]["code"] == code
    assert body["arenas"] == [{**arena, "players": 2}]
    rds = redis.Redis.from_url(redis_url)
    assert rds.ttl(f"player:{key}:arenas") == -1
    assert rds.ttl(f"player:{key}:stats") == -1  # an account's data does not expire
    assert rds.ttl(f"player:{kb}:stats") > 0  # a guest's does
    # by name, in any case and width, percent-encoded
    for name in ("Ann", "ann", "%EF%BC%A1%EF%BD%8E%EF%BD%8E"):
        status, got = await profile(node.port, name)
        assert status == 200 and got == body, (name, got)
    # the account races on under its own key
    code = await race([a, b], ["win", 0])
    await settled(redis_url, code)
    assert (await draw1(node.port, key))["races"] == 2
    for c in (a, b):
        await c.close()


async def test_a_guests_profile_is_theirs_from_their_first_game(node, redis_url) -> None:
    """Issue 34: a guest who had only practised was "no such player", and after a daily
    the profile named no one. A guest's profile is there from their first seat (a practice
    game here), under the name of the seat they took last; a seat of an older room
    resumed does not bring its name back; claimed, the guest key is nobody again until
    that device's guest takes a seat."""
    device = secrets.token_urlsafe(24)
    c = await Client.open(node.port)
    key = (await c.request("hello", "identity", device=device))["player"]["id"]
    assert (await profile(node.port, key))[0] == 404  # nobody before a game
    welcome = await c.request("create", "welcome", name="Pia", practice=True)
    assert welcome["type"] == "welcome", welcome
    status, body = await profile(node.port, key)
    assert status == 200 and body == {
        "id": key,
        "name": "Pia",
        "guest": True,
        "variants": {},
        "history": [],
        "daily": {"streak": 0, "best_streak": 0, "days": []},
        "arenas": [],
        "stats": {},
    }
    rds = redis.Redis.from_url(redis_url)
    assert 0 < rds.ttl(f"player:{key}:name") <= GUEST_KEEP_S  # a guest's: it expires
    # a later seat under another name renames the profile; resuming the older one does not
    old = c.token
    assert (await c.request("create", "welcome", name="Pia P", private=True))["type"] == "welcome"
    assert (await profile(node.port, key))[1]["name"] == "Pia P"
    other = await Client.open(node.port)
    await other.request("hello", "identity", device=device)
    assert (await other.request("resume", "welcome", "resumed", token=old))["type"] != "error"
    assert (await profile(node.port, key))[1]["name"] == "Pia P"
    # claimed: the account has its own name, the guest key is nobody's
    made = await c.request("register", "identity", name="Pia Claimed", password=PASSWORD)
    assert made["type"] == "identity", made
    assert (await profile(node.port, key))[0] == 404
    assert (await profile(node.port, made["player"]["id"]))[1]["name"] == "Pia Claimed"
    for conn in (c, other):
        await conn.close()


async def test_the_players_route_refuses_unknown_and_malformed(node) -> None:
    c, key = await account(node.port, "Zed")
    status, body = await profile(node.port, key)
    assert status == 200 and body == {
        "id": key,
        "name": "Zed",
        "guest": False,
        "variants": {},
        "history": [],
        "daily": {"streak": 0, "best_streak": 0, "days": []},
        "arenas": [],
        "stats": {},
    }
    for unknown in ("Nobody", "g-" + "0" * 32, "a-" + "1" * 32):
        status, body = await profile(node.port, unknown)
        assert status == 404 and body["error"] == "no_player", (unknown, body)
    for bad in ("ab", "x" * 40, "%FF%FE", "An%E2%80%8Bn", "%20Ann", "Ann%zz", "Ann%", "Zed%4"):
        status, body = await profile(node.port, bad)
        assert status == 400 and body["error"] == "bad_player", (bad, body)
    for query in ("?format=json", "?x", "?="):  # the route has no parameters
        status, body = await profile(node.port, key + query)
        assert status == 400 and body["error"] == "bad_request", (query, body)
    await c.close()
