"""A node gives back what its rooms held once they end and their connections close: no
hub, task or timer is left, and nothing of a room waits for the cyclic garbage collector
(``serve`` makes its full collections rare: docs/operations.md)."""

from __future__ import annotations

import asyncio
import gc
import tracemalloc
import weakref
from collections.abc import AsyncIterator

import pytest

from klondike_race.service.domain.room import Room
from klondike_race.service.logs import configure
from klondike_race.service.node import Node
from klondike_race.service.roomevent import RoomEvent
from tests.servers import ServerProcess

from .conftest import Client, make_config, start_race

SERVER_CODE = "*/klondike_race/*"


@pytest.fixture
async def node(redis_url: str) -> AsyncIterator[Node]:
    configure(json=False, level="warning")
    # finished races are analysed in the background: small budgets keep that short
    node = Node(make_config(redis_url, solver_analysis_s=0.05, solver_workers=2), redis_url)
    node.port = await node.start()  # type: ignore[attr-defined]
    yield node
    await node.stop()


async def races_on_a_node_that_dies(redis_url: str, races: int) -> list[list[Client]]:
    """Races (two racers and a spectator each) on another node, which is then SIGKILLed."""
    other = ServerProcess(redis_url).start()
    try:
        taken = []
        for _ in range(races):
            a, b = await start_race(other.port)
            watcher = await Client.open(other.port)
            await watcher.request("watch", "welcome", code=a.seen[0]["room"]["code"])
            assert (await a.move("draw"))["type"] == "ack"
            taken.append([a, b, watcher])
    finally:
        other.kill()
    for clients in taken:
        for gone in clients:
            await gone.ws.close()
    return taken


async def rooms_ending_every_way(node: Node, taken: list[list[Client]]) -> int:
    """Rooms that end every way a room ends, with spectators, and the races ``taken``
    over from a node that died (their racers resume here); then every client leaves.
    The number of rooms played."""
    port = node.port  # type: ignore[attr-defined]
    clients: list[Client] = []
    for i, (a, b, _) in enumerate(taken):
        a2, b2 = await Client.open(port), await Client.open(port)
        answer = await a2.request("resume", "resumed", "welcome", token=a.token, since=i)
        assert answer["type"] in ("resumed", "welcome"), answer
        assert (await b2.request("resume", "welcome", token=b.token))["type"] == "welcome"
        watcher = await Client.open(port)
        await watcher.request("watch", "welcome", code=a.seen[0]["room"]["code"])
        assert (await a2.move("draw"))["type"] == "ack"
        if i:  # finished by resigning; the first is left unfinished
            for c in (a2, b2):
                assert (await c.request("resign", "ack", seq=c.seq + 1))["type"] == "ack"
        clients += (a2, b2, watcher)
    # both resign, watched live
    a, b = await start_race(port)
    watcher = await Client.open(port)
    await watcher.request("watch", "welcome", code=a.seen[0]["room"]["code"])
    for c in (a, b, a):
        assert (await c.move("draw"))["type"] == "ack"
    for c in (a, b):
        assert (await c.request("resign", "ack", seq=c.seq + 1))["type"] == "ack"
    clients += (a, b, watcher)
    # watched behind the race, with updates and a catch-up held back; abandoned
    a, b = await start_race(port, spectator_delay=5)
    watcher = await Client.open(port)
    await watcher.request("watch", "welcome", code=a.seen[0]["room"]["code"])
    for _ in range(3):
        assert (await b.move("draw"))["type"] == "ack"
    assert (await a.request("resign", "ack", seq=1))["type"] == "ack"
    clients += (a, b, watcher)
    # the time limit ends it (the hub's end timer calls rooms.finish)
    a, b = await start_race(port, time_limit=60)
    assert (await a.move("draw"))["type"] == "ack"
    await node.rooms.finish(a.seen[0]["room"]["code"], "time_limit")
    assert (await b.expect("room"))["room"]["phase"] == "finished"
    clients += (a, b)
    # left while waiting
    host = await Client.open(port)
    await host.request("create", "welcome", name="host")
    clients.append(host)
    # quick match, abandoned mid-race
    a, b = await Client.open(port), await Client.open(port)
    await a.request("quick", "queued", name="a")
    await b.request("quick", "welcome", name="b")
    await a.expect("matched")
    clients += (a, b)
    # asked for a quick match twice, then gone
    c = await Client.open(port)
    for _ in range(2):
        assert (await c.request("quick", "queued", name="c"))["type"] == "queued"
    clients.append(c)
    for c in clients:
        await c.close()
    return len(taken) + 5


async def settled(node: Node, tasks: set[asyncio.Task]) -> None:
    """Every connection gone, every room's background work (analyses) done."""
    for _ in range(1000):
        if not node.connections.open and not len(node.hubs) and asyncio.all_tasks() <= tasks:
            return
        await asyncio.sleep(0.01)


def fill_the_interpreters_free_lists() -> None:
    """CPython 3.11 keeps up to 2,000 blocks of a call with 20 arguments for reuse (found
    here: making a Room, which has 20 fields, holds one more 200-byte block each time
    until there are 2,000, then none): filled before measuring, they are not what a room
    leaves behind."""
    stored = Room(code="AAAAAA", created=0, deal={"seed": "0"}, salt="").to_json()
    for _ in range(2100):
        Room.from_json(stored)


def server_heap() -> tracemalloc.Snapshot:
    """What the server's own code allocated and still holds, traced now."""
    return tracemalloc.take_snapshot().filter_traces([tracemalloc.Filter(True, SERVER_CODE)])


def grown_at(before: tracemalloc.Snapshot, after: tracemalloc.Snapshot) -> tuple[int, str]:
    """(bytes more in ``after``, the five lines that hold most of them: a failure's
    pointer)."""
    diff = after.compare_to(before, "lineno")
    top = "; ".join(f"{d.traceback[0].filename.rsplit('/', 1)[-1]}:{d.traceback[0].lineno} "
                    f"+{d.size_diff} B" for d in diff[:5] if d.size_diff > 0)  # fmt: skip
    return sum(d.size_diff for d in diff), top


async def test_rooms_that_ended_leave_nothing_behind(node, redis_url) -> None:
    # the node's own, and this test's (some of the node's may end meanwhile: its start's
    # work on the daily deals, a spread solver search's clean-up): no task but these after
    tasks = asyncio.all_tasks()
    taken = await races_on_a_node_that_dies(redis_url, 4)
    gc.collect()
    gc.disable()  # what a room held must go with it, not at some later full collection
    tracemalloc.start()
    try:
        await rooms_ending_every_way(node, taken[:2])  # warms what is made once
        await settled(node, tasks)
        fill_the_interpreters_free_lists()
        before = server_heap()
        rooms = await rooms_ending_every_way(node, taken[2:])
        await settled(node, tasks)
        grown, where = grown_at(before, server_heap())
        assert len(node.hubs) == 0
        assert asyncio.all_tasks() <= tasks
        gc.set_debug(gc.DEBUG_SAVEALL)
        gc.collect()
        cyclic = sorted(
            {
                type(o).__qualname__
                for o in gc.garbage
                if type(o).__module__.startswith("klondike_race")
            }
        )
        assert cyclic == []
        assert grown / rooms < 2000, f"{grown} bytes more after {rooms} rooms: {where}"
        assert node.lobby.tickets == {}
    finally:
        gc.set_debug(0)
        gc.garbage.clear()
        gc.enable()
        tracemalloc.stop()


async def test_a_connection_gone_while_entering_its_match_leaves_the_race(
    node, monkeypatch
) -> None:
    """A match is entered in the background (the news may come from any node): a
    connection that closes meanwhile leaves the race once it is in."""
    port = node.port
    held, release, entered = asyncio.Event(), asyncio.Event(), asyncio.Event()
    resume = node.lobby.resume

    async def slow_resume(*args: object) -> None:
        held.set()
        await release.wait()
        try:
            await resume(*args)
        finally:
            entered.set()

    monkeypatch.setattr(node.lobby, "resume", slow_resume)
    a, b = await Client.open(port), await Client.open(port)
    await a.request("quick", "queued", name="a")
    await b.request("quick", "welcome", name="b")
    await held.wait()  # a's entry has begun
    for c in (a, b):
        await c.close()
    while node.connections.open:
        await asyncio.sleep(0.01)
    release.set()
    await entered.wait()
    for _ in range(100):
        if not len(node.hubs):
            break
        await asyncio.sleep(0.01)
    assert len(node.hubs) == 0


async def test_a_room_left_while_a_gap_in_its_events_is_filled_is_freed(node) -> None:
    a, b = await start_race(node.port)
    hub = node.hubs.get(a.seen[0]["room"]["code"])
    freed = weakref.ref(hub)
    gc.disable()
    try:
        hub.feed(RoomEvent(hub.version + 2, {"type": "spectators", "count": 0}))  # v + 1 not yet
        for conn in list(hub.conns):  # everyone leaves before the gap is filled
            await node.attendance.detach(conn)
        del hub
        await asyncio.sleep(0.3)
        assert freed() is None
    finally:
        gc.enable()
    for c in (a, b):
        await c.close()
