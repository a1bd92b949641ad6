"""The room scripts in their two variants, store/scripts.py (one Redis) and
store/slot_scripts.py (a Redis Cluster): the same steps through the store on a real
redis-server and on a real Redis Cluster (tests/service/cluster.py) give the same
answers, the same state read back through the store, and the same events heard by
another node in the rooms."""

from __future__ import annotations

import asyncio
import contextlib
from collections.abc import AsyncIterator
from contextlib import asynccontextmanager
from typing import Any

import orjson
import redis.asyncio as aioredis
from redis.asyncio.cluster import RedisCluster

from klondike_race.service.node.shards import ShardedEvents
from klondike_race.service.store import CHANNEL, Store
from klondike_race.service.store.slot_scripts import events_channel

from .cluster import Cluster

ROOM, OTHER, GONE = "TWINAA", "TWINBB", "TWINZZ"
CHALLENGE = "d-2026-12-05-1"


def progress(moves: int) -> dict[str, Any]:
    return {"foundation": 0, "moves": moves, "status": "playing", "last_ms": moves * 5}


def moved(player: str) -> bytes:
    return orjson.dumps({"type": "progress", "player": player})


def room_event(phase: str) -> bytes:
    return orjson.dumps({"type": "room", "phase": phase})


@asynccontextmanager
async def heard_by(listener: Store, client: Any) -> AsyncIterator[list[bytes]]:
    """The events another node hears, as it hears them: ``kr:events`` on one Redis, each
    room's sharded channel (entered through ``listener``) on a cluster."""
    heard: list[bytes] = []
    if isinstance(client, RedisCluster):
        shards = ShardedEvents(client, heard.append, lambda _channels: None)
        listener.rooms.listen = lambda code, on: shards.listen(events_channel(code), on)
        try:
            yield heard
        finally:
            await shards.close()
        return
    pubsub = client.pubsub()
    await pubsub.subscribe(CHANNEL)

    async def read() -> None:
        while True:
            got = await pubsub.get_message(ignore_subscribe_messages=True, timeout=1.0)
            if got is not None:
                heard.append(got["data"])

    reader = asyncio.create_task(read())
    try:
        yield heard
    finally:
        reader.cancel()
        await asyncio.gather(reader, return_exceptions=True)
        await pubsub.aclose()


async def play(client: Any) -> dict[str, Any]:
    """Each room script's cases, from three nodes: node-a writes, node-b is in the rooms
    (live), node-c says it holds spectators but never said it was live. What the
    store answered, what it keeps, and what node-b heard."""
    a, b, c = (Store(client, f"node-{n}") for n in "abc")
    for store in (a, b, c):  # as node.py wires a cluster's node
        store.rooms.live_nodes = store.sweeping.live
    await a.sweeping.heartbeat()
    await b.sweeping.heartbeat()
    a.start()
    answers: list[Any] = []
    board = a.challenges.board(CHALLENGE, 0)
    try:
        async with heard_by(b, client) as heard:
            # ROOM_CAS: a room made (before node-b is in it: not published), a stale
            # revision, a change without an event, with players' progress and ranks
            answers.append(await a.rooms.cas(ROOM, 0, {"at": 0}, "waiting", room_event("w")))
            answers.append(await a.rooms.cas(OTHER, 0, {"at": 0}, "racing", room_event("r")))
            for code in (ROOM, OTHER):
                await b.rooms.enter(code)
            answers.append(await a.rooms.cas(ROOM, 0, {"at": 1}, "waiting", room_event("x")))
            ranks = [("p1", progress(0), 30), ("p2", progress(0), 31)]
            answers.append(await a.rooms.cas(ROOM, 1, {"at": 2}, "racing", None, ranks))
            answers.append(await a.rooms.cas(ROOM, 2, {"at": 3}, "racing", room_event("r")))
            # APPEND_MOVES: one group commit over two rooms (two slots on the cluster), a
            # duplicate, a gap, a challenge attempt's moves (its row: the last one stays)
            row = {"name": "Ann", "moves": 1}
            batch = [
                a.log.append(ROOM, "p1", 1, "d@5", progress(1), 29, moved("p1")),
                a.log.append(ROOM, "p1", 1, "d@6", progress(1), 29, moved("p1")),
                a.log.append(ROOM, "p1", 3, "d@7", progress(1), 29, moved("p1")),
                a.log.append(ROOM, "p2", 1, "d@8", progress(1), 28, moved("p2")),
                a.log.append(ROOM, "p1", 2, "w>3@9", progress(2), 27, moved("p1")),
                a.log.append(
                    OTHER, "p1", 1, "d@5", progress(1), 40, moved("p1"),
                    (board, "g-ann", orjson.dumps(row)),
                ),
                a.log.append(
                    OTHER, "p1", 2, "d@6", progress(2), 39, moved("p1"),
                    (board, "g-ann", orjson.dumps({**row, "moves": 2})),
                ),
                a.log.append(
                    OTHER, "p1", 4, "d@7", progress(3), 38, moved("p1"),
                    (board, "g-ann", orjson.dumps({**row, "moves": 9})),
                ),
            ]  # fmt: skip
            answers.append(await asyncio.gather(*batch))
            assert a.log.batches == 1
            on_board = await a.challenges.top(CHALLENGE, 0, 10)
            # an operator takes Ann off the board: her next move does not put her back
            removal = {"who": "g-ann", "reason": "test"}
            answers.append(await a.challenges.remove(CHALLENGE, 0, "g-ann", removal))
            answers.append(
                await a.log.append(
                    OTHER, "p1", 3, "d@8", progress(3), 37, moved("p1"),
                    (board, "g-ann", orjson.dumps({**row, "moves": 3})),
                )
            )  # fmt: skip
            # SPECTATORS: a node never live counts for its own call only; node-b's call is
            # not published (no other node is in the room)
            answers.append(await c.rooms.set_spectators(ROOM, 5))
            answers.append(await a.rooms.set_spectators(ROOM, 2))
            answers.append(await b.rooms.set_spectators(ROOM, 3))
            answers.append(await a.rooms.set_spectators(ROOM, 0))
            # the race finishes: on the follow-up lists in the same step; no move after
            ranks = [("p1", progress(4), 20)]
            owed = [("rooms:analysis", 1000), ("rooms:rating", 1000)]
            done = room_event("f")
            answers.append(await a.rooms.cas(ROOM, 3, {"at": 4}, "finished", done, ranks, owed))
            answers.append(await a.log.append(ROOM, "p2", 2, "d@30", progress(2), 26, moved("p2")))
            answers.append(await a.sweeping.claim_analyses(2000))
            answers.append(await a.ratings.claim_due(2000, 60_000))
            # ANALYSIS: stored once, emitted once; not for a room that is gone
            answers.append(await a.rooms.save_analysis(ROOM, {"best": 1}))
            answers.append(await a.rooms.save_analysis(ROOM, {"best": 2}))
            answers.append(await a.rooms.save_analysis(GONE, {"best": 1}))
            # ROOM_CAS with a player whose move log must be empty (a sprint's): refused,
            # nothing stored, for one who moved; stored for one who has not
            sprint = room_event("s")
            answers.append(await a.rooms.cas(OTHER, 1, {"at": 1}, "racing", sprint, unmoved="p1"))
            answers.append(await a.rooms.cas(OTHER, 1, {"at": 1}, "racing", sprint, unmoved="p2"))
            kept: dict[str, Any] = {}
            for code in (ROOM, OTHER):
                snapshot = await a.rooms.snapshot(code)
                kept[code] = (
                    await a.rooms.load(code),
                    snapshot,
                    await a.rooms.events_since(code, 0),
                    [await a.log.read(code, p) for p in ("p1", "p2")],
                    [await a.rooms.rank_of(code, p) for p in ("p1", "p2")],
                    await a.rooms.load_analysis(code),
                )
                await wait_for_version(heard, code, snapshot[0])
            kept["board"] = (
                on_board,
                await a.challenges.top(CHALLENGE, 0, 10),
                await a.challenges.removed(CHALLENGE, 0),
            )
            events = sorted(parse(m) for m in heard)
    finally:
        await a.close()
    return {"answers": answers, "kept": kept, "heard": events}


def parse(message: bytes) -> tuple[str, int, str, dict[str, Any]]:
    """``CODE|ORIGIN|PAYLOAD``: (code, version, origin, payload)."""
    code, origin, payload = message.decode().split("|", 2)
    event = orjson.loads(payload)
    return code, event["v"], origin, event


async def wait_for_version(heard: list[bytes], code: str, version: int) -> None:
    """Until the room's event ``version`` was heard (a channel keeps its order), or 5 s:
    what was heard by then is compared."""
    with contextlib.suppress(TimeoutError):
        async with asyncio.timeout(5):
            while not any(parse(m)[:2] == (code, version) for m in heard):
                await asyncio.sleep(0.02)


async def test_the_room_scripts_do_alike_on_one_redis_and_on_a_cluster(
    redis_url: str, cluster: Cluster
) -> None:
    one = aioredis.from_url(redis_url)
    many = RedisCluster(host="127.0.0.1", port=cluster.primaries[1].port)
    try:
        await many.flushall()
        on_one, on_cluster = await play(one), await play(many)
    finally:
        await one.aclose()
        await many.aclose()
    # the scenario itself, so that two variants wrong alike do not pass
    answers = on_one["answers"]
    assert answers[:5] == [1, 1, -1, 0, 2]
    assert answers[5] == [3, -2, -2, 4, 5, 2, 3, -3]
    assert answers[6]["row"] == {"name": "Ann", "moves": 2}
    assert answers[7] == 4
    assert [tuple(x) for x in answers[8:12]] == [(6, 5), (7, 2), (8, 5), (9, 3)]
    assert answers[12:] == [10, 0, [ROOM], [ROOM], 11, 0, 0, -2, 5]
    assert on_one["kept"][OTHER][0] == ({"at": 1}, 2)  # (stored once)
    assert on_one["kept"][ROOM][5] == {"best": 1}  # the first analysis stays
    ann = ("g-ann", 39, {"name": "Ann", "moves": 2})
    assert on_one["kept"]["board"][:2] == ((2, 1, [ann]), (3, 0, []))
    versions = [(code, v) for code, v, _, _ in on_one["heard"]]
    assert versions == [(ROOM, v) for v in (2, 3, 4, 5, 6, 7, 9, 10, 11)] + [
        (OTHER, v) for v in (2, 3, 4, 5)
    ]
    assert on_cluster == on_one
