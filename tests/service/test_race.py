"""A whole head-to-head race over real WebSockets and a real Redis."""

from __future__ import annotations

import asyncio
import hashlib

import orjson
import redis

from klondike_race.engine import Deal, Game, Settings
from klondike_race.service.clock import Clock
from klondike_race.service.domain import ranking
from klondike_race.service.store import moves_key, room_key

from .conftest import Client, http, make_config, running, start_race, winnable


async def test_head_to_head_race_to_a_win(node, redis_url) -> None:
    ref = winnable(draw=1)
    host, guest = await start_race(node.port, deal={"cards": ref["cards"]})
    # The guest makes a few moves; the host plays the reference line to a win.
    for _ in range(3):
        answer = await guest.move("draw")
        assert answer["type"] == "ack"
    last = None
    for step in ref["line"]:
        last = await host.move(step)
        assert last["type"] == "ack", (step, last)
    assert last["board"]["status"] == "won"
    assert last["board"]["foundation"] == 52
    # The host's game is over: they may now see boards; the guest still racing may not.
    boards = await host.expect("boards")
    assert set(boards["boards"]) == {"p1", "p2"}
    # The guest resigns: every game is over, so the race finishes with results.
    answer = await guest.request("resign", "ack", seq=guest.seq + 1)
    assert answer["type"] == "ack" and answer["move"] == "resign"
    for c in (host, guest):
        room = await c.expect("room")
        while room["room"]["phase"] != "finished":
            room = await c.expect("room")
        board = room["leaderboard"]
        assert [r["player"] for r in board] == ["p1", "p2"]
        assert board[0]["foundation"] == 52 and board[0]["rank"] == 1
        assert board[1]["status"] == "resigned"
        reveal = room["room"]["reveal"]
        expected = hashlib.sha256(f"{reveal['salt']}:{reveal['deal']}".encode()).hexdigest()
        assert reveal["commitment"] == expected
    # the stored leaderboard agrees, and a finished room's keys expire
    code = host.seen[0]["room"]["code"]
    rds = redis.Redis.from_url(redis_url)
    assert [m.decode() for m in rds.zrange(room_key(code) + ":rank", 0, -1)] == ["p1", "p2"]
    assert rds.zscore(room_key(code) + ":rank", "p1") == ranking.progress_key(
        52, ref["steps"], last["board"]["reached_ms"]
    )
    assert 0 < rds.ttl(moves_key(code, "p1")) <= 7 * 86400
    await host.close()
    await guest.close()


async def test_seeded_race_commitment_matches_revealed_seed(node) -> None:
    host, guest = await start_race(node.port)
    welcome = host.seen[0]
    assert welcome["type"] == "welcome"
    start = next(m for m in host.seen if m["type"] == "start")
    commitment = start["room"]["commitment"]
    assert commitment and "seed" not in str(start)
    await host.request("resign", "ack", seq=1)
    await guest.request("resign", "ack", seq=1)
    room = await guest.expect("room")
    while room["room"]["phase"] != "finished":
        room = await guest.expect("room")
    reveal = room["room"]["reveal"]
    assert reveal["deal"] == f"v1:{reveal['seed']}"
    digest = hashlib.sha256(f"{reveal['salt']}:v1:{reveal['seed']}".encode()).hexdigest()
    assert digest == commitment == reveal["commitment"]
    # and the revealed seed is the deal that was played
    game = Game(Deal.from_seed(reveal["seed"]), Settings())
    first = next(m for m in guest.seen if m["type"] == "start")["board"]
    assert first["columns"][0]["up"] == [Deal.from_seed(reveal["seed"]).names()[0]]
    assert game.columns[6][-1] == Deal.from_seed(reveal["seed"]).cards[27]
    for c in (host, guest):
        await c.close()


async def test_quick_match_pairs_two_players(node) -> None:
    a = await Client.open(node.port)
    b = await Client.open(node.port)
    assert (await a.request("quick", "queued", name="ann"))["type"] == "queued"
    welcome_b = await b.request("quick", "welcome", name="bob")
    assert welcome_b["type"] == "welcome" and welcome_b["room"]["quick"]
    welcome_a = await a.expect("welcome")
    assert welcome_a["room"]["code"] == welcome_b["room"]["code"]
    assert welcome_a["player"] != welcome_b["player"]
    for client, welcome in ((a, welcome_a), (b, welcome_b)):
        # the tests' countdown is 150 ms: on a loaded machine it can end before a welcome
        # is sent, which then says so and carries the board (no start follows)
        if welcome["room"]["phase"] == "racing":
            assert "board" in welcome
        else:
            assert welcome["room"]["phase"] == "countdown" and "board" not in welcome
            assert "board" in await client.expect("start")
    assert (await a.move("draw"))["type"] == "ack"
    await a.close()
    await b.close()


async def test_a_deal_stuck_from_the_start_ends_the_race_at_once(node) -> None:
    """About 1 Draw 3 deal in 350 has no card that can ever move: every game is stuck from the
    start and no move could end it, so the race finishes as it starts."""
    settings = Settings(draw=3)
    seed = next(s for s in range(10_000) if Game(Deal.from_seed(s), settings).status == "stuck")
    host, guest = await start_race(node.port, deal={"seed": str(seed)}, settings={"draw": 3})
    for c in (host, guest):
        start = next(m for m in c.seen if m["type"] == "start")
        assert start["board"]["status"] == "stuck"
        room = await c.expect("room")
        while room["room"]["phase"] != "finished":
            room = await c.expect("room")
        assert room["room"]["end_reason"] == "all_over"
        assert [r["status"] for r in room["leaderboard"]] == ["stuck", "stuck"]
    refused = await host.move("draw")
    assert refused["type"] == "refused" and refused["reason"] == "race_over"
    for c in (host, guest):
        await c.close()


async def test_a_practice_game_on_a_deal_stuck_from_the_start_finishes_at_once(node) -> None:
    """A practice game starts as it is made (no countdown, no ``start``): on a deal stuck
    from the start it is over at once, and its room finishes as a race's does."""
    settings = Settings(draw=3)
    seed = next(s for s in range(10_000) if Game(Deal.from_seed(s), settings).status == "stuck")
    c = await Client.open(node.port)
    welcome = await c.request(
        "create",
        "welcome",
        name="ann",
        practice=True,
        deal={"seed": str(seed)},
        settings={"draw": 3},
    )
    assert welcome["board"]["status"] == "stuck" and welcome["board"]["over"] is True
    room = await c.expect("room")
    assert room["room"]["phase"] == "finished" and room["room"]["end_reason"] == "all_over"
    assert [r["status"] for r in room["leaderboard"]] == ["stuck"]
    await c.close()


async def test_a_resignation_is_no_move_for_the_time_that_breaks_a_tie(node) -> None:
    """Ranked by score, players level: the one who reached it first ranks first, and
    still does after resigning later (a resignation leaves ``last_ms`` as it was), in the
    live standings as in the results."""
    a, b, c = await start_race(node.port, players=3, settings={"scoring": "vegas"}, rank_by="score")
    for x in (a, b, c):  # the same score, one after the other
        assert (await x.move("draw"))["type"] == "ack"
        await asyncio.sleep(0.05)
    await c.drain(0.2)
    (drew_at,) = [
        m["progress"]["last_ms"]
        for m in c.seen
        if m["type"] == "progress" and m["player"] == a.player
    ]
    await asyncio.sleep(0.3)
    resigned = await a.request("resign", "ack", seq=2)
    order = [row["player"] for row in sorted(resigned["leaderboard"], key=lambda r: r["rank"])]
    assert order == [a.player, b.player, c.player], resigned["leaderboard"]
    news = await c.expect("progress")
    while news["player"] != a.player or news["progress"]["status"] != "resigned":
        news = await c.expect("progress")
    assert news["progress"]["last_ms"] == drew_at, (drew_at, news)
    order = [row["player"] for row in sorted(news["leaderboard"], key=lambda r: r["rank"])]
    assert order == [a.player, b.player, c.player], news["leaderboard"]
    for x in (a, b, c):
        await x.close()


async def test_a_resigned_games_timed_score_stops_at_its_resignation(redis_url) -> None:
    """Timed standard scoring takes 2 points a 10 s played: a game resigned early keeps
    its score as it stood then in the results, however long the race runs on after it
    (here 10 minutes); a game resigned later loses its 2 points a 10 s until then."""
    clock = Clock()
    settings = {"scoring": "standard", "timed": True}
    async with running(make_config(redis_url), clock) as node:
        ref = winnable(draw=1)
        a, b = await start_race(node.port, deal={"cards": ref["cards"]}, settings=settings)
        seq = 0
        for seq, step in enumerate(ref["line"], start=1):  # until Ann has 30 points
            assert (await b.move(step, seq=seq))["type"] == "ack"
            if (await a.move(step, seq=seq))["board"]["score"] >= 30:
                break
        resigned = await a.request("resign", "ack", seq=seq + 1)
        scored = resigned["board"]["score"]
        assert scored >= 30, resigned["board"]  # (a second or two played: no 2 points off)
        clock.shift(600_000)
        assert (await b.request("resign", "ack", seq=seq + 1))["type"] == "ack"
        room = await a.expect("room")
        while room["room"]["phase"] != "finished":
            room = await a.expect("room")
        final = {p: board["score"] for p, board in room["boards"].items()}  # the results'
        assert final[a.player] == scored, (scored, final)
        assert final[b.player] < scored, final  # 2 a 10 s over 10 minutes
        # the replay ends each game on the same score as the results
        status, _, body = await http(node.port, "GET", f"/api/replays/{room['room']['code']}")
        assert status == 200
        ends = {p["id"]: p["final"]["score"] for p in orjson.loads(body)["players"]}
        assert ends == final, (ends, final)
        for x in (a, b):
            await x.close()
