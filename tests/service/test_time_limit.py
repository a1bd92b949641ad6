"""A room's time limit ends the race for everyone: unfinished games are out of time."""

from __future__ import annotations

import asyncio
import time

from .conftest import Client, start_race


async def test_time_limit_ends_the_race(node) -> None:
    a, b = await start_race(node.port, time_limit=10)
    start = next(m for m in a.seen if m["type"] == "start")
    ends_at = start["room"]["ends_at"]
    assert ends_at == start["room"]["start_at"] + 10_000
    assert (await a.move("draw"))["type"] == "ack"
    room = await b.expect("room", timeout=15)
    while room["room"]["phase"] != "finished":
        room = await b.expect("room", timeout=15)
    assert time.time() * 1000 >= ends_at
    assert room["room"]["end_reason"] == "time_limit"
    assert {r["status"] for r in room["leaderboard"]} == {"out_of_time"}
    # neither has a card home: foundation, moves and time to reach it all tie at 0
    assert [r["rank"] for r in room["leaderboard"]] == [1, 1]
    answer = await a.request("move", "refused", seq=2, action="draw")
    assert answer["reason"] == "race_over"
    code = room["room"]["code"]
    for c in (a, b):
        await c.close()
    # the room out of memory (nobody connected), a spectator's boards are still out of time
    for _ in range(100):
        if code not in node.hubs.hubs:
            break
        await asyncio.sleep(0.05)
    assert code not in node.hubs.hubs
    watcher = await Client.open(node.port)
    welcome = await watcher.request("watch", "welcome", code=code)
    assert welcome["room"]["phase"] == "finished"
    boards = welcome["boards"]
    assert len(boards) == 2
    assert {b["status"] for b in boards.values()} == {"out_of_time"}, boards
    assert all(b["over"] for b in boards.values()), boards
    await watcher.close()
