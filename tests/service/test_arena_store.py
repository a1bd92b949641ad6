"""Arenas in Redis (store/arenas.py): joining, pausing, a race taking its players out of
the waiting list all or none, a finished race counted once, players counted at their
address and flagged, an arena made final once and each player's line of it written once,
on a real redis-server and on a real Redis Cluster (tests/service/cluster.py) alike."""

from __future__ import annotations

import asyncio
import secrets
from dataclasses import replace
from typing import Any

import pytest
import redis.asyncio as aioredis
from redis.asyncio.cluster import RedisCluster

from klondike_race.engine import Settings
from klondike_race.service.clock import Clock
from klondike_race.service.domain.arena import Arena, RaceResult, Standing, score, table_key
from klondike_race.service.store import Store

from .cluster import Cluster

T0 = 1_796_515_200_000  # 2026-12-05 00:00 UTC
ARENA = Arena(
    id="arena-test-2026-12-05-0000",
    title="Draw 1 arena",
    starts=T0,
    ends=T0 + 30 * 60_000,
    settings=Settings(),
    size=2,
    time_limit=300,
)


def won(standing: Standing, place: int) -> Standing:
    return score(standing, RaceResult(2, place, opponents=((1500, 1 if place == 1 else -1),)))[0]


async def steps(store: Store) -> list[Any]:
    """Every step of an arena's life through the store; what each answered and read."""
    arenas = store.arenas
    seen: list[Any] = []
    first = await arenas.define(ARENA)
    again = await arenas.define(
        Arena(ARENA.id, "changed", ARENA.starts, ARENA.ends, ARENA.settings, 3, 600)
    )
    seen.append((first == ARENA, again == ARENA, await arenas.load(ARENA.id) == ARENA))
    seen.append(await arenas.load("arena-none-2026-12-05-0000"))
    # three join; one joins twice (nothing new)
    seen.append([await arenas.join(ARENA.id, w, w.upper(), True, T0 + i, f"node-{i}", w[0]) for
                 i, w in enumerate(("ann", "bob", "cid", "ann"))])  # fmt: skip
    seen.append(await arenas.waiting(ARENA.id))
    # a race takes its players, all or none
    seen.append(await arenas.take(ARENA.id, "RACE01", {"ann": 1400, "bob": 1650}))
    seen.append(await arenas.take(ARENA.id, "RACE02", {"bob": 1650, "cid": 1500}))  # bob is taken
    seen.append(await arenas.waiting(ARENA.id))
    seen.append(
        [(e.who, e.race, e.rating, e.waiting_since) for e in await arenas.entrants(ARENA.id)]
    )
    # pausing: out of the waiting list, points kept; an unknown player: nothing
    seen.append((await arenas.pause(ARENA.id, "cid"), await arenas.pause(ARENA.id, "zed")))
    seen.append(await arenas.pause(ARENA.id, "bob"))  # paused during his race
    seen.append(await arenas.waiting(ARENA.id))
    # the race counted once: standings, table, back to waiting unless paused
    standings = {"ann": won(Standing(), 1), "bob": won(Standing(), 2)}
    seen.append(await arenas.count(ARENA.id, "RACE01", T0 + 60_000, standings))
    seen.append(await arenas.count(ARENA.id, "RACE01", T0 + 61_000, standings))  # again
    seen.append(await arenas.waiting(ARENA.id))
    seen.append(await arenas.table(ARENA.id, 10))
    entrants = await arenas.entrants(ARENA.id)
    seen.append([(e.who, e.paused, e.race, e.last, e.standing, e.waiting_since) for e in entrants])
    seen.append([(e.node, e.session) for e in entrants])
    seen.append([e.who for e in await arenas.entrants(ARENA.id, ["bob", "zed"])])
    # joining again plays on: bob waits again, cid too
    seen.append(
        [await arenas.join(ARENA.id, w, w.upper(), True, T0 + 90_000) for w in ("bob", "cid")]
    )
    seen.append(await arenas.waiting(ARENA.id))
    # two nodes counting one race at once: counted once
    await arenas.take(ARENA.id, "RACE03", {"ann": 1500, "bob": 1500})
    twice = {"ann": won(standings["ann"], 1), "bob": won(standings["bob"], 2)}
    seen.append(
        sorted(
            await asyncio.gather(
                *(arenas.count(ARENA.id, "RACE03", T0 + 120_000, twice) for _ in range(5))
            )
        )
    )
    seen.append(await arenas.table(ARENA.id, 10))
    # the whole order (a shared key: listed by player key)
    await arenas.join(ARENA.id, "dan", "DAN", True, T0 + 130_000)
    seen.append(await arenas.table(ARENA.id, None))
    return seen


def check(seen: list[Any]) -> None:
    """The answers an arena's life must give (written from store/arenas.py's docstrings)."""
    ann1, bob1 = won(Standing(), 1), won(Standing(), 2)
    ann2, bob2 = won(ann1, 1), won(bob1, 2)
    assert seen[0] == (True, True, True)
    assert seen[1] is None
    assert seen[2] == [True, True, True, False]
    assert seen[3] == {"ann": T0, "bob": T0 + 1, "cid": T0 + 2}
    assert seen[4] is True and seen[5] is False
    assert seen[6] == {"cid": T0 + 2}
    assert seen[7] == [  # the ratings as the race started, kept for its count
        ("ann", "RACE01", 1400, None),
        ("bob", "RACE01", 1650, None),
        ("cid", None, None, T0 + 2),
    ]
    assert seen[8] == (True, False) and seen[9] is True
    assert seen[10] == {}
    assert seen[11] is True and seen[12] is False
    assert seen[13] == {"ann": T0 + 60_000}  # bob paused: not back
    assert seen[14][1] == [
        ("ann", table_key(ann1)),
        ("bob", table_key(bob1)),
        ("cid", table_key(Standing())),
    ]
    assert seen[14][0] == 8  # four joins, a race taken, two pauses, a race counted
    assert seen[15] == [
        ("ann", False, None, ("bob",), ann1, T0 + 60_000),
        ("bob", True, None, ("ann",), bob1, None),
        ("cid", True, None, (), Standing(), None),
    ]
    # the last join's node and session (ann joined again from node-3)
    assert seen[16] == [("node-3", "a"), ("node-1", "b"), ("node-2", "c")]
    assert seen[17] == ["bob"]
    assert seen[18] == [False, False]
    assert seen[19] == {"ann": T0 + 60_000, "bob": T0 + 90_000, "cid": T0 + 90_000}
    assert seen[20] == [False, False, False, False, True]
    assert seen[21][1][:2] == [("ann", table_key(ann2)), ("bob", table_key(bob2))]
    assert ann2.points == 4 and bob2.points == 0  # (two wins: the streak doubles the third)
    assert seen[21][0] == 12  # and two joins, a race taken and counted
    start = table_key(Standing())
    keys = [("ann", table_key(ann2)), ("bob", table_key(bob2)), ("cid", start), ("dan", start)]
    assert seen[22] == (13, keys)


LINE = {"title": "Draw 1 arena", "rank": 1, "players": 3, "points": 2, "races": 1, "wins": 1}


async def results(store: Store) -> None:
    """Fair play and results through the store (an arena of its own, as the keys of
    ``arenas:ending`` and ``arenas:final`` are every arena's): each answer checked."""
    arenas = store.arenas
    arena = replace(ARENA, id=f"arena-p{secrets.token_hex(8)}")
    await arenas.define(arena)
    # a player's first join counts at their address: the second there flagged, past the
    # limit (2) refused with what it holds; joining again counts nothing
    joins = [("ann", "A"), ("bob", "A"), ("cid", "A"), ("dan", "B"), ("bob", "A"), ("ann", "C")]
    got = [
        await arenas.join(arena.id, w, w.upper(), True, T0, address=a, limit=2) for w, a in joins
    ]
    assert got == [1, 1, -2, 1, 0, 0]
    flags = {e.who: e.flags for e in await arenas.entrants(arena.id)}
    assert flags == {"ann": (), "bob": ("address",), "dan": ()}  # cid: nothing made
    # a race counted with its line on the arena's list and a speed flag; the arena is
    # not final while it runs
    assert await arenas.take(arena.id, "RACE01", {"ann": 1500, "bob": 1500})
    assert await arenas.seal(arena.id, arena.ends) == 0
    listed = {"code": "RACE01", "at": T0 + 1, "players": [{"player": "ann", "place": 1}]}
    standings = {"ann": won(Standing(), 1), "bob": won(Standing(), 2)}
    assert await arenas.count(arena.id, "RACE01", T0 + 1, standings, listed, {"ann": "speed"})
    assert not await arenas.count(arena.id, "RACE01", T0 + 2, standings, listed, {"bob": "speed"})
    assert await arenas.take(arena.id, "RACE02", {"ann": 1500, "dan": 1500})
    again = {"ann": won(standings["ann"], 1), "dan": won(Standing(), 2)}
    listed2 = {**listed, "code": "RACE02"}
    assert await arenas.count(arena.id, "RACE02", T0 + 3, again, listed2, {"ann": "speed"})
    flags = {e.who: e.flags for e in await arenas.entrants(arena.id)}
    assert flags == {"ann": ("speed",), "bob": ("address",), "dan": ()}  # once each
    assert await arenas.races(arena.id, 1) == (2, [listed2])
    assert await arenas.races(arena.id, 10) == (2, [listed2, listed])
    # final once: set by the first, its time kept
    assert [await arenas.seal(arena.id, arena.ends + i) for i in (5, 6)] == [1, 2]
    assert await arenas.final_at(arena.id) == arena.ends + 5
    # due to be made final at its end (added once), claimed (due again a grace later),
    # then off the list and among the recent results
    await arenas.ending(arena)
    await arenas.ending(replace(arena, ends=arena.ends + 99))  # (no later)
    assert arena.id not in await arenas.claim_ending(arena.ends - 1, 30_000, 1000)
    assert arena.id in await arenas.claim_ending(arena.ends, 30_000, 1000)
    assert arena.id not in await arenas.claim_ending(arena.ends + 1, 30_000, 1000)
    await arenas.ended(arena.id, arena.ends + 5)
    assert arena.id not in await arenas.claim_ending(arena.ends + 60_000, 30_000, 1000)
    assert arena.id in await arenas.recent_finals(T0, 1000)
    assert arena.id not in await arenas.recent_finals(arena.ends + 6, 1000)  # gone by then
    # a player's lines: once each, newest start first, the last 50, a guest's expiring
    who = f"g-{secrets.token_hex(16)}"
    line = {"arena": arena.id, "starts": arena.starts, **LINE}
    assert await arenas.add_line(who, line, 3600)
    assert not await arenas.add_line(who, {**line, "rank": 2}, 3600)  # written already
    older = {**line, "arena": "arena-older", "starts": arena.starts - 1}
    newer = {**line, "arena": "arena-newer", "starts": arena.starts + 1}
    assert await arenas.add_line(who, older, 3600) and await arenas.add_line(who, newer, 3600)
    assert await arenas.lines_of(who) == [newer, line, older]
    for i in range(60):
        await arenas.add_line(who, {**line, "arena": f"arena-{i}", "starts": i}, 3600)
    lines = await arenas.lines_of(who)
    assert len(lines) == 50 and lines[:3] == [newer, line, older]
    assert lines[-1]["arena"] == "arena-13"  # the oldest starts gone
    assert 0 < await arenas.redis.ttl(arenas.lines_key(who)) <= 3600
    account = f"a-{secrets.token_hex(16)}"
    assert await arenas.add_line(account, line, None)
    assert await arenas.redis.ttl(arenas.lines_key(account)) == -1  # kept
    assert arenas.lines_key(who) == (
        f"player:{{{who}}}:arenas" if store.arenas.cluster else f"player:{who}:arenas"
    )


async def test_an_arena_in_one_redis(redis_url: str) -> None:
    client = aioredis.Redis.from_url(redis_url)
    try:
        check(await steps(Store(client, "node-a")))
        await results(Store(client, "node-a"))
    finally:
        await client.aclose()


async def test_an_arena_in_a_redis_cluster(cluster: Cluster) -> None:
    client = RedisCluster(host="127.0.0.1", port=cluster.primaries[1].port)
    try:
        await client.flushall()
        check(await steps(Store(client, "node-a")))
        await results(Store(client, "node-a"))
    finally:
        await client.aclose()


@pytest.mark.parametrize("players", [["ann"], ["ann", "nobody"]])
async def test_a_race_of_players_not_waiting_takes_nobody(
    redis_url: str, players: list[str]
) -> None:
    client = aioredis.Redis.from_url(redis_url)
    try:
        store = Store(client, "node-a")
        await store.arenas.define(ARENA)
        await store.arenas.join(ARENA.id, "ann", "Ann", True, T0)
        await store.arenas.take(ARENA.id, "RACE00", {"ann": 1500})  # ann is in a race now
        assert await store.arenas.take(ARENA.id, "RACE09", dict.fromkeys(players, 1500)) is False
        (ann,) = await store.arenas.entrants(ARENA.id)
        assert ann.race == "RACE00"
    finally:
        await client.aclose()


async def test_an_arenas_keys_expire_with_its_definition(redis_url: str) -> None:
    """Every key of an arena expires when its definition does (as the node sets it,
    ``KR_KEEP_DAILY_S`` after the arena's end)."""
    client = aioredis.Redis.from_url(redis_url)
    try:
        store = Store(client, "node-a")
        keep = Clock().now_ms() + 86_400_000
        await store.arenas.define(ARENA, keep)
        await store.arenas.join(ARENA.id, "ann", "Ann", True, T0)
        await store.arenas.join(ARENA.id, "bob", "Bob", True, T0)
        await store.arenas.take(ARENA.id, "RACE01", {"ann": 1500, "bob": 1500})
        standings = {"ann": won(Standing(), 1), "bob": won(Standing(), 2)}
        await store.arenas.count(ARENA.id, "RACE01", T0 + 60_000, standings)
        await store.arenas.seal(ARENA.id, ARENA.ends)
        keys = [k async for k in client.scan_iter(match=f"arena:{{{ARENA.id}}}*")]
        assert len(keys) == 10, keys  # the definition and nine parts (no address counted)
        ttls = [await client.pttl(k) for k in keys]
        assert max(ttls) - min(ttls) < 2_000 and min(ttls) > 0, ttls  # (a script's step)
    finally:
        await client.aclose()
