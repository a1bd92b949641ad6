"""The Redis store: the group-commit Lua append checks sequence numbers atomically."""

from __future__ import annotations

import asyncio

import redis.asyncio as aioredis

from klondike_race.service.store import Store, moves_key, room_key

from .conftest import start_race

PROGRESS = {
    "foundation": 0,
    "moves": 1,
    "reached_moves": 0,
    "reached_ms": 0,
    "status": "playing",
    "score": None,
    "last_ms": 5,
}


async def test_append_checks_the_sequence_number_in_one_batch(redis_url) -> None:
    client = aioredis.from_url(redis_url)
    store = Store(client, "node-a")
    store.start()
    try:
        body = b'{"type":"progress","player":"p1"}'
        futures = [
            store.log.append("ROOMAA", "p1", 1, "d@5", PROGRESS, 10, body),
            store.log.append("ROOMAA", "p1", 1, "d@6", PROGRESS, 10, body),  # duplicate
            store.log.append("ROOMAA", "p1", 3, "d@7", PROGRESS, 10, body),  # gap
            store.log.append("ROOMAA", "p1", 2, "w>3@8", PROGRESS, 9, body),
            store.log.append("ROOMBB", "p1", 1, "d@9", PROGRESS, 10, body),
        ]
        results = await asyncio.gather(*futures)
        assert store.log.batches == 1  # all five in one round trip
        assert results[0] == 1 and results[3] == 2 and results[4] == 1
        assert results[1] == -2 and results[2] == -2  # not written: the log had 1 move
        assert await client.lrange(moves_key("ROOMAA", "p1"), 0, -1) == [b"d@5", b"w>3@8"]
        await store.log.append("ROOMAA", "p2", 1, "r@4", PROGRESS, 1, body)
        each = await store.log.read_each("ROOMAA", ["p2", "nobody", "p1"])  # in one round trip
        assert each == [["r@4"], [], ["d@5", "w>3@8"]]
        assert each[2] == await store.log.read("ROOMAA", "p1")
        events = await client.zrange(room_key("ROOMAA") + ":events", 0, -1)
        assert events[0].startswith(b'{"v":1,"type":"progress"')
        assert await client.zscore(room_key("ROOMAA") + ":rank", "p1") == 9
        await client.hset(room_key("ROOMAA"), "status", "finished")
        assert await store.log.append("ROOMAA", "p1", 3, "d@9", PROGRESS, 10, body) == 0
    finally:
        await store.close()
        await client.aclose()


async def test_concurrent_moves_share_round_trips(node) -> None:
    rooms = await asyncio.gather(*(start_race(node.port) for _ in range(8)))
    clients = [c for room in rooms for c in room]
    before = node.store.log.batches

    async def play(c) -> None:
        for _ in range(15):
            assert (await c.move("draw"))["type"] == "ack"

    await asyncio.gather(*(play(c) for c in clients))
    batches = node.store.log.batches - before
    assert node.metrics.registry.get_sample_value("kr_moves_accepted_total") == 16 * 15
    assert batches < 16 * 15 / 2, batches  # group commit: several moves per round trip
    for c in clients:
        await c.close()


async def test_a_rank_read_for_many_players_agrees_with_the_one_by_one_read(redis_url) -> None:
    """``around_many`` (the whole board in one read) gives each player the same place,
    neighbours and rows as ``around`` (a few reads per player), ties included."""
    client = aioredis.from_url(redis_url)
    store = Store(client, "node-a")
    try:
        base = "ch:d-2026-12-01-1:0"
        scores = {f"g-{i:02d}": (i * 7) % 5 for i in range(23)}  # many equal composites
        await client.zadd(f"{base}:board", scores)
        await client.hset(f"{base}:rows", mapping={w: f'{{"name":"{w}"}}' for w in scores})
        await client.hdel(f"{base}:rows", "g-05")  # a row missing is left out by both
        whos = [*scores, "g-none"]  # a player not on the board is not answered
        for reach in (0, 1, 3):
            one_by_one = await store.challenges.around("d-2026-12-01-1", 0, whos, reach)
            at_once = await store.challenges.around_many("d-2026-12-01-1", 0, whos, reach)
            assert at_once == one_by_one
            assert "g-none" not in at_once and len(at_once) == 23
        alone = await store.challenges.around_many("d-2026-12-01-1", 0, whos, 0)
        for who, score in scores.items():  # a place: 1 + the players strictly better
            if who != "g-05":
                assert alone[who][1] == 1 + sum(s < score for s in scores.values())
    finally:
        await client.aclose()


async def test_races_playing_on_go_to_the_back_of_the_sweepers_line(redis_url) -> None:
    """The sweeper looks at the partly-over races a batch at a time, longest unseen
    first: those that play on go to the back, so every race gets its turn."""
    client = aioredis.from_url(redis_url)
    store = Store(client, "node-a")
    try:
        for i, code in enumerate(("AAAAAA", "BBBBBB", "CCCCCC")):
            await store.sweeping.partly_over(code, 1000 + i)
        await store.sweeping.partly_over("AAAAAA", 5000)  # already in: its place is kept
        first = await store.sweeping.away_rooms(limit=2)
        assert first == ["AAAAAA", "BBBBBB"]
        await store.sweeping.looked_at(first, 2000)
        assert await store.sweeping.away_rooms(limit=2) == ["CCCCCC", "AAAAAA"]
        await store.sweeping.untrack("CCCCCC")  # ended: out of the line
        await store.sweeping.looked_at(["CCCCCC"], 3000)  # (looked at as it ended: not back)
        assert await store.sweeping.away_rooms() == ["AAAAAA", "BBBBBB"]
    finally:
        await client.aclose()
