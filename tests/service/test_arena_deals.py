"""Arena races on certified deals (docs/rules.md, "Arena tournaments", "Deals";
store/arena_deals.py, node/arena_deals.py): the pool in Redis, capped, expiring with the
arena, each deal taken once by whichever node asks; a node filling it with the real
solver before the arena starts, a race taking one pooled deal (the room says so), an
empty pool giving a random deal marked uncertified, and no pooled deal ever reaching a
client."""

from __future__ import annotations

import asyncio
import secrets
from pathlib import Path

import redis.asyncio as aioredis
from redis.crc import key_slot

from klondike_race.service.clock import Clock
from klondike_race.service.domain import arena as A
from klondike_race.service.domain.room import Room
from klondike_race.service.node.arena_deals import target
from klondike_race.service.store import Store
from klondike_race.service.store.arena_deals import deals_key
from klondike_race.service.store.arenas import arena_key
from klondike_race.solver.jobs import solve_job

from .conftest import Client, guest, http, make_config, running
from .test_arena_store import ARENA
from .test_arenas import HOUR_MS, SCHEDULE, race_of

SOLVER_S = 0.2  # the tests' budget per candidate (a Draw 1 win takes milliseconds)


async def test_a_pool_is_capped_and_expires_with_its_arena(redis_url: str) -> None:
    client = aioredis.Redis.from_url(redis_url)
    try:
        store = Store(client, "node-a")
        # nobody joined: the arena is not stored, so nothing is pooled for it
        assert await store.arena_deals.add(ARENA.id, ["s1"], 5) == -1
        assert await client.exists(deals_key(ARENA.id)) == 0
        await store.arenas.define(ARENA, Clock().now_ms() + 86_400_000)
        assert await store.arena_deals.add(ARENA.id, ["s1", "s2", "s3"], 2) == 2
        assert await store.arena_deals.add(ARENA.id, ["s4"], 2) == 2  # full: not added
        assert await store.arena_deals.size(ARENA.id) == 2
        ttls = [await client.pttl(k) for k in (deals_key(ARENA.id), arena_key(ARENA.id))]
        assert min(ttls) > 0 and abs(ttls[0] - ttls[1]) < 2_000, ttls
        # one slot with the arena's keys (a Redis Cluster runs the script on one node)
        assert key_slot(deals_key(ARENA.id).encode()) == key_slot(arena_key(ARENA.id).encode())
        assert [await store.arena_deals.take(ARENA.id) for _ in range(3)] == ["s1", "s2", None]
    finally:
        await client.aclose()


async def test_two_nodes_taking_at_once_never_share_a_deal(redis_url: str) -> None:
    clients = [aioredis.Redis.from_url(redis_url) for _ in range(2)]
    try:
        stores = [Store(c, f"node-{i}") for i, c in enumerate(clients)]
        await stores[0].arenas.define(ARENA, Clock().now_ms() + 86_400_000)
        pooled = [secrets.token_hex(8) for _ in range(40)]
        assert await stores[0].arena_deals.add(ARENA.id, pooled, 100) == 40
        got = await asyncio.gather(*(stores[i % 2].arena_deals.take(ARENA.id) for i in range(60)))
        taken = [g for g in got if g is not None]
        assert sorted(taken) == sorted(pooled)  # each deal once, none lost
        assert len(got) - len(taken) == 20
    finally:
        for c in clients:
            await c.aclose()


def test_the_target_follows_the_players_who_will_race() -> None:
    arena = A.Arena("a", "t", 0, 60_000, ARENA.settings, 3, 60)
    assert target(arena, 0, 0, 100) == 0
    assert target(arena, 1, 0, 100) == 2  # one race ahead for them, and the next
    assert target(arena, 4, 2, 100) == 2 * 4  # 10 players: 4 races of 3, twice
    assert target(arena, 400, 100, 100) == 100  # at most KR_ARENA_DEALS


def _arena_config(tmp_path: Path, redis_url: str, **config: object):  # type: ignore[no-untyped-def]
    path = tmp_path / "arenas.txt"
    path.write_text(SCHEDULE)
    clock = Clock()
    starts = (clock.now_ms() // HOUR_MS + 1) * HOUR_MS
    made = make_config(redis_url, arenas_file=str(path), solver_arena_s=SOLVER_S, **config)
    return clock, starts, A.arena_id("hourly", starts), made


async def _pool_of(node, arena_id: str, size: int) -> list[str]:  # type: ignore[no-untyped-def]
    """The pool once it holds ``size`` deals (the node fills it each second)."""
    for _ in range(150):
        got = await node.redis.lrange(deals_key(arena_id), 0, -1)
        if len(got) >= size:
            return [g.decode() for g in got]
        await asyncio.sleep(0.1)
    raise AssertionError(f"the pool holds {len(got)} deals, not {size}")


async def _seen_by_clients(node, arena_id: str, clients: list[Client]) -> str:  # type: ignore[no-untyped-def]
    """Everything public about the arena: each client's frames, the lists and the page."""
    texts = [raw for c in clients for raw in c.raw]
    for path in ("/api/arenas", f"/api/arenas/{arena_id}", "/api/arenas?final=1"):
        texts.append((await http(node.port, "GET", path))[2].decode())
    return "\n".join(texts)


def _proven(seed: str) -> bool:
    return solve_job({"seed": seed}, {"draw": 1}, None, max_seconds=5.0)["result"] == "win"


async def test_a_pool_fills_before_the_start_and_a_race_takes_one_deal(
    tmp_path: Path, redis_url: str
) -> None:
    clock, starts, arena_id, config = _arena_config(tmp_path, redis_url)
    clock.shift_to(starts - 30_000)  # the arena starts in 30 s
    async with running(config, clock) as node:
        players = [await guest(node.port) for _ in range(2)]
        for i, p in enumerate(players):
            joined = await p.request("join_arena", "arena", arena=arena_id, name=f"P{i}")
            assert joined["arena"]["phase"] == "upcoming", joined
        pooled = await _pool_of(node, arena_id, 2)  # two waiting: a race, and the next
        assert len(pooled) == 2 and all(_proven(s) for s in pooled), pooled
        listing = await players[0].request("arenas", "arenas")
        assert any(a["id"] == arena_id for a in listing["arenas"])
        seen = await _seen_by_clients(node, arena_id, players)
        assert not any(s in seen for s in pooled)  # a pooled deal is secret
        clock.shift_to(starts + 1_000)  # it starts: the two are paired
        races = [await race_of(p) for p in players]
        room = races[0]["room"]
        assert room["winnable_only"] is True and room["arena"] == arena_id, room
        stored = await node.store.rooms.load(room["code"])
        assert stored is not None
        seed = Room.from_json(stored[0]).deal["seed"]
        assert seed == pooled[0]  # the oldest, taken out; the other still pooled
        left = await node.redis.lrange(deals_key(arena_id), 0, -1)
        assert left[0].decode() == pooled[1] and seed.encode() not in left, left
        # the race's deal is still secret while it runs (its commitment only)
        seen = await _seen_by_clients(node, arena_id, players)
        assert not any(s in seen for s in pooled) and room["commitment"] in seen
        for p in players:
            await p.close()


async def test_an_empty_pool_gives_a_random_deal_marked_uncertified(
    tmp_path: Path, redis_url: str
) -> None:
    clock, starts, arena_id, config = _arena_config(tmp_path, redis_url, arena_deals=0)
    clock.shift_to(starts + 10_000)
    async with running(config, clock) as node:
        players = [await guest(node.port) for _ in range(2)]
        for i, p in enumerate(players):
            await p.request("join_arena", "arena", arena=arena_id, name=f"P{i}")
        races = [await race_of(p) for p in players]
        room = races[0]["room"]
        assert room["code"] == races[1]["room"]["code"]
        assert room["winnable_only"] is False, room  # no deal was certified for it
        stored = await node.store.rooms.load(room["code"])
        assert stored is not None and len(Room.from_json(stored[0]).deal["seed"]) == 16
        assert await node.store.arena_deals.size(arena_id) == 0  # nothing pooled
        assert node.arena_deals.tried == 0  # KR_ARENA_DEALS 0: no solver work for it
        for p in players:
            await p.close()
