"""An unrated room may show its race to spectators some seconds behind (against a racer
who watches the others' boards on a second screen); rated play shows its
spectators outlines, or boards behind when the operator says so (test_outline.py)."""

from __future__ import annotations

import asyncio
import time

from klondike_race.service.node import Node

from .conftest import Client, make_config, start_race


def progress_of(messages: list[dict], player: str) -> list[int]:
    return [
        m["board"]["moves"] for m in messages if m["type"] == "progress" and m["player"] == player
    ]


async def test_spectators_see_the_race_that_far_behind(node) -> None:
    a, b = await start_race(node.port, spectator_delay=1, private=True)
    code = a.seen[0]["room"]["code"]
    early = await Client.open(node.port)
    welcome = await early.request("watch", "welcome", code=code)
    assert welcome["room"]["spectator_delay"] == 1
    assert welcome["progress"] == {}  # as live: the players who have moved, none yet
    moved = time.monotonic()
    assert (await a.move("draw"))["type"] == "ack"
    # the other racer hears of it at once (progress only); the spectator a second later
    assert (await b.expect("progress"))["progress"]["moves"] == 1
    assert progress_of(await early.drain(0.6), "p1") == []
    update = await early.expect("progress", timeout=3)
    assert time.monotonic() - moved >= 1.0
    assert update["board"]["moves"] == 1 and update["board"]["stock"] == 23
    # a spectator who arrives now gets the race as it was a second ago ...
    for seq in (2, 3, 4):
        assert (await a.move("draw", seq=seq))["type"] == "ack"
    late = await Client.open(node.port)
    seen = await late.request("watch", "welcome", code=code)
    assert seen["boards"]["p1"]["moves"] == 1 and seen["boards"]["p1"]["stock"] == 23
    assert seen["progress"]["p1"]["moves"] == 1 and "p2" not in seen["progress"]
    assert {r["player"] for r in seen["leaderboard"]} == {"p1", "p2"}
    assert [r["moves"] for r in seen["leaderboard"] if r["player"] == "p1"] == [1]
    # ... and then every move after that, each a second after it was made (waited for
    # each, not for a silence: a loaded machine may hold its loop longer than the gaps)
    for _ in range(3):
        await late.expect("progress", timeout=5)
    await late.drain(0.3)
    await early.drain(0.1)
    assert progress_of(late.seen, "p1") == [2, 3, 4]
    assert progress_of(early.seen, "p1") == [1, 2, 3, 4]
    # at the end the results show everything at once; nothing older follows them
    assert (await a.move("draw", seq=5))["type"] == "ack"
    for c, seq in ((a, 6), (b, 1)):
        assert (await c.request("resign", "ack", seq=seq))["type"] == "ack"
    for w in (early, late):
        room = await w.expect("room")
        while room["room"]["phase"] != "finished":
            room = await w.expect("room")
        assert room["boards"]["p1"]["moves"] == 5
        await w.drain(1.5)
        after = w.seen[w.seen.index(room) + 1 :]
        assert not [m for m in after if m["type"] == "progress"]
    for c in (a, b, early, late):
        await c.close()


async def test_a_live_room_shows_spectators_each_move_at_once(node) -> None:
    a, b = await start_race(node.port, private=True)
    watcher = await Client.open(node.port)
    welcome = await watcher.request("watch", "welcome", code=a.seen[0]["room"]["code"])
    assert welcome["room"]["spectator_delay"] == 0
    moved = time.monotonic()
    assert (await a.move("draw"))["type"] == "ack"
    assert (await watcher.expect("progress", timeout=1))["board"]["moves"] == 1
    assert time.monotonic() - moved < 0.5
    for c in (a, b, watcher):
        await c.close()


async def test_a_finished_player_sees_the_others_as_spectators_do_behind_the_race(node) -> None:
    # three racers; c resigns at once: a resigned seat must be no second screen
    a, b, c = await start_race(node.port, players=3, spectator_delay=1, private=True)
    for seq in (1, 2, 3):
        assert (await a.move("draw", seq=seq))["type"] == "ack"
    resigned = time.monotonic()
    assert (await c.request("resign", "ack", seq=1))["type"] == "ack"
    # c gets the boards as they were a second ago: before a's three draws
    got = await c.expect("boards")
    boards = got["boards"]
    assert boards["p1"]["moves"] == 0 and boards["p1"]["stock"] == 24
    # a moves on: b (racing) hears of it at once, without a board; c only a second later
    await asyncio.sleep(0.3)
    assert (await a.move("draw", seq=4))["type"] == "ack"
    live = await b.expect("progress")
    while live["progress"]["moves"] < 4:
        live = await b.expect("progress")
    assert "board" not in live
    early = await c.drain(0.3)
    assert all(m["board"]["moves"] < 4 for m in early if m["type"] == "progress")
    await c.drain(1.5)
    # a second after the resignation, the boards as they were then (the three draws made
    # before it), then each later move a second late
    after = [m for m in c.seen[c.seen.index(got) + 1 :] if m["type"] in ("boards", "progress")]
    assert after[0]["type"] == "boards" and after[0]["boards"]["p1"]["moves"] == 3
    assert progress_of(after, "p1") == [4]
    assert time.monotonic() - resigned >= 1.0
    # a reconnecting finished player is as far behind as before
    again = await Client.open(node.port)
    for _ in range(2):
        assert (await a.move("draw", seq=a.seq + 1))["type"] == "ack"
    welcome = await again.request("resume", "welcome", token=c.token)
    assert welcome["boards"]["p1"]["moves"] <= 4
    assert welcome["progress"]["p1"]["moves"] <= 4
    for client in (a, b, c, again):
        await client.close()


async def test_room_events_tell_those_behind_no_live_standings(node) -> None:
    """A room event in the race (here: the host's second device taking the seat back)
    carries the leaderboard for those who see the race live, none for those who see it
    behind (their progress updates bring the standings of then)."""
    device = "d" * 40
    host = await Client.open(node.port)
    await host.request("hello", "identity", device=device)
    welcome = await host.request("create", "welcome", name="ann", spectator_delay=30, private=True)
    code = welcome["room"]["code"]
    guest = await Client.open(node.port)
    await guest.request("join", "welcome", code=code, name="bob")
    for c in (host, guest):
        await c.send("ready")
    for c in (host, guest):
        await c.expect("start", timeout=5)
    behind = await Client.open(node.port)
    seen = await behind.request("watch", "welcome", code=code)
    assert (await host.move("draw"))["type"] == "ack"
    phone = await Client.open(node.port)
    await phone.request("hello", "identity", device=device)
    assert (await phone.request("join", "welcome", code=code, name="ann"))["player"] == "p1"
    told = await behind.expect("room")
    assert "leaderboard" not in told, told
    live = await guest.expect("room")
    assert [r["moves"] for r in live["leaderboard"] if r["player"] == "p1"] == [1]
    assert seen["progress"] == {}
    for c in (host, guest, phone, behind):
        await c.close()


async def test_updates_past_the_rooms_limit_come_as_boards_once_a_second(redis_url) -> None:
    """KR_DELAY_HOLD_KB bounds what a room holds for those who see it behind: the updates
    that fit come one by one; past it, they get the boards instead, as of a moment no
    earlier than the last move, at most once a second, and nothing is lost."""
    node = Node(make_config(redis_url, delay_hold_kb=2), redis_url)  # about one update
    port = await node.start()
    try:
        a, b = await start_race(port, spectator_delay=1, private=True)
        watcher = await Client.open(port)
        await watcher.request("watch", "welcome", code=a.seen[0]["room"]["code"])
        for seq in range(1, 7):
            assert (await a.move("draw", seq=seq))["type"] == "ack"
        hub = node.hubs.get(a.seen[0]["room"]["code"])
        assert hub is not None
        assert 0 < hub.delayed.held <= 2048
        await watcher.drain(3.0)
        moves = progress_of(watcher.seen, "p1")
        boards = [m["boards"]["p1"]["moves"] for m in watcher.seen if m["type"] == "boards"]
        assert moves and len(moves) < 6, moves  # the first held, the rest not
        assert boards and boards[-1] == 6, watcher.seen  # the last move reached it
        assert len(boards) <= 3, boards  # one catch-up a second, the view's own first
        assert hub.delayed.held == 0
        for c in (a, b, watcher):
            await c.close()
    finally:
        await node.stop()
