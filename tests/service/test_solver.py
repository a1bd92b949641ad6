"""The solver in the server: practice rooms, hints, finish it for me, winnable-only deals
and the analysis of a finished race, over real WebSockets and a real Redis."""

from __future__ import annotations

import asyncio
import hashlib
import secrets
import time
from collections.abc import AsyncIterator
from functools import cache

import orjson
import pytest
import redis

from klondike_race.engine import Deal, Game, Settings
from klondike_race.service.domain import assist
from klondike_race.service.logs import configure
from klondike_race.service.node import Node
from klondike_race.service.store import moves_key, room_key
from klondike_race.solver.jobs import solve_job
from tests.conftest import reference_deals

from .conftest import Client, make_config, running, start_race, winnable

# a request the solver answers: its budget (up to 5 s) and a loaded machine's slack
SOLVER_WAIT = 30.0


@cache
def quick_loss() -> list[str]:
    """A reference deal (Draw 1) the solver proves lost in a few thousand positions."""
    for record in reference_deals():
        if record["result"] == "lose" and record["draw"] == 1:
            out = solve_job(record["cards"], {"draw": 1}, [], max_seconds=None, max_states=5000)
            if out["result"] == "lose":
                return record["cards"]
    raise AssertionError("no quick loss among the reference deals")


async def practice(port: int, cards: list[str], **create) -> Client:
    client = await Client.open(port)
    welcome = await client.request(
        "create", "welcome", name="solo", practice=True, deal={"cards": cards}, **create
    )
    assert welcome["type"] == "welcome", welcome
    return client


async def finished_room(client: Client) -> dict:
    room = await client.expect("room", timeout=10)
    while room["room"]["phase"] != "finished":
        room = await client.expect("room", timeout=10)
    return room


async def test_practice_hint_then_finish_ends_in_a_win(node, redis_url) -> None:
    ref = winnable(draw=1)
    solo = await practice(node.port, ref["cards"])
    welcome = solo.seen[0]
    room = welcome["room"]
    # one player, started at once, private: not in the public list
    assert room["practice"] and room["phase"] == "racing" and room["capacity"] == 1
    assert room["private"] and welcome["board"]["moves"] == 0
    other = await Client.open(node.port)
    listed = await other.request("rooms", "rooms")
    assert room["code"] not in [r["code"] for r in listed["rooms"]]
    joined = await other.request("join", "welcome", code=room["code"], name="x")
    assert joined["type"] == "error" and joined["reason"] == "not_waiting"
    # a hint is a move of a winning line: play it
    hint = await solo.request("hint", "hint", timeout=SOLVER_WAIT)
    assert hint["type"] == "hint", hint
    assert hint["result"] == "win" and hint["line"] >= 1
    wire = {k: hint[k] for k in ("from", "to", "count", "action") if k in hint}
    step = wire.get("action") or wire
    assert (await solo.move(step))["type"] == "ack"
    # finish it for me: every move of the line acknowledged, ending in a win
    finishing = await solo.request("finish", "finishing", timeout=SOLVER_WAIT)
    assert finishing["type"] == "finishing", finishing
    assert finishing["seq"] == 2 and finishing["moves"] >= 1
    last = None
    for seq in range(2, 2 + finishing["moves"]):
        last = await solo.expect("ack", timeout=10)
        assert last["seq"] == seq and not last.get("duplicate")
    assert last is not None and last["board"]["status"] == "won"
    assert last["board"]["moves"] == 1 + finishing["moves"]
    # each move is in the log; the practice game ends; the analysis arrives
    rds = redis.Redis.from_url(redis_url)
    assert rds.llen(moves_key(room["code"], "p1")) == 1 + finishing["moves"]
    done = await finished_room(solo)
    assert done["room"]["end_reason"] == "all_over"
    analysis = await solo.expect("analysis", timeout=30)
    assert analysis["analysis"]["players"] == {"p1": "won"}
    assert analysis["analysis"]["deal"] == "win" and analysis["analysis"]["par"] > 0
    stored = orjson.loads(rds.hget(room_key(room["code"]), "analysis"))
    assert stored == analysis["analysis"]
    # nothing more to finish or hint
    assert (await solo.request("finish", "finishing"))["reason"] == "game_over"
    assert (await solo.request("hint", "hint"))["reason"] == "race_over"
    for c in (solo, other):
        await c.close()


async def test_hints_refused_in_races_and_finish_only_once_the_race_finished(
    node, redis_url
) -> None:
    ref = winnable(draw=1)
    a, b = await start_race(node.port, deal={"cards": ref["cards"]})
    code = a.seen[0]["room"]["code"]
    for c in (a, b):
        answer = await c.request("hint", "hint")
        assert answer["type"] == "error" and answer["reason"] == "not_in_practice"
        answer = await c.request("finish", "finishing")
        assert answer["type"] == "error" and answer["reason"] == "race_not_over"
    assert (await a.move("draw"))["type"] == "ack"
    assert (await b.move("draw"))["type"] == "ack"
    # a resigns while b races: finish it for me would show a the deal (every card of
    # the solver's line) while b is still at it, so it stays off until the race finishes
    resigned = await a.request("resign", "ack", seq=2)
    assert resigned["type"] == "ack" and resigned["can_finish"] is False
    await a.expect("boards")
    answer = await a.request("finish", "finishing", timeout=SOLVER_WAIT)
    assert answer["type"] == "error" and answer["reason"] == "race_not_over"
    assert not [m for m in await a.drain(0.3) if m["type"] in ("welcome", "ack")]
    rds = redis.Redis.from_url(redis_url)
    assert rds.llen(moves_key(code, "p1")) == 2  # draw, resign: nothing added to the race
    # the race goes on for b, whose ranking view never saw a's continuation
    answer = await b.move("draw")
    assert answer["type"] == "ack"
    row = next(r for r in answer["leaderboard"] if r["player"] == "p1")
    assert row["status"] == "resigned" and row["foundation"] == 0 and row["moves"] == 1
    assert (await b.request("resign", "ack", seq=b.seq + 1))["type"] == "ack"
    done = await finished_room(b)
    assert {r["player"]: r["status"] for r in done["leaderboard"]} == {
        "p1": "resigned",
        "p2": "resigned",
    }
    over = await finished_room(a)
    assert over["can_finish"] is True and over["can_hint"] is False
    # the race has finished: finish it for me continues a's position in a practice room
    # of its own; the race's log and ranking do not change
    await a.send("finish")
    welcome = await a.expect("welcome", timeout=15)
    fork = welcome["room"]
    assert fork["practice"] and fork["parent"] == code and fork["code"] != code
    assert "reveal" not in fork and fork["commitment"] is None
    assert welcome["seq"] == 1 and welcome["board"]["moves"] == 1 and welcome["token"]
    finishing = await a.expect("finishing")
    assert finishing["seq"] == 2
    last = None
    for _ in range(finishing["moves"]):
        last = await a.expect("ack", timeout=10)
    assert last is not None and last["board"]["status"] == "won"
    assert rds.llen(moves_key(code, "p1")) == 2  # the race's log is untouched
    # the continuation's clock goes on from the race's last move: its times stay in order
    raced = [int(e.rsplit(b"@", 1)[1]) for e in rds.lrange(moves_key(code, "p1"), 0, 0)]
    times = [int(e.rsplit(b"@", 1)[1]) for e in rds.lrange(moves_key(fork["code"], "p1"), 0, -1)]
    assert times[0] == raced[0] and times == sorted(times) and len(times) == 1 + finishing["moves"]
    assert welcome["progress"]["p1"]["last_ms"] == raced[0]
    analysis = await b.expect("analysis", timeout=30)
    assert set(analysis["analysis"]["players"]) == {"p1", "p2"}
    assert analysis["analysis"]["deal"] == "win"
    assert analysis["analysis"]["players"]["p1"] == "win"
    # b's race is over too (the race finished): b may finish, in a continuation
    await b.send("finish")
    assert (await b.expect("welcome", timeout=15))["room"]["parent"] == code
    # the analysis is part of the full state, e.g. for a late spectator
    viewer = await Client.open(node.port)
    seen = await viewer.request("watch", "welcome", code=code)
    assert seen["analysis"] == analysis["analysis"]
    for c in (a, b, viewer):
        await c.close()


async def device(port: int, device_id: str) -> Client:
    """A connection of the guest of ``device_id`` (another device of the same player)."""
    client = await Client.open(port)
    assert (await client.request("hello", "identity", device=device_id))["type"] == "identity"
    return client


async def test_the_help_is_for_the_seats_game_from_any_of_its_devices(node) -> None:
    """Found by tests/service/test_who_sees_what.py: each connection of a seat kept its
    own copy of the game, following only its own moves, and answered ``hint`` and
    ``finish`` and sent its flags from it. From the second device of a practice game the
    first had played on, finish it for me searched the deal's start, announced its line
    from seq 1 and stopped at a duplicate; after the second device's seat had won a race,
    its results said ``can_finish`` and its ``finish`` searched a won game (the rule:
    never for a won game). The help is for the seat's game as stored."""
    ref = winnable(draw=1)
    me = secrets.token_urlsafe(24)
    first, second = await device(node.port, me), await device(node.port, me)
    made = await first.request(
        "create", "welcome", name="solo", practice=True, deal={"cards": ref["cards"]}
    )
    code = made["room"]["code"]
    assert (await second.request("join", "welcome", code=code, name="solo"))["seq"] == 0
    for step in ref["line"][:20]:
        assert (await first.move(step))["type"] == "ack"
    hint = await second.request("hint", "hint", timeout=SOLVER_WAIT)
    assert hint["type"] == "hint" and hint["line"] < len(ref["line"]), hint
    finishing = await second.request("finish", "finishing", timeout=SOLVER_WAIT)
    assert finishing["seq"] == 21, finishing  # from the seat's position, not the start
    last = None
    for seq in range(21, 21 + finishing["moves"]):
        last = await second.expect("ack", timeout=10)
        assert last["seq"] == seq and not last.get("duplicate"), last
    assert last is not None and last["board"]["status"] == "won"
    # a race: the seat wins on its first device, its second one is told nothing to finish
    racer, other = await device(node.port, me), await device(node.port, secrets.token_urlsafe(24))
    room = await racer.request(
        "create", "welcome", name="racer", private=True, deal={"cards": ref["cards"]}
    )
    code = room["room"]["code"]
    assert (await other.request("join", "welcome", code=code, name="other"))["type"] == "welcome"
    again = await device(node.port, me)
    assert (await again.request("join", "welcome", code=code, name="racer"))["type"] == "welcome"
    for c in (racer, other):
        await c.send("ready")
    for c in (racer, other, again):
        await c.expect("start", timeout=10)
    for step in ref["line"]:
        last = await racer.move(step)
    assert last is not None and last["board"]["status"] == "won"
    assert (await other.request("resign", "ack", seq=1))["type"] == "ack"
    results = await finished_room(again)
    assert results["can_finish"] is False and results["can_hint"] is False, results
    answer = await again.request("finish", "finishing", "welcome", timeout=SOLVER_WAIT)
    assert (answer["type"], answer.get("reason")) == ("error", "game_over"), answer
    for c in (first, second, racer, other, again):
        await c.close()


async def test_no_winning_line(node) -> None:
    solo = await practice(node.port, quick_loss())
    answer = await solo.request("hint", "hint", timeout=SOLVER_WAIT)
    assert answer["type"] == "error" and answer["reason"] == "no_winning_line"
    answer = await solo.request("finish", "finishing", timeout=SOLVER_WAIT)
    assert answer["type"] == "error" and answer["reason"] == "no_winning_line"
    assert (await solo.move("draw"))["type"] == "ack"  # the game itself goes on
    await solo.close()


@pytest.fixture
async def impatient(redis_url: str) -> AsyncIterator[Node]:
    """A node whose hint and finish budgets are zero: every search is unknown."""
    configure(json=False, level="warning")
    node = Node(make_config(redis_url, solver_hint_s=0.0, solver_finish_s=0.0), redis_url)
    node.port = await node.start()  # type: ignore[attr-defined]
    yield node
    await node.stop()


async def test_unknown_when_the_budget_runs_out(impatient) -> None:
    solo = await practice(impatient.port, winnable(draw=1)["cards"])
    for kind, answer in (("hint", "hint"), ("finish", "finishing")):
        got = await solo.request(kind, answer, timeout=SOLVER_WAIT)
        assert got["type"] == "error" and got["reason"] == "unknown", got
    await solo.close()


@pytest.fixture
async def patient(redis_url: str) -> AsyncIterator[Node]:
    """A node that gives a finished race's analysis 10 s a position: on a loaded machine
    the tests' 1 s may not decide a Draw 3 deal that a quiet one wins in a few ms."""
    async with running(make_config(redis_url, solver_analysis_s=10.0)) as node:
        yield node


async def test_winnable_only_deals_a_proven_winnable_seed(patient) -> None:
    node = patient
    a, b = await start_race(node.port, winnable_only=True, settings={"draw": 3})
    start = next(m for m in a.seen if m["type"] == "start")
    assert start["room"]["winnable_only"]
    commitment = start["room"]["commitment"]
    for c in (a, b):
        assert (await c.request("resign", "ack", seq=1))["type"] == "ack"
    done = await finished_room(a)
    reveal = done["room"]["reveal"]
    # the commitment covers the final seed, and the solver wins that deal
    digest = hashlib.sha256(f"{reveal['salt']}:v1:{reveal['seed']}".encode()).hexdigest()
    assert digest == commitment
    assert solve_job(reveal["seed"], {"draw": 3}, [], max_seconds=30)["result"] == "win"
    analysis = await a.expect("analysis", timeout=30)
    assert analysis["analysis"]["deal"] == "win" and analysis["analysis"]["par"] > 0
    for c in (a, b):
        await c.close()


async def test_winnable_only_from_a_dev_seed_and_refusals(node) -> None:
    c = await Client.open(node.port)
    welcome = await c.request(
        "create", "welcome", name="ann", winnable_only=True, deal={"seed": "42"}, practice=True
    )
    assert welcome["type"] == "welcome" and welcome["room"]["winnable_only"]
    bad = await c.request(
        "create", "welcome", name="ann", winnable_only=True, deal={"cards": quick_loss()}
    )
    assert bad["type"] == "error" and bad["reason"] == "bad_field"
    # a spectator acts on no game
    viewer = await Client.open(node.port)
    await viewer.request("watch", "welcome", code=welcome["room"]["code"])
    for kind in ("hint", "finish", "rematch"):
        got = await viewer.request(kind, "hint", "finishing", "welcome")
        assert got["type"] == "error" and got["reason"] == "not_a_player", got
    for client in (c, viewer):
        await client.close()


async def test_solver_queue_full_is_busy(redis_url) -> None:
    configure(json=False, level="warning")
    node = Node(make_config(redis_url, solver_queue=0), redis_url)
    port = await node.start()
    try:
        solo = await practice(port, winnable(draw=1)["cards"])
        for kind, answer in (("hint", "hint"), ("finish", "finishing")):
            got = await solo.request(kind, answer, timeout=SOLVER_WAIT)
            assert got["type"] == "error" and got["reason"] == "busy", got
        got = await solo.request("create", "welcome", name="a", winnable_only=True)
        assert got["type"] == "error" and got["reason"] == "busy", got
        await solo.close()
    finally:
        await node.stop()


async def test_an_analysis_never_stored_is_made_by_the_sweeper(node, redis_url) -> None:
    """The node that finished a race makes its analysis; should it die first, the race
    stays on ``rooms:analysis`` and the next sweep, on any node, makes it."""
    ref = winnable(draw=1)
    a, b = await start_race(node.port, deal={"cards": ref["cards"]})
    code = a.seen[0]["room"]["code"]
    rds = redis.Redis.from_url(redis_url)
    assert (await a.move(ref["line"][0]))["type"] == "ack"
    assert (await a.request("resign", "ack", seq=2))["type"] == "ack"
    node.solving.stopping = True  # as if the node died as the race finished
    t0 = time.time() * 1000
    assert (await b.request("resign", "ack", seq=1))["type"] == "ack"
    while (await a.expect("room"))["room"]["phase"] != "finished":
        pass
    due = rds.zscore("rooms:analysis", code)  # on the list in the finishing step itself
    assert due is not None and due > t0 + 30_000, due
    assert not [m for m in await a.drain(0.5) if m["type"] == "analysis"]
    node.solving.stopping = False
    rds.zadd("rooms:analysis", {code: 0})  # its time has come
    await node.sweep()
    first = await a.expect("analysis", timeout=30)
    assert set(first["analysis"]["players"]) == {"p1", "p2"}
    assert rds.zscore("rooms:analysis", code) is None  # stored: off the list
    # as if the finishing node had died before storing it: gone, and due now
    rds.hdel(room_key(code), "analysis")
    rds.zadd("rooms:analysis", {code: 0})
    await node.sweep()
    again = await a.expect("analysis", timeout=30)
    assert again["analysis"] == first["analysis"] and again["v"] > first["v"]
    assert orjson.loads(rds.hget(room_key(code), "analysis")) == first["analysis"]
    assert rds.zscore("rooms:analysis", code) is None
    # claimed once: a second sweep finds nothing to do
    await node.sweep()
    assert not [m for m in await a.drain(0.5) if m["type"] == "analysis"]
    for c in (a, b):
        await c.close()


async def test_a_hint_plays_a_safe_card_home_first(node) -> None:
    """Where the solver's line starts by drawing, a person would first play the ace
    lying face up: a hint offers the safe card home (it keeps the game won)."""
    cards = reference_deals()[1]["cards"]  # Draw 1, won; the A of diamonds tops column 5
    assert reference_deals()[1]["draw"] == 1
    line = solve_job(cards, {"draw": 1}, [], max_seconds=5)["line"]
    assert line[0] == "d"  # the solver's line would draw first
    solo = await practice(node.port, cards)
    hint = await solo.request("hint", "hint", timeout=SOLVER_WAIT)
    assert (hint["move"], hint["from"], hint["result"]) == ("5>d", "col5", "win"), hint
    assert (await solo.move({"from": hint["from"], "to": hint["to"], "count": 1}))["type"] == "ack"
    hint = await solo.request("hint", "hint", timeout=SOLVER_WAIT)  # the next safe card, or ...
    assert hint["type"] == "hint" and hint["result"] == "win", hint
    await solo.close()


async def test_a_hint_turns_a_card_the_solver_proves_keeps_the_win(node) -> None:
    """Where the solver's line starts by drawing and no card can go home safely, a person
    would first turn a face-down card: the hint is such a move, checked by the solver (on
    this deal, of the two moves that turn a card, 3>7 loses and 7>6 keeps the win)."""
    deal = reference_deals()[20]
    assert deal["draw"] == 1 and deal["result"] == "win"
    game = Game(Deal.from_cards(deal["cards"]), Settings(draw=1))
    assert assist.safe_home(game) is None
    assert [str(m) for m in assist.turning_moves(game)] == ["7>6", "3>7"]  # most face-down first
    assert solve_job(deal["cards"], {"draw": 1}, [], max_seconds=5)["line"][0] == "d"
    solo = await practice(node.port, deal["cards"])
    hint = await solo.request("hint", "hint", timeout=SOLVER_WAIT)
    assert (hint["move"], hint["from"], hint["to"], hint["count"]) == ("7>6", "col7", "col6", 1)
    assert hint["line"] >= 2
    await solo.close()


async def test_with_two_workers_a_hard_finish_is_searched_by_both(redis_url) -> None:
    """Reference deal 148 in Draw 3: plan 0 needs about 320,000 positions, plan 1 about
    43,000 (docs/solver.md, "Several workers on one position")."""
    configure(json=False, level="warning")
    node = Node(
        make_config(redis_url, solver_workers=2, solver_analysis_s=0.05, solver_finish_s=30),
        redis_url,
    )
    port = await node.start()
    try:
        ref = next(r for r in reference_deals() if r["id"] == 148 and r["draw"] == 3)
        solo = await practice(port, ref["cards"], settings={"draw": 3})
        pool = node.solving.pool()
        finish = asyncio.create_task(solo.request("finish", "finishing", timeout=SOLVER_WAIT))
        for _ in range(3000):  # the second worker joins in
            if pool.running == 2 or finish.done():
                break
            await asyncio.sleep(0.01)
        assert pool.running == 2, "the idle worker never joined the search"
        finishing = await finish
        assert finishing["type"] == "finishing", finishing
        last = None
        for _ in range(finishing["moves"]):
            last = await solo.expect("ack", timeout=10)
        assert last is not None and last["board"]["status"] == "won"
        await solo.close()
    finally:
        await node.stop()
    assert pool._flags is None  # the stop files went with the pool


async def test_a_burst_of_finished_practice_games_is_not_all_analysed(redis_url) -> None:
    """Analyses go to the pool one at a time; a practice game's is skipped while
    KR_SOLVER_QUEUE analyses wait (so many short games ending never hold a hint behind
    them), a race's never is."""
    from klondike_race.service.domain.room import Room

    configure(json=False, level="warning")
    node = Node(make_config(redis_url, solver_queue=1), redis_url)
    port = await node.start()
    try:
        codes = []
        for _ in range(3):
            solo = await Client.open(port)
            welcome = await solo.request("create", "welcome", name="solo", practice=True)
            codes.append(welcome["room"]["code"])
        a, _ = await start_race(port)
        codes.append(a.seen[0]["room"]["code"])
        rooms = []
        for code in codes:
            loaded = await node.store.rooms.load(code)
            assert loaded is not None
            rooms.append(Room.from_json(loaded[0]))
        await asyncio.gather(*(node.solving.analyse(room) for room in rooms))
        analysed = [await node.store.rooms.load_analysis(code) is not None for code in codes]
        assert analysed == [True, False, False, True], analysed
    finally:
        await node.stop()
