"""Ghosts: a practice race against a recorded game, the ghost's moves arriving at their
recorded times in the standings as an opponent's would. Real Redis, real WebSockets."""

from __future__ import annotations

import asyncio
import time

from .conftest import Client, day_id, guest, start_race, winnable
from .test_challenges import sealed, to_close


async def record(port: int, moves: int, gap: float) -> str:
    """A practice game of ``moves`` moves ``gap`` seconds apart, then resigned: its room
    code."""
    ref = winnable(draw=1)
    solo = await Client.open(port)
    welcome = await solo.request(
        "create", "welcome", name="Rec", practice=True, deal={"cards": ref["cards"]}
    )
    for seq, step in enumerate(ref["line"][:moves], start=1):
        await asyncio.sleep(gap)
        answer = await solo.move(step, seq=seq)
        assert answer["type"] == "ack", answer
    assert (await solo.request("resign", "ack", seq=moves + 1))["type"] == "ack"
    while (await solo.expect("room"))["room"]["phase"] != "finished":
        pass
    await solo.close()
    return welcome["room"]["code"]


async def test_a_ghost_plays_its_recorded_game_at_its_times(node) -> None:
    code = await record(node.port, moves=6, gap=0.15)
    me = await Client.open(node.port)
    t0 = time.monotonic()
    welcome = await me.request("ghost", "welcome", code=code, player="p1", name="Me")
    assert welcome["type"] == "welcome", welcome
    room = welcome["room"]
    assert room["practice"] and room["ghost"] and room["ghost_of"] == {"code": code, "player": "p1"}
    assert [p["name"] for p in room["players"]] == ["Me", "Rec (ghost)"]
    assert room["phase"] == "racing"
    ghost_moves = []
    while len(ghost_moves) < 7:  # six moves and the resignation
        event = await me.expect("progress", timeout=10)
        if event["player"] == "p2":
            ghost_moves.append((time.monotonic() - t0, event["progress"]))
            assert any(r["player"] == "p2" for r in event["leaderboard"])
    # at their recorded pace: six moves 0.15 s apart take most of a second, not at once
    assert ghost_moves[-1][0] >= 0.7, ghost_moves
    assert [m["moves"] for _, m in ghost_moves][:6] == [1, 2, 3, 4, 5, 6]
    assert ghost_moves[-1][1]["status"] == "resigned"
    # the player resigns too: the race is over
    assert (await me.request("resign", "ack", seq=1))["type"] == "ack"
    while (await me.expect("room"))["room"]["phase"] != "finished":
        pass
    # a rematch races the same recorded game again, on its deal
    again = await me.request("rematch", "welcome")
    assert again["type"] == "welcome", again
    room2 = again["room"]
    assert room2["code"] != room["code"] and room2["ghost"] and room2["phase"] == "racing"
    assert room2["ghost_of"] == {"code": code, "player": "p1"}
    assert again["board"]["columns"] == welcome["board"]["columns"]  # the recorded deal
    assert [p["name"] for p in room2["players"]] == ["Me", "Rec (ghost)"]
    event = await me.expect("progress", timeout=10)
    assert event["player"] == "p2" and event["progress"]["moves"] == 1, event
    await me.close()


async def test_a_ghost_races_under_its_games_time_limit(node) -> None:
    """A game that ran out of time ends its log with no resignation: its ghost race has
    the recorded game's time limit, so it ends (as the recorded game did) at the limit;
    and it is ranked as the recorded game was (here by score)."""
    ref = winnable(draw=1)
    solo = await Client.open(node.port)
    welcome = await solo.request(
        "create",
        "welcome",
        name="Rec",
        practice=True,
        time_limit=10,
        deal={"cards": ref["cards"]},
        settings={"scoring": "standard"},
        rank_by="score",
    )
    assert (await solo.move(ref["line"][0], seq=1))["type"] == "ack"
    assert (await solo.request("resign", "ack", seq=2))["type"] == "ack"
    while (await solo.expect("room"))["room"]["phase"] != "finished":
        pass
    me = await Client.open(node.port)
    got = await me.request("ghost", "welcome", code=welcome["room"]["code"], player="p1", name="Me")
    room = got["room"]
    assert room["time_limit"] == 10 and room["ends_at"] == room["start_at"] + 10_000, room
    assert room["rank_by"] == "score", room
    for c in (solo, me):
        await c.close()


async def test_the_ghost_of_an_abandoned_game_resigns_after_its_last_move(node) -> None:
    """A recorded game with no end in its log and no time limit (its room abandoned, as
    the sweeper does, while it was being played): its ghost resigns after its last move,
    so the race ends once the player's game does, and a rematch is open."""
    ref = winnable(draw=1)
    solo = await Client.open(node.port)
    welcome = await solo.request(
        "create", "welcome", name="Rec", practice=True, deal={"cards": ref["cards"]}
    )
    code = welcome["room"]["code"]
    for seq, step in enumerate(ref["line"][:2], start=1):
        assert (await solo.move(step, seq=seq))["type"] == "ack"
    await solo.close()
    await node.rooms.finish(code, "abandoned")
    me = await Client.open(node.port)
    got = await me.request("ghost", "welcome", code=code, player="p1", name="Me")
    assert got["type"] == "welcome" and got["room"]["time_limit"] is None, got
    ghost = []
    while not ghost or ghost[-1]["status"] == "playing":
        event = await me.expect("progress", timeout=10)
        if event["player"] == "p2":
            ghost.append(event["progress"])
    assert [(g["moves"], g["status"]) for g in ghost] == [
        (1, "playing"),
        (2, "playing"),
        (2, "resigned"),
    ]
    assert (await me.request("resign", "ack", seq=1))["type"] == "ack"
    while (await me.expect("room"))["room"]["phase"] != "finished":
        pass
    again = await me.request("rematch", "welcome")
    assert again["type"] == "welcome" and again["room"]["ghost"], again
    await me.close()


async def test_ghost_refusals(node) -> None:
    a, b = await start_race(node.port)
    running = a.seen[0]["room"]["code"]
    code = await record(node.port, moves=1, gap=0)
    c = await Client.open(node.port)
    for fields, reason in [
        ({"code": "ZZZZZZ", "player": "p1", "name": "x"}, "no_room"),
        ({"code": running, "player": "p1", "name": "x"}, "not_finished"),
        ({"code": code, "player": "p3", "name": "x"}, "no_player"),
        ({"code": code, "player": "p1"}, "missing_field"),
        ({"code": code, "player": "player-one", "name": "x"}, "bad_field"),
        ({"code": "bad", "player": "p1", "name": "x"}, "bad_field"),
        ({"code": code, "player": "p1", "name": "x", "deal": {}}, "bad_field"),
    ]:
        got = await c.request("ghost", "welcome", **fields)
        assert got["type"] == "error" and got["reason"] == reason, (fields, got)
    for x in (a, b, c):
        await x.close()


async def test_a_daily_ghost_comes_once_the_challenge_is_final(daily) -> None:
    """Racing a daily attempt's ghost is a practice game on its deal: only once the
    challenge is final (``not_yet`` before, whoever asks, one's own attempt ended or not,
    one's own attempt's ghost too)."""
    cid = day_id()
    ann, bob = await guest(daily.port), await guest(daily.port)
    a = await ann.request("attempt", "welcome", challenge=cid, name="Ann")
    assert (await ann.request("resign", "ack", seq=1))["type"] == "ack"
    code = a["room"]["code"]
    while (await ann.expect("room"))["room"]["phase"] != "finished":
        pass
    got = await bob.request("ghost", "welcome", code=code, player="p1", name="Bob")
    assert sealed(got, cid), got
    await bob.request("attempt", "welcome", challenge=cid, name="Bob")
    assert (await bob.request("resign", "ack", seq=1))["type"] == "ack"
    got = await bob.request("ghost", "welcome", code=code, player="p1", name="Bob")
    assert sealed(got, cid), got
    own = await ann.request("ghost", "welcome", code=code, player="p1", name="Ann")
    assert sealed(own, cid), own
    to_close(daily.clock, cid, -1_800_000 - 1_000)  # final
    got = await bob.request("ghost", "welcome", code=code, player="p1", name="Bob")
    assert got["type"] == "welcome" and got["room"]["ghost_of"]["code"] == code, got
    for x in (ann, bob):
        await x.close()
