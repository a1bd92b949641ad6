"""Play statistics (issue 34: personal bests, streaks, the statistics page): every game
whose room finished counts once per player and variant, practice and races alike; each
player told their own game's effect after the end; a streak, a 30-day window of UTC
days; a guest's moved to the account that claims them; read over HTTP. Real Redis, real
WebSockets."""

from __future__ import annotations

import asyncio
import secrets
from dataclasses import replace
from typing import Any

import pytest
import redis

from klondike_race.service.domain import played
from klondike_race.service.domain.room import FINISHED, Room
from klondike_race.service.store.played import MARKS_KEEP_S, PLAYED_DUE
from klondike_race.service.store.ratings import GUEST_KEEP_S

from .conftest import Client, winnable
from .test_ratings import PASSWORD, guest, profile, race

STATS_KEYS = {
    "games", "wins", "win_rate", "best_time_ms", "fewest_moves", "streak", "best_streak",
    "days",
}  # fmt: skip
TOLD_KEYS = {
    "variant", "won", "time_ms", "moves", "best", "fewest", "streak", "best_streak", "games",
    "wins",
}  # fmt: skip


async def practice(c: Client, win: bool, draw: int = 1) -> tuple[str, dict]:
    """A practice game on a winnable deal of Draw ``draw``, won (the whole line) or
    resigned at once: its code and the ``played`` message its player got."""
    ref = winnable(draw=draw)
    code = await race([c], ["win" if win else 0], ref, practice=True, settings={"draw": draw})
    told = await c.expect("played")
    return code, told


async def stats(port: int, who: str) -> dict[str, Any]:
    status, body = await profile(port, who)
    assert status == 200, body
    return body["stats"]


# ---- the pure rules -------------------------------------------------------------------
def test_which_rooms_count_and_what_a_day_is() -> None:
    room = Room("ABCDEF", 0, {"seed": "1"}, "salt", status=FINISHED, end_reason="all_over")
    assert played.counts(room)
    assert not played.counts(replace(room, end_reason="abandoned"))  # never played
    assert not played.counts(replace(room, parent="GHJKLM"))  # a practice continuation
    assert not played.counts(replace(room, status="started"))  # not over
    assert played.day_of(played.DAY_MS * 20000 - 1) == 19999
    assert played.day_of(played.DAY_MS * 20000) == 20000


# ---- practice, told after the end ----------------------------------------------------
async def test_a_won_practice_game_sets_a_best_and_a_lost_one_ends_the_streak(node) -> None:
    device = secrets.token_urlsafe(24)
    c = await Client.open(node.port)
    key = (await c.request("hello", "identity", device=device))["player"]["id"]
    ref = winnable(draw=1)
    _, told = await practice(c, True)
    mine = told["played"]
    assert set(mine) == TOLD_KEYS and mine["variant"] == "draw1" and mine["won"] is True
    assert mine["moves"] == ref["steps"] and mine["time_ms"] > 0
    assert mine["best"] == {"time_ms": mine["time_ms"], "previous_ms": None, "new": True}
    assert mine["fewest"] == {"moves": ref["steps"], "previous": None, "new": True}
    assert (mine["streak"], mine["best_streak"], mine["games"], mine["wins"]) == (1, 1, 1, 1)
    # nothing of it before the room had finished: the room event came first
    kinds = [m["type"] for m in c.seen]
    finished = max(i for i, m in enumerate(c.seen) if m["type"] == "room")
    assert kinds.index("played") > finished
    got = (await stats(node.port, key))["draw1"]
    assert set(got) == STATS_KEYS
    assert got["games"] == got["wins"] == 1 and got["win_rate"] == 1.0
    assert got["best_time_ms"] == mine["time_ms"] and got["fewest_moves"] == ref["steps"]
    assert got["streak"] == got["best_streak"] == 1
    assert len(got["days"]) == played.DAYS and got["days"][-1]["games"] == 1
    assert got["days"][-1]["wins"] == 1 and sum(d["games"] for d in got["days"]) == 1
    # a resigned game: counted, not won, the streak over, the best kept
    _, told = await practice(c, False)
    lost = told["played"]
    assert lost["won"] is False and lost["time_ms"] is None and lost["streak"] == 0
    assert lost["best"] == {
        "time_ms": mine["time_ms"],
        "previous_ms": mine["time_ms"],
        "new": False,
    }
    got = (await stats(node.port, key))["draw1"]
    assert (got["games"], got["wins"], got["win_rate"]) == (2, 1, 0.5)
    assert (got["streak"], got["best_streak"]) == (0, 1)
    assert got["days"][-1] == {"day": got["days"][-1]["day"], "games": 2, "wins": 1}
    # a resume of the finished game (another device of hers) brings her own line back
    again = await Client.open(node.port)
    await again.request("hello", "identity", device=device)
    back = await again.request("resume", "welcome", "resumed", token=c.token)
    assert back["type"] == "welcome" and back["played"] == lost, back
    await again.close()
    await c.close()


async def test_a_race_counts_each_seat_and_tells_each_player_their_own(node) -> None:
    (a, ka), (b, kb) = await guest(node.port), await guest(node.port)
    anon = await Client.open(node.port)  # an anonymous seat: nothing stored, nothing told
    await race([a, b, anon], ["win", 3, 0])
    won, lost = (await a.expect("played"))["played"], (await b.expect("played"))["played"]
    assert won["won"] is True and won["best"]["new"] is True
    assert lost["won"] is False and lost["best"]["time_ms"] is None and lost["games"] == 1
    assert (await anon.request("ping", "pong", id=1))["type"] == "pong"  # after the event
    assert not [m for m in anon.seen if m["type"] == "played"]
    assert (await stats(node.port, ka))["draw1"]["wins"] == 1
    assert (await stats(node.port, kb))["draw1"]["wins"] == 0
    # a resume from the version before it gets it again, its own only (b's is skipped)
    told = next(m for m in a.seen if m["type"] == "played")
    again = await Client.open(node.port)
    back = await again.request("resume", "resumed", token=a.token, since=told["v"] - 1)
    assert back["type"] == "resumed", back
    assert (await again.expect("played")) == {"type": "played", "v": told["v"], "played": won}
    assert (await again.request("ping", "pong", id=2))["type"] == "pong"
    assert [m["type"] for m in again.seen].count("played") == 1
    await again.close()
    # a Draw 3 game is its own variant
    await practice(a, True, draw=3)
    both = await stats(node.port, ka)
    assert set(both) == {"draw1", "draw3"} and both["draw3"]["games"] == 1
    assert both["draw1"]["games"] == 1
    for cl in (a, b, anon):
        await cl.close()


async def test_an_assisted_practice_game_does_not_count(node, redis_url) -> None:
    c, key = await guest(node.port)
    ref = winnable(draw=1)
    welcome = await c.request(
        "create", "welcome", name="h", practice=True, deal={"cards": ref["cards"]}
    )
    code = welcome["room"]["code"]
    assert (await c.request("hint", "hint"))["type"] == "hint"
    assert redis.Redis.from_url(redis_url).hget(f"room:{{{code}}}", "assisted:p1") == b"1"
    for step in ref["line"]:
        assert (await c.move(step))["type"] == "ack"
    room = await c.expect("room")
    while room["room"]["phase"] != "finished":
        room = await c.expect("room")
    assert await node.played.apply(code) is False  # nothing to tell: no game counted
    status, body = await profile(node.port, key)
    assert status == 200 and body["stats"] == {}
    await c.close()


# ---- exactly once ---------------------------------------------------------------------
async def test_a_game_counts_once_whoever_applies_it_and_however_often(
    node, redis_url, monkeypatch: pytest.MonkeyPatch
) -> None:
    rds = redis.Redis.from_url(redis_url)
    apply = node.played.apply

    async def killed(code: str) -> bool:  # the finishing node died right after the end
        return False

    monkeypatch.setattr(node.played, "apply", killed)
    (a, ka), (b, kb) = await guest(node.port), await guest(node.port)
    code = await race([a, b], ["win", 0])
    assert rds.zscore(PLAYED_DUE, code) is not None  # owed, in the step that finished it
    assert await stats(node.port, ka) == {}
    # the node had counted one player before dying: that player is not counted again
    loaded = await node.store.rooms.load(code)
    assert loaded is not None
    room = Room.from_json(loaded[0])
    prog = (await node.store.rooms.snapshot(code))[1]
    (first, _) = played.games(room, prog, set())
    assert first.who == ka and room.ended is not None
    day = played.day_of(room.ended)
    game = (first.won, first.time_ms, first.moves)
    counted, _, _ = await node.store.played.count(ka, code, "draw1", game, (day, day % 30), 0)
    assert counted is True
    # two nodes (or a node and the sweeper) at once: one stores what the players are told
    got = await asyncio.gather(*[apply(code) for _ in range(4)])
    assert sorted(got) == [False, False, False, True]
    assert rds.zscore(PLAYED_DUE, code) is None
    for k, wins in ((ka, 1), (kb, 0)):
        once = (await stats(node.port, k))["draw1"]
        assert (once["games"], once["wins"]) == (1, wins), once
    # the sweeper, the room put back on its list as if claimed before: nothing changes
    before = await stats(node.port, ka)
    rds.zadd(PLAYED_DUE, {code: 0})
    await node.sweep()
    assert await stats(node.port, ka) == before and rds.zscore(PLAYED_DUE, code) is None
    # a room nobody applied: the sweeper does, once its grace has passed
    code = await race([a, b], ["win", 0])
    await node.sweep()  # not due yet
    assert (await stats(node.port, ka))["draw1"]["games"] == 1
    rds.zadd(PLAYED_DUE, {code: 0})
    await node.sweep()
    after = (await stats(node.port, ka))["draw1"]
    assert (after["games"], after["wins"], after["streak"], after["best_streak"]) == (2, 2, 2, 2)
    assert rds.hget(f"room:{{{code}}}", "played") is not None
    assert 0 < rds.ttl(f"player:{ka}:counted") <= MARKS_KEEP_S
    for c in (a, b):
        await c.close()


# ---- streaks and the 30-day window, in the store --------------------------------------
async def test_streaks_and_thirty_days(node) -> None:
    store, who, today = node.store.played, "g-" + "5" * 32, 20_500
    plan = [  # (day, won): 40 days ago (out of the window), 29 days ago (its first), ...
        (today - 40, True), (today - 29, True), (today - 29, False), (today - 10, True),
        (today - 1, True), (today, True), (today, False), (today, True),
    ]  # fmt: skip
    for i, (day, won) in enumerate(plan):
        game = (won, 100_000 - i * 1000 if won else None, 90 + i if won else None)
        counted, before, after = await store.count(
            who, f"Z{i:05d}", "draw1", game, (day, day % 30), 0
        )
        assert counted and after["games"] == i + 1 and before["games"] == (i or None)
    # one game counted twice: nothing changes, the values as they are
    counted, before, after = await store.count(who, "Z00007", "draw1", (True, 1, 1), (today, 0), 0)
    assert not counted and before == after and after["games"] == len(plan)
    got = played.summary(await store.of(who), today)["draw1"]
    assert (got["games"], got["wins"], got["win_rate"]) == (8, 6, 0.75)
    assert (got["streak"], got["best_streak"]) == (1, 3)  # the three before today's loss
    assert got["best_time_ms"] == 100_000 - 7 * 1000 and got["fewest_moves"] == 90
    days = {d["day"]: (d["games"], d["wins"]) for d in got["days"]}
    assert len(got["days"]) == 30 and list(days)[-1] == played._iso(today)
    assert got["days"][0]["day"] == played._iso(today - 29)
    assert days[played._iso(today - 29)] == (2, 1)
    assert days[played._iso(today)] == (3, 2) and days[played._iso(today - 1)] == (1, 1)
    assert sum(g for g, _ in days.values()) == 7  # the game 40 days ago is out
    # 40 days ago and 10 days ago share a slot of the ring (30 days apart): the later
    # day's game started it afresh
    assert days[played._iso(today - 10)] == (1, 1)
    # a day later, the window moves on: 29 days ago is out
    later = played.summary(await store.of(who), today + 1)["draw1"]
    assert later["days"][0]["day"] == played._iso(today - 28) and later["days"][-1]["games"] == 0


# ---- claiming, expiry and the route -----------------------------------------------------
async def test_a_claim_moves_a_guests_statistics_and_they_stop_expiring(node, redis_url) -> None:
    rds = redis.Redis.from_url(redis_url)
    c, key = await guest(node.port)
    await practice(c, True)
    assert 0 < rds.ttl(f"player:{key}:play") <= GUEST_KEEP_S  # a guest's expires
    mine = await stats(node.port, key)
    made = await c.request("register", "identity", name="Stat Sam", password=PASSWORD)
    account = made["player"]["id"]
    assert (await profile(node.port, key))[0] == 404  # moved, nothing left behind
    assert not rds.exists(f"player:{key}:play")
    assert await stats(node.port, account) == mine
    assert rds.ttl(f"player:{account}:play") == -1  # an account's never expires
    _, told = await practice(c, True)  # and goes on under the account
    assert told["played"]["games"] == 2 and told["played"]["streak"] == 2
    assert told["played"]["best"]["previous_ms"] == mine["draw1"]["best_time_ms"]
    assert (await stats(node.port, "Stat%20Sam"))["draw1"]["games"] == 2
    assert rds.ttl(f"player:{account}:play") == -1
    for unknown in ("Nobody%20Here", "g-" + "7" * 32):
        status, body = await profile(node.port, unknown)
        assert status == 404 and body["error"] == "no_player", body
    for bad in ("x" * 40, "%FF"):
        status, body = await profile(node.port, bad)
        assert status == 400 and body["error"] == "bad_player", body
    await c.close()
