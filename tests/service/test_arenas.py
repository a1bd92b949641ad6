"""Arena tournaments through real connections (docs/protocol.md, "Arenas"; docs/rules.md,
"Arena tournaments"): the operator's schedule listed, players joining and paired into
races as they wait, each finished race counted once on the table, paired again (not with
the same opponent while others wait), pausing, and the refusals."""

from __future__ import annotations

import asyncio
import time
from pathlib import Path

import orjson
import pytest

from klondike_race.service.clock import Clock
from klondike_race.service.config import Config
from klondike_race.service.domain import arena as A
from klondike_race.service.domain import rating
from klondike_race.service.store.ratings import stats_key

from .conftest import Client, guest, http, make_config, running, winnable

HOUR_MS = 3_600_000
SCHEDULE = "# the tests' arenas\nhourly every=hour at=:00 minutes=30 size=2 time_limit=60 draw=1\n"


def running_arena(tmp_path: Path, redis_url: str, **config: object) -> tuple[Clock, str, Config]:
    """A node whose clock is 10 s into an hourly arena, and that arena's id."""
    path = tmp_path / "arenas.txt"
    path.write_text(SCHEDULE)
    clock = Clock()
    starts = (clock.now_ms() // HOUR_MS + 1) * HOUR_MS  # the next hour's
    clock.shift_to(starts + 10_000)
    made = make_config(redis_url, arenas_file=str(path), **config)
    return clock, A.arena_id("hourly", starts), made


async def race_of(client: Client) -> dict:
    """The next race the arena puts ``client`` in: its ``arena_race`` news, then its
    welcome (with the player's board once the race has started)."""
    news = await client.expect("arena_race", timeout=10)
    welcome = await client.expect("welcome")
    assert welcome["room"]["arena"] == news["arena"], welcome["room"]
    assert welcome["room"]["rated"] is True and welcome["room"]["capacity"] == 2
    if welcome["room"]["phase"] != "racing":  # a short countdown, as a quick match's
        welcome["board"] = (await client.expect("start"))["board"]
    return welcome


async def until_you(client: Client, state: str) -> dict:
    """The next ``arena`` frame in which the player is ``state`` (``paused``, ``waiting``):
    tables pushed as they change may come before the answer asked for."""
    while not (frame := await client.expect("arena"))["you"][state]:
        pass
    return frame


async def ace_home(client: Client, board: dict) -> bool:
    """Draw until an ace shows on a column or the waste, then play it home; False when
    none can come so (a random deal: the 24 stock cards and the 7 column tops hold no
    ace about once in 45 deals)."""
    for _ in range(60):
        tops = [("waste", (board["waste"].get("fan") or [None])[-1])]
        tops += [(f"col{i + 1}", (c["up"] or [None])[-1]) for i, c in enumerate(board["columns"])]
        source = next((pile for pile, card in tops if card and card[0] == "A"), None)
        step = {"from": source, "to": "foundation", "count": 1} if source else "draw"
        if not source and board["stock"] == 0:
            step = "recycle"
        answer = await client.move(step)
        assert answer["type"] == "ack", answer
        board = answer["board"]
        if source:
            return True
    return False


async def test_players_are_paired_as_they_wait_and_each_race_counts_once(
    tmp_path: Path, redis_url: str
) -> None:
    clock, arena_id, config = running_arena(tmp_path, redis_url)
    async with running(config, clock) as node:
        listing = await (await guest(node.port)).request("arenas", "arenas")
        (listed,) = [a for a in listing["arenas"] if a["id"] == arena_id]
        assert listed["phase"] == "running" and listed["pairing"] and listed["players"] == 0
        players = [await guest(node.port) for _ in range(4)]
        for i, p in enumerate(players):
            joined = await p.request("join_arena", "arena", arena=arena_id, name=f"P{i}")
            you = joined["you"]
            assert joined["arena"]["id"] == arena_id and (you["waiting"] or you["racing"]), you
        races = [await race_of(p) for p in players]
        codes = {r["room"]["code"] for r in races}
        assert len(codes) == 2  # two races of two
        race_a = races[0]["room"]["code"]
        a1, a2 = [i for i, r in enumerate(races) if r["room"]["code"] == race_a]
        b1, b2 = [i for i, r in enumerate(races) if r["room"]["code"] != race_a]
        # everyone pauses (so that all four wait again together, below)
        for p in players:
            await p.send("pause_arena", arena=arena_id)
            paused = await until_you(p, "paused")  # (a table pushed before may come first)
            assert paused["you"]["racing"], paused
        # race B: both resign (a race everyone resigned: 0 points each, docs/rules.md);
        # race A: a1 brings an ace home and plays on, a2 resigns, the time limit ends it
        for i in (b1, b2, a2):
            assert (await players[i].request("resign", "ack", seq=1))["type"] == "ack"
        home = await ace_home(players[a1], races[a1]["board"])
        clock.shift_to(clock.now_ms() + 63_000)  # past the race's 60 s (and the grace)
        await node.sweep()  # the sweeper ends a race past its time limit
        standings = {}
        for _ in range(50):  # each race counted once, as it finished
            standings = {e.who: e.standing for e in await node.store.arenas.entrants(arena_id)}
            if all(s.races == 1 for s in standings.values()):
                break
            await asyncio.sleep(0.1)
        # an ace home wins race A (2 points, a streak of 1); without one its two players
        # are level (a shared first place: 1 point each, no win); race B gives 0 each
        want = [(0, 0, 0)] * 3 + [(2, 1, 1)] if home else [(0, 0, 0)] * 2 + [(1, 0, 0)] * 2
        assert sorted((s.points, s.wins, s.streak) for s in standings.values()) == want
        # back together: paired again, each with another opponent while others wait
        joined = {}
        for i in (a1, b1, a2, b2):
            joined[i] = await players[i].request(
                "join_arena", "arena", arena=arena_id, name=f"P{i}"
            )
        rows = joined[b2]["table"]
        got = [(r["name"], r["rank"], r["points"], r["wins"], r["races"]) for r in rows]
        if home:
            assert got[0] == (f"P{a1}", 1, 2, 1, 1) and rows[0]["streak"] == 1, rows
            assert [g[1:] for g in got[1:]] == [(2, 0, 0, 1)] * 3, rows
        else:
            assert {g[0] for g in got[:2]} == {f"P{a1}", f"P{a2}"}, rows
            assert [g[1:] for g in got] == [(1, 1, 0, 1)] * 2 + [(3, 0, 0, 1)] * 2, rows
        assert not any(r["fire"] for r in rows)
        again = {i: (await race_of(players[i]))["room"]["code"] for i in range(4)}
        assert again[a1] != again[a2] and again[b1] != again[b2], again
        for p in players:
            await p.close()


async def test_performance_goes_by_the_ratings_as_the_race_started(
    tmp_path: Path, redis_url: str
) -> None:
    """A race's count and its rating change are made at the same time: whichever is stored
    first, the performance the count adds uses the opponents' ratings as the race started
    (docs/rules.md, "Decision: performance")."""
    clock, arena_id, config = running_arena(tmp_path, redis_url)
    async with running(config, clock) as node:
        players = [await guest(node.port) for _ in range(2)]
        for i, p in enumerate(players):
            await p.request("join_arena", "arena", arena=arena_id, name=f"P{i}")
        races = [await race_of(p) for p in players]
        assert races[0]["room"]["code"] == races[1]["room"]["code"]
        entrants = await node.store.arenas.entrants(arena_id)
        assert [e.rating for e in entrants] == [rating.BASE] * 2  # as the race started
        # both ratings move to 1,900 before the race is counted (as another race's step,
        # or this race's own, stored first would)
        stats = {**rating.empty_stats(), "mu": rating.MU + 400 / rating.SCALE}
        assert rating.display(stats["mu"]) == 1900
        for e in entrants:
            await node.redis.hset(stats_key(e.who), "draw1", orjson.dumps(stats))
        assert await node.lobby.ratings_of([e.who for e in entrants], 1) == [1900] * 2
        # both resign: a loss to the other for performance, by 500 below their 1,500
        for p in players:
            assert (await p.request("resign", "ack", seq=1))["type"] == "ack"
        standings = []
        for _ in range(50):
            standings = [e.standing for e in await node.store.arenas.entrants(arena_id)]
            if all(s.races == 1 for s in standings):
                break
            await asyncio.sleep(0.1)
        assert [(s.races, s.performance) for s in standings] == [(1, 1000)] * 2
        for p in players:
            await p.close()


async def test_a_paused_player_is_not_paired_and_comes_back(tmp_path: Path, redis_url: str) -> None:
    clock, arena_id, config = running_arena(tmp_path, redis_url)
    async with running(config, clock) as node:
        ann, bob = await guest(node.port), await guest(node.port)
        await ann.request("join_arena", "arena", arena=arena_id, name="Ann")
        await ann.send("pause_arena", arena=arena_id)
        paused = await until_you(ann, "paused")
        assert paused["you"]["waiting"] is False, paused
        await bob.request("join_arena", "arena", arena=arena_id, name="Bob")
        await asyncio.sleep(2.5)  # two pairings: nobody to race
        assert not [m for m in ann.seen + bob.seen if m["type"] == "arena_race"]
        # a race made for a player who no longer waits is abandoned: never counted
        arena = await node.arenas.find(arena_id)
        entrants = await node.store.arenas.entrants(arena_id)
        ann_only = [e for e in entrants if e.name == "Ann"]
        assert await node.arenas._race(arena, ann_only, {ann_only[0].who: 1500}) == 0
        assert await node.redis.zcard("rooms:arena") == 0  # owed no count
        back = await ann.request("join_arena", "arena", arena=arena_id, name="Ann")
        assert back["you"]["paused"] is False
        twice = await ann.request("join_arena", "arena", arena=arena_id, name="Ann")
        assert twice["type"] == "error" and twice["reason"] == "already_in_arena", twice
        # the same over HTTP: the list, and the arena with its table
        status, _, body = await http(node.port, "GET", "/api/arenas")
        (listed,) = [x for x in orjson.loads(body)["arenas"] if x["id"] == arena_id]
        assert status == 200 and listed["players"] == 2, listed
        status, _, body = await http(node.port, "GET", f"/api/arenas/{arena_id}")
        page = orjson.loads(body)
        assert status == 200 and page["arena"]["id"] == arena_id and page["arena"]["players"] == 2
        assert sorted(r["name"] for r in page["table"]) == ["Ann", "Bob"], page
        for path, code in (
            ("/api/arenas/arena-none-2026-12-05-1000", 404),
            ("/api/arenas?x=1", 400),
        ):
            assert (await http(node.port, "GET", path))[0] == code, path
        (await race_of(ann), await race_of(bob))
        assert await node.store.arenas.running(arena_id) == 1  # that race only
        for c in (ann, bob):
            await c.close()


@pytest.mark.parametrize(
    ("kind", "fields", "reason"),
    [
        ("join_arena", {"arena": "arena-none-2026-12-05-1000", "name": "X"}, "no_arena"),
        ("join_arena", {"arena": "arena-hourly-2001-01-01-1000", "name": "X"}, "arena_over"),
        ("pause_arena", {"arena": "arena-none-2026-12-05-1000"}, "not_in_arena"),
        ("join_arena", {"arena": "x", "name": "X"}, "bad_field"),
        ("join_arena", {"arena": "arena-none-2026-12-05-1000"}, "missing_field"),
    ],
)
async def test_refusals_change_nothing(tmp_path, redis_url, kind, fields, reason) -> None:
    clock, _, config = running_arena(tmp_path, redis_url)
    async with running(config, clock) as node:
        g = await guest(node.port)
        got = await g.request(kind, "arena", **fields)
        assert got["type"] == "error" and got["reason"] == reason, got
        await g.close()


async def test_joining_needs_an_identity(tmp_path, redis_url) -> None:
    clock, arena_id, config = running_arena(tmp_path, redis_url)
    async with running(config, clock) as node:
        anonymous = await Client.open(node.port)
        got = await anonymous.request("join_arena", "arena", arena=arena_id, name="X")
        assert got["type"] == "error" and got["reason"] == "hello_first", got
        await anonymous.close()


async def test_players_on_two_nodes_are_paired_together(tmp_path, redis_url) -> None:
    """Any node pairs: two players, each connected to another node, race each other (the
    pairing node tells the other one, which enters its player's connection)."""
    clock, arena_id, config = running_arena(tmp_path, redis_url)
    async with running(config, clock) as one, running(config, clock) as two:
        ann, bob = await guest(one.port), await guest(two.port)
        await ann.request("join_arena", "arena", arena=arena_id, name="Ann")
        await bob.request("join_arena", "arena", arena=arena_id, name="Bob")
        races = [await race_of(ann), await race_of(bob)]
        assert races[0]["room"]["code"] == races[1]["room"]["code"]
        names = sorted(p["name"] for p in races[0]["room"]["players"])
        assert names == ["Ann", "Bob"], races[0]["room"]["players"]
        for c in (ann, bob):
            await c.close()


async def test_a_race_its_node_never_counted_is_counted_by_the_sweeper(tmp_path, redis_url) -> None:
    """The node that finishes a race counts it at once; should it die first, the race is
    due to the sweeper (``rooms:arena``), which counts it once."""
    clock, arena_id, config = running_arena(tmp_path, redis_url)
    async with running(config, clock) as node:
        node.arenas.count = _not_now  # type: ignore[method-assign]  # "dies" before counting
        ann, bob = await guest(node.port), await guest(node.port)
        for c, name in ((ann, "Ann"), (bob, "Bob")):
            await c.request("join_arena", "arena", arena=arena_id, name=name)
        race = await race_of(ann)
        await race_of(bob)
        for c in (ann, bob):
            assert (await c.request("resign", "ack", seq=1))["type"] == "ack"
        await ann.expect("room")
        code = race["room"]["code"]
        due = await node.redis.zscore("rooms:arena", code)
        assert due is not None  # owed to the sweeper
        for c in (ann, bob):  # paired no more (else counted, they race again)
            await c.send("pause_arena", arena=arena_id)
            await until_you(c, "paused")
        clock.shift_to(clock.now_ms() + 31_000)  # past the grace
        del node.arenas.count  # the node's own again (the sweeper calls it)
        await node.sweep()
        standings = {e.name: e.standing for e in await node.store.arenas.entrants(arena_id)}
        assert {n: s.races for n, s in standings.items()} == {"Ann": 1, "Bob": 1}
        assert await node.redis.zscore("rooms:arena", code) is None
        await node.sweep()  # again: counted once
        standings_of = await node.store.arenas.entrants(arena_id)
        standings = {e.name: e.standing for e in standings_of}
        assert {n: s.races for n, s in standings.items()} == {"Ann": 1, "Bob": 1}
        # final once it has ended and its last race is counted (both paused before it
        # was: no race is made after it)
        page = orjson.loads((await http(node.port, "GET", f"/api/arenas/{arena_id}"))[2])
        assert page["arena"]["phase"] == "running" and page["arena"]["final"] is False
        clock.shift_to(page["arena"]["ends"] + 1)
        # no race runs at its end: the sweeper makes it final and writes each line
        await node.sweep()
        lines = [await node.store.arenas.lines_of(e.who) for e in standings_of]
        assert [
            [(x["arena"], x["rank"], x["players"], x["races"]) for x in got] for got in lines
        ] == [[(arena_id, 1, 2, 1)]] * 2  # (everyone resigned: level, a rank shared)
        page = orjson.loads((await http(node.port, "GET", f"/api/arenas/{arena_id}"))[2])
        assert page["arena"]["phase"] == "over" and page["arena"]["final"] is True, page
        assert page["arena"]["pairing"] is False
        assert sorted(r["name"] for r in page["podium"]) == ["Ann", "Bob"]
        for c in (ann, bob):
            await c.close()


async def _not_now(_room: object) -> bool:
    return False


async def test_a_players_own_arena(tmp_path, redis_url) -> None:
    """``create_arena``: a public one is listed and anyone joins it; a private one is not
    listed, and its id (told only to its maker) is its code; each bound has its own
    refusal, which creates nothing; one address creates at most 10 an hour."""
    clock, _, config = running_arena(tmp_path, redis_url)
    async with running(config, clock) as node:
        ann, bob = await guest(node.port), await guest(node.port)
        now = clock.now_ms()
        fields = {"starts": now + 1_000, "minutes": 20, "size": 3, "time_limit": 120}
        public = await ann.request("create_arena", "arena_made", **fields, settings={"draw": 3})
        made = public["arena"]
        assert made["id"].startswith("arena-p") and made["phase"] == "upcoming", made
        assert made["size"] == 3 and made["settings"]["draw"] == 3 and not made["private"]
        secret = (await ann.request("create_arena", "arena_made", **fields, private=True))["arena"]
        assert secret["private"] and secret["final"] is False, secret
        listed = {a["id"] for a in (await bob.request("arenas", "arenas"))["arenas"]}
        assert made["id"] in listed and secret["id"] not in listed
        for arena in (made, secret):
            joined = await bob.request("join_arena", "arena", arena=arena["id"], name="Bob")
            assert joined["arena"]["id"] == arena["id"] and joined["you"]["waiting"], joined
        keys_before = sorted(await node.redis.keys("arena:*"))
        for extra, reason in (
            ({"starts": now - 1}, "bad_start"),
            ({"starts": now + 25 * 3_600_000}, "bad_start"),
            ({"minutes": 5}, "bad_length"),
            ({"size": 5}, "bad_size"),
            ({"time_limit": 30}, "bad_time_limit"),
            ({"time_limit": 1200}, "bad_time_limit"),  # over half of 20 minutes
            ({"settings": {"undo": True}}, "bad_settings"),
            ({"settings": {"draw": 2}}, "bad_settings"),
            ({"settings": {"draw": "3"}}, "bad_settings"),  # written as create takes it: 3
            ({"settings": {"foundation_to_column": "forbidden"}}, "bad_settings"),
            ({"colour": "red"}, "bad_field"),
            ({"size": "3"}, "bad_field"),
        ):
            got = await ann.request("create_arena", "arena_made", **{**fields, **extra})
            assert got["type"] == "error" and got["reason"] == reason, (extra, got)
        got = await ann.request("create_arena", "arena_made", minutes=20)
        assert got["type"] == "error" and got["reason"] == "missing_field", got
        assert sorted(await node.redis.keys("arena:*")) == keys_before  # nothing made
        for _ in range(8):  # 10 an hour from one address
            assert (await ann.request("create_arena", "arena_made", **fields))[
                "type"
            ] == "arena_made"
        limited = await ann.request("create_arena", "arena_made", **fields)
        assert limited["type"] == "error" and limited["reason"] == "rate_limited", limited
        anonymous = await Client.open(node.port)
        got = await anonymous.request("create_arena", "arena_made", **fields)
        assert got["type"] == "error" and got["reason"] == "hello_first", got
        for c in (ann, bob, anonymous):
            await c.close()


async def test_an_arena_made_final_keeps_its_results(tmp_path, redis_url) -> None:
    """Fair play and the results: a second player joining from an address is flagged
    ``address`` and one past the limit refused; a race won faster than a person plays
    flags its winner ``speed``; the race running at the arena's end is counted after it
    and makes the arena final: each player's line on their profile (once, whichever
    nodes write it), the podium, the table and the races with their replays."""
    clock, arena_id, config = running_arena(
        tmp_path, redis_url, attempts_per_address=2, trust_forwarded=True
    )
    async with running(config, clock) as node, running(config, clock) as other:
        ref = winnable(draw=1)

        async def reference(_arena: object) -> tuple[dict, bool]:  # a known win
            return {"cards": ref["cards"]}, True

        node.arenas.deal = reference  # type: ignore[method-assign]
        at = {"X-Forwarded-For": "198.51.100.4"}
        ann, bob, cid = [await guest(node.port, **at) for _ in range(3)]
        arena = await node.arenas.find(arena_id)
        clock.shift_to(arena.ends - 45_000)  # its last race (60 s) runs past the end
        for c, name in ((ann, "Ann"), (bob, "Bob")):
            await c.request("join_arena", "arena", arena=arena_id, name=name)
        refused = await cid.request("join_arena", "arena", arena=arena_id, name="Cid")
        assert refused["type"] == "error" and refused["reason"] == "rate_limited", refused
        assert refused["retry_after"] is None and "2 players" in refused["message"], refused
        who = {e.name: e.who for e in await node.store.arenas.entrants(arena_id)}
        assert sorted(who) == ["Ann", "Bob"]  # nothing of Cid's
        race = await race_of(ann)
        await race_of(bob)  # (the last: pairing closes 30 s before the end)
        for seq, step in enumerate(ref["line"], start=1):  # faster than a person plays
            assert (await ann.move(step, seq=seq))["type"] == "ack"
        page = orjson.loads((await http(node.port, "GET", f"/api/arenas/{arena_id}"))[2])
        assert page["podium"] is None and page["races"] == [] and page["races_total"] == 0
        clock.shift_to(arena.ends + 1_000)  # over: final once its last race is counted
        assert (await bob.request("resign", "ack", seq=1))["type"] == "ack"
        while not any(r["races"] for r in table_of(ann, arena_id).rows.values()):
            await ann.expect("arena", "arena_changes")  # counted: its table pushed
        table = table_of(ann, arena_id)
        rows = {r["name"]: r for r in table.rows.values()}
        assert (rows["Ann"]["points"], rows["Ann"]["wins"], rows["Ann"]["flags"]) == (
            2,
            1,
            ["speed"],
        )
        assert rows["Bob"]["flags"] == ["address"], rows
        assert dict(table.ranked())[rows["Bob"]["player"]] == 2
        # each player's line, written once: the node counting the last race made it
        # final; another node and the sweeper at once write nothing again
        await asyncio.gather(
            node.arenas.finalize(arena, owed=True),
            other.arenas.finalize(arena, owed=True),
            other.sweep(),
        )
        lines = {}
        for name, key in who.items():
            status, _, body = await http(node.port, "GET", f"/api/players/{key}")
            assert status == 200
            lines[name] = orjson.loads(body)["arenas"]
            # the race's two seats came from one address: it moved no rating
            deadline = time.monotonic() + 5
            while not orjson.loads(body)["history"]:  # (applied beside the count)
                assert time.monotonic() < deadline, "the race never applied"
                await asyncio.sleep(0.05)
                body = (await http(node.port, "GET", f"/api/players/{key}"))[2]
            (entry,) = orjson.loads(body)["history"]
            assert (entry["rated"], entry.get("flags")) == (False, ["address"]), entry
        line = {"arena": arena_id, "title": "Draw 1 arena", "starts": arena.starts, "players": 2}
        assert lines == {
            "Ann": [{**line, "rank": 1, "points": 2, "races": 1, "wins": 1}],
            "Bob": [{**line, "rank": 2, "points": 0, "races": 1, "wins": 0}],
        }
        # the final page: the podium, the table, the races with their replays
        page = orjson.loads((await http(other.port, "GET", f"/api/arenas/{arena_id}"))[2])
        assert page["arena"]["final"] is True and page["races_total"] == 1
        assert [(r["name"], r["rank"]) for r in page["podium"]] == [("Ann", 1), ("Bob", 2)]
        assert [r["flags"] for r in page["table"]] == [["speed"], ["address"]]
        code = race["room"]["code"]
        (listed,) = page["races"]
        assert (listed["code"], listed["replay"]) == (code, f"/replay/{code}")
        places = [(p["name"], p["place"], p["points"]) for p in listed["players"]]
        assert places == [("Ann", 1, 2), ("Bob", 2, 0)]
        assert (await http(node.port, "GET", f"/api/replays/{code}"))[0] == 200
        # among the recent results
        status, _, body = await http(node.port, "GET", "/api/arenas?final=1")
        finals = orjson.loads(body)["arenas"]
        assert status == 200 and finals[0]["id"] == arena_id and finals[0]["players"] == 2
        for path in ("/api/arenas?final=2", f"/api/arenas/{arena_id}?final=1"):
            assert (await http(node.port, "GET", path))[0] == 400, path
        for c in (ann, bob, cid):
            await c.close()


def table_of(client: Client, arena_id: str) -> Table:
    """The arena's table as the frames ``client`` has received so far leave it."""
    table = None
    for m in client.seen:
        if m["type"] == "arena" and m["arena"]["id"] == arena_id:
            table = Table(m)
        elif m["type"] == "arena_changes" and m["arena"] == arena_id and table is not None:
            table.apply(m)
    assert table is not None, "no table received"
    return table


# ---- the live table (docs/protocol.md, "Arenas": arena, arena_changes, arena_you) ------
class Table:
    """A client's copy of an arena's table, kept from its frames as docs/protocol.md says:
    a whole ``arena``, then each ``arena_changes`` applied to the rows of its ``base``."""

    def __init__(self, frame: dict) -> None:
        assert frame["type"] == "arena", frame
        self.v = frame["v"]
        self.rows = {r["player"]: r for r in frame["table"]}
        self.top_race = frame["top_race"]

    def apply(self, frame: dict) -> None:
        assert frame["base"] == self.v, (frame, self.v)
        for who in frame["gone"]:
            del self.rows[who]
        self.rows.update({r["player"]: r for r in frame["changed"]})
        self.v, self.top_race = frame["v"], frame["top_race"]

    def ranked(self) -> list[tuple[str, int]]:
        """(player, rank) in the table's order: by key, then player; 1 + smaller keys."""
        order = sorted(self.rows.values(), key=lambda r: (r["key"], r["player"]))
        return [(r["player"], 1 + sum(o["key"] < r["key"] for o in order)) for r in order]


def upcoming_arena(tmp_path: Path, redis_url: str, **config: object) -> tuple[Clock, str, Config]:
    """A node whose clock is a minute before an hourly arena (joined, nobody is paired)."""
    clock, arena_id, made = running_arena(tmp_path, redis_url)
    clock.shift_to(clock.now_ms() - 70_000)
    return clock, arena_id, make_config(redis_url, arenas_file=made.arenas_file, **config)


async def changes(client: Client, table: Table) -> dict:
    """The next ``arena_changes`` to ``client``, applied to its ``table``."""
    frame = await client.expect("arena_changes", timeout=5)
    table.apply(frame)
    return frame


async def test_a_watcher_gets_the_table_then_only_the_rows_that_change(
    tmp_path: Path, redis_url: str
) -> None:
    """Anyone, with no identity, watches an arena's table: the whole table once, then
    change frames carrying only the rows that changed; a refused ``watch_arena`` changes
    nothing (the table watched is still sent)."""
    clock, arena_id, config = upcoming_arena(tmp_path, redis_url)
    async with running(config, clock) as node:
        watcher = await Client.open(node.port)  # no hello
        first = await watcher.request("watch_arena", "arena", arena=arena_id)
        assert first["table"] == [] and first["you"] is None and first["top_race"] is None
        assert first["arena"]["phase"] == "upcoming", first
        table = Table(first)
        players = {name: await guest(node.port) for name in ("Ann", "Bob", "Cid")}
        keys = {}
        for name, p in players.items():
            joined = await p.request("join_arena", "arena", arena=arena_id, name=name)
            keys[name] = joined["you"]["player"]
        while len(table.rows) < 3:  # the joins, in one push or two
            frame = await changes(watcher, table)
            assert frame["gone"] == [] and frame["changed"], frame
        assert {r["name"] for r in table.rows.values()} == {"Ann", "Bob", "Cid"}
        assert {rank for _, rank in table.ranked()} == {1}  # no race yet: all level
        for fields, reason in (
            ({"arena": "arena-none-2026-12-05-1000"}, "no_arena"),
            ({"arena": 5}, "bad_field"),
            ({}, "missing_field"),
        ):
            got = await watcher.request("watch_arena", "arena", **fields)
            assert got["type"] == "error" and got["reason"] == reason, got
        # a pause changes one row: the change frame carries it alone, to the watcher and
        # to the players alike (in step with the same rows)
        bob = players["Bob"]
        bob_table = Table(await bob.request("watch_arena", "arena", arena=arena_id))
        await players["Ann"].request("pause_arena", "arena", arena=arena_id)
        frame = await changes(watcher, table)
        assert [r["player"] for r in frame["changed"]] == [keys["Ann"]], frame
        assert frame["changed"][0]["paused"] is True and frame["gone"] == []
        assert frame["arena"] == arena_id and frame["phase"] == "upcoming", frame
        mine = await changes(bob, bob_table)
        assert [r["player"] for r in mine["changed"]] == [keys["Ann"]], mine
        assert bob_table.rows == table.rows
        # the arena starts: where it is at changes, with no row
        clock.shift_to(clock.now_ms() + 70_000)
        while (frame := await changes(watcher, table))["phase"] != "running":
            pass
        assert frame["pairing"] and not frame["final"], frame
        for c in (watcher, *players.values()):
            await c.close()


async def test_a_race_counted_while_the_table_is_read_shows_no_row_out_of_place(
    tmp_path: Path, redis_url: str
) -> None:
    """The table's order and its rows' lines are read in round trips of their own: a race
    counted between the two is read again, so no row shows its new points at its old
    place (Ann's 2 points at Bob's rank, level with his 0)."""
    clock, arena_id, config = upcoming_arena(tmp_path, redis_url)
    async with running(config, clock) as node:
        players = {name: await guest(node.port) for name in ("Ann", "Bob")}
        keys = {}
        for name, p in players.items():
            joined = await p.request("join_arena", "arena", arena=arena_id, name=name)
            keys[name] = joined["you"]["player"]
            await p.close()
        while node.tables.watchers:  # (no push of the node's own reads the table meanwhile)
            await asyncio.sleep(0.01)
        arenas = node.store.arenas
        order_of = arenas.table

        async def order_then_a_count(arena: str, top: int | None) -> tuple:
            got = await order_of(arena, top)
            arenas.table = order_of  # type: ignore[method-assign]  # (once)
            won = A.Standing(points=2, streak=1, races=1, wins=1)
            lost = A.Standing(races=1, history=(0,))
            counted = {keys["Ann"]: won, keys["Bob"]: lost}
            assert await arenas.count(arena_id, "race-1", clock.now_ms(), counted)
            return got

        arenas.table = order_then_a_count  # type: ignore[method-assign]
        read = await node.tables.read(arena_id, [])
        rows = {r["name"]: r for r in read.rows}
        assert (rows["Ann"]["points"], rows["Bob"]["points"]) == (2, 0), rows
        assert (rows["Ann"]["rank"], rows["Bob"]["rank"]) == (1, 2), rows
        for r in read.rows:  # each row's key is its own line's
            line = A.Standing(points=r["points"], wins=r["wins"])
            assert r["key"] == A.table_key(line), r
        assert read.v == await arenas.version(arena_id)


async def test_a_player_outside_the_first_rows_gets_their_place_and_neighbours(
    tmp_path: Path, redis_url: str
) -> None:
    """With a table of two rows (``KR_ARENA_TABLE_ROWS``), the players below them get
    their own line and the rows around their place (``arena_you``); those in the first
    rows get their line alone; a row that leaves the first rows is ``gone``."""
    clock, arena_id, config = upcoming_arena(tmp_path, redis_url, arena_table_rows=2)
    async with running(config, clock) as node:
        players = {name: await guest(node.port) for name in ("Ann", "Bob", "Cid", "Dan")}
        keys, tables = {}, {}
        for name, p in players.items():
            joined = await p.request("join_arena", "arena", arena=arena_id, name=name)
            keys[name] = joined["you"]["player"]
        for name, p in players.items():  # (again: every one's whole table of four)
            tables[name] = Table(await p.request("watch_arena", "arena", arena=arena_id))
        level = sorted(keys.values())  # all level: listed by player key
        assert [w for w, _ in tables["Ann"].ranked()] == level[:2]
        # Dan and Cid win races (written as a count would): Dan 1st, Cid 2nd, Ann and Bob
        # share the 3rd place
        count = node.store.arenas.count
        dan, cid = A.Standing(points=4, races=2, wins=2), A.Standing(points=2, races=1, wins=1)
        await count(arena_id, "RACE01", clock.now_ms(), {keys["Dan"]: dan, keys["Cid"]: cid})
        ann = players["Ann"]
        frame = await changes(ann, tables["Ann"])
        assert [w for w, _ in tables["Ann"].ranked()] == [keys["Dan"], keys["Cid"]]
        assert set(frame["gone"]) == set(level[:2]) - {keys["Dan"], keys["Cid"]}, frame
        while not (you := await ann.expect("arena_you", timeout=5))["rows"] or (
            you["rows"][0]["player"] != keys["Dan"]
        ):
            pass
        places = [(r["name"], r["rank"], r["points"]) for r in you["rows"]]
        bob_ann = sorted(["Ann", "Bob"], key=lambda n: keys[n])
        assert places == [("Dan", 1, 4), ("Cid", 2, 2)] + [(n, 3, 0) for n in bob_ann], places
        assert you["you"]["points"] == 0 and you["you"]["player"] == keys["Ann"]
        while (you := await players["Dan"].expect("arena_you", timeout=5))["you"]["points"] < 4:
            pass
        assert you["rows"] == [] and you["you"]["waiting"] is True, you
        for c in players.values():
            await c.close()


async def test_the_top_race_is_named_and_watched_as_any_rated_race(
    tmp_path: Path, redis_url: str
) -> None:
    """``top_race``: the race of the best placed player racing; a watcher of the table
    watches it as a spectator of rated play does: every board's outline, no card."""
    clock, arena_id, config = running_arena(tmp_path, redis_url)
    async with running(config, clock) as node:
        watcher = await guest(node.port)
        table = Table(await watcher.request("watch_arena", "arena", arena=arena_id))
        ann, bob = await guest(node.port), await guest(node.port)
        for c, name in ((ann, "Ann"), (bob, "Bob")):
            await c.request("join_arena", "arena", arena=arena_id, name=name)
        code = (await race_of(ann))["room"]["code"]
        await race_of(bob)
        while table.top_race is None:
            await changes(watcher, table)
        assert table.top_race == code
        assert {r["racing"] for r in table.rows.values()} == {code}
        seen = await watcher.request("watch", "welcome", code=code)
        assert seen["role"] == "spectator" and seen["room"]["spectator_view"] == "outline"
        assert all(b["outline"] for b in seen["boards"].values()), seen["boards"]
        for c in (watcher, ann, bob):
            await c.close()


async def test_an_arena_over_with_no_race_running_is_final_at_once(tmp_path, redis_url) -> None:
    """No race runs when the arena ends (its last race ended after pairing closed; its
    players wait): the node its players are on makes it final within a pairing interval
    or two, each player's line written, not at the sweeper's next pass
    (``KR_SWEEP_INTERVAL_S``, 30 s here)."""
    clock, arena_id, config = running_arena(tmp_path, redis_url)
    assert config.sweep_interval_s == 30
    async with running(config, clock) as node:
        ends = (await node.arenas.find(arena_id)).ends
        clock.shift_to(ends - 35_000)  # the last seconds in which a race is made
        ann, bob = await guest(node.port), await guest(node.port)
        for c, name in ((ann, "Ann"), (bob, "Bob")):
            await c.request("join_arena", "arena", arena=arena_id, name=name)
        await race_of(ann)
        await race_of(bob)
        clock.shift_to(ends - 20_000)  # pairing closed (30 s before the end): no new race
        for c in (ann, bob):
            assert (await c.request("resign", "ack", seq=1))["type"] == "ack"
        began = time.monotonic()
        while not all(e.standing.races for e in await node.store.arenas.entrants(arena_id)):
            assert time.monotonic() - began < 10, "the race was never counted"
            await asyncio.sleep(0.05)
        entrants = await node.store.arenas.entrants(arena_id)
        assert all(e.waiting_since is not None for e in entrants)  # waiting, not paused
        assert await node.store.arenas.final_at(arena_id) is None
        clock.shift_to(ends + 1)
        began = time.monotonic()
        while (await node.store.arenas.final_at(arena_id)) is None:
            assert time.monotonic() - began < 5, "not final within 5 s"
            await asyncio.sleep(0.05)
        # each player's line follows the seal (the node that sealed it writes them next)
        while not all([await node.store.arenas.lines_of(e.who) for e in entrants]):
            assert time.monotonic() - began < 5, "the players' lines not written within 5 s"
            await asyncio.sleep(0.05)
        lines = [await node.store.arenas.lines_of(e.who) for e in entrants]
        assert [[x["arena"] for x in got] for got in lines] == [[arena_id]] * 2
        for c in (ann, bob):
            await c.close()
