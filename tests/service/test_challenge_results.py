"""Challenge results: the overall ranking of a multi-deal challenge, the fair-play flag
and an operator's removal of a row (the commands against real Redis), daily results and
streaks on the profile across days, and the clock's exact boundaries (the day opening at
00:00 UTC, a leaderboard final at ``final_at``). Real Redis, real WebSockets."""

from __future__ import annotations

import asyncio
import json
import secrets
import sys
from collections.abc import AsyncIterator
from datetime import UTC, date, datetime, timedelta
from pathlib import Path
from typing import Any

import orjson
import pytest
import redis

from klondike_race.engine import Move
from klondike_race.service.clock import Clock
from klondike_race.service.domain import challenge as ch
from klondike_race.service.logs import configure
from klondike_race.service.node import Node

from .conftest import Client, daily_config, day_id, guest, http, running


async def get(port: int, path: str) -> tuple[int, Any]:
    status, _, body = await http(port, "GET", path)
    return status, orjson.loads(body)


async def ended(client: Client) -> dict:
    room = (await client.expect("room", timeout=10))["room"]
    while room["phase"] != "finished":
        room = (await client.expect("room", timeout=10))["room"]
    return room


# ---- pure rules ---------------------------------------------------------------------------
def _row(name: str, foundation: int, moves: int, ms: int) -> dict:
    return {
        "name": name,
        "guest": True,
        "foundation": foundation,
        "reached_moves": moves,
        "reached_ms": ms,
    }


def test_the_overall_ranking_by_places_and_by_foundation() -> None:
    deal0 = [
        ("a", 1, _row("A", 52, 100, 90_000)),
        ("b", 1, _row("B", 52, 100, 90_000)),
        ("c", 5, _row("C", 30, 80, 60_000)),
    ]
    deal1 = [("c", 2, _row("C", 52, 90, 80_000)), ("a", 3, _row("A", 40, 70, 50_000))]
    rows = ch.overall("places", [deal0, deal1])
    # a: 1 + 2 = 3; b: 1 + (2 players + 1) = 4; c: 3 + 1 = 4 (a tie, listed by key)
    assert [(r["who"], r["rank"], r["total"], r["places"]) for r in rows] == [
        ("a", 1, 3, [1, 2]),
        ("b", 2, 4, [1, None]),
        ("c", 2, 4, [3, 1]),
    ]
    assert rows[1]["deals"] == 1 and rows[0]["deals"] == 2
    rows = ch.overall("foundation", [deal0, deal1])
    # a: 92 cards; c: 82; b: 52
    assert [(r["who"], r["rank"], r["total"]) for r in rows] == [
        ("a", 1, 92),
        ("c", 2, 82),
        ("b", 3, 52),
    ]
    assert rows[0]["moves"] == 170 and rows[0]["ms"] == 140_000
    # equal cards: fewer moves first, then less time; all equal: a shared rank
    tie = [
        [
            ("x", 1, _row("X", 52, 100, 5)),
            ("y", 1, _row("Y", 52, 100, 5)),
            ("z", 1, _row("Z", 52, 99, 9)),
        ]
    ]
    assert [(r["who"], r["rank"]) for r in ch.overall("foundation", tie)] == [
        ("z", 1),
        ("x", 2),
        ("y", 2),
    ]
    assert ch.overall("places", [[], []]) == []


def test_the_fair_play_rule() -> None:
    won = {"status": "won", "moves": 120}
    assert ch.flagged({**won, "last_ms": 29_999})  # 250 ms a move: 30 s for 120 moves
    assert not ch.flagged({**won, "last_ms": 60_000})
    assert ch.flagged({**won, "moves": 100, "last_ms": 39_999})  # the whole game < 40 s
    assert not ch.flagged({**won, "moves": 100, "last_ms": 40_000})
    assert ch.flagged({**won, "moves": 400, "last_ms": 99_999})
    assert not ch.flagged({"status": "resigned", "moves": 120, "last_ms": 1_000})
    assert not ch.flagged({"status": "playing", "moves": 120, "last_ms": 1_000})
    row = ch.row("K7QW2M", "Ann", True, {**won, "last_ms": 1_000, "foundation": 52})
    assert row["flagged"] is True


def test_daily_streaks() -> None:
    d = date(2026, 12, 10)
    days = {d - timedelta(days=n) for n in (1, 2, 3, 6, 7)}
    assert ch.streaks(days, d) == (3, 3)  # up to yesterday: today not played yet
    assert ch.streaks(days | {d}, d) == (4, 4)
    assert ch.streaks(days, d + timedelta(days=1)) == (0, 3)  # yesterday missed
    assert ch.streaks(set(), d) == (0, 0)


# ---- the overall ranking served ------------------------------------------------------------
def two_deal_challenge(folder: Path, challenge_id: str) -> Path:
    """A challenges file (``KR_CHALLENGES_FILE``) of one challenge of two Draw 1 deals,
    ranked by places, open from an hour ago to an hour from now."""
    now = Clock().now_ms()
    iso = lambda ms: datetime.fromtimestamp(ms / 1000, UTC).isoformat()  # noqa: E731
    schedule = [
        {
            "id": challenge_id,
            "opens": iso(now - 3_600_000),
            "closes": iso(now + 3_600_000),
            "deals": [{"draw": 1}, {"draw": 1}],
            "ranking": "places",
        }
    ]
    path = folder / "challenges.json"
    path.write_text(json.dumps(schedule))
    return path


async def test_the_overall_ranking_is_served(redis_url, tmp_path: Path) -> None:
    configure(json=False, level="warning")
    path = two_deal_challenge(tmp_path, "weekly-test")
    node = Node(daily_config(redis_url, challenges_file=str(path)), redis_url)
    port = await node.start()
    try:
        ann, bob, cat = await guest(port), await guest(port), await guest(port)
        assert (await ann.request("attempt", "welcome", challenge="weekly-test", name="Ann"))[
            "type"
        ] == "welcome"
        await bob.request("attempt", "welcome", challenge="weekly-test", name="Bob")
        # Bob plays deal 1 as well
        got = await bob.request("attempt", "welcome", challenge="weekly-test", deal=1, name="Bob")
        assert got["type"] == "welcome", got
        # deal 0: Ann and Bob tie (nothing on the foundations yet): 1 each; deal 1: Bob 1,
        # Ann did not play it: 1 player + 1 = 2. Bob 2, Ann 3.
        status, body = await get(port, "/api/challenges/weekly-test")
        assert status == 200 and body["overall_players"] == 2
        assert [(r["name"], r["rank"], r["total"], r["places"]) for r in body["overall"]] == [
            ("Bob", 1, 2, [1, 1]),
            ("Ann", 2, 3, [1, None]),
        ]
        listed = await ann.request("challenges", "challenges")
        weekly = next(c for c in listed["challenges"] if c["id"] == "weekly-test")
        assert weekly["you"] == {"rank": 2, "total": 3, "deals": 1, "players": 2}
        listed = await cat.request("challenges", "challenges")
        weekly = next(c for c in listed["challenges"] if c["id"] == "weekly-test")
        assert weekly["you"] is None  # no attempt: no overall place
        daily = next(c for c in listed["challenges"] if c["daily"])
        assert "you" not in daily  # a one-deal challenge has no overall ranking
        status, one = await get(port, f"/api/challenges/{daily['id']}")
        assert one["overall"] is None
        for c in (ann, bob, cat):
            await c.close()
    finally:
        await node.stop()


async def test_the_overall_ranking_of_a_challenge_that_ranks_accounts(
    redis_url, tmp_path: Path
) -> None:
    """Accounts only: the overall ranking and its places are the accounts' (a guest's
    attempts count on neither), and a guest has no overall place."""
    path = two_deal_challenge(tmp_path, "weekly-accounts")
    config = daily_config(redis_url, challenges_file=str(path), challenge_ranking="accounts")
    async with running(config) as node:
        ann, gus = await guest(node.port), await guest(node.port)
        name = "Ann" + secrets.token_hex(3)
        await ann.request("register", "identity", name=name, password="correct horse")
        for c, deal in ((gus, 0), (gus, 1), (ann, 1)):
            got = await c.request(
                "attempt", "welcome", challenge="weekly-accounts", deal=deal, name="x"
            )
            assert got["type"] == "welcome", got
        # deal 0: no account played it (0 players + 1 = 1); deal 1: Ann alone, 1
        status, body = await get(node.port, "/api/challenges/weekly-accounts")
        assert status == 200 and body["ranks"] == "accounts" and body["overall_players"] == 1
        assert [(r["name"], r["rank"], r["total"], r["places"]) for r in body["overall"]] == [
            (name, 1, 2, [None, 1])
        ]
        assert [(d["players"], d["guests"]) for d in body["deals"]] == [(0, 1), (1, 1)]
        for c, you in ((ann, {"rank": 1, "total": 2, "deals": 1, "players": 1}), (gus, None)):
            listed = await c.request("challenges", "challenges")
            weekly = next(x for x in listed["challenges"] if x["id"] == "weekly-accounts")
            assert weekly["you"] == you
        listed = await gus.request("challenges", "challenges")
        weekly = next(x for x in listed["challenges"] if x["id"] == "weekly-accounts")
        assert [d["you"]["guests"] for d in weekly["deals"]] == [True, True]
        for c in (ann, gus):
            await c.close()


# ---- fair play: the flag and the operator's removal ----------------------------------------
async def cli(*args: str) -> tuple[int, str, str]:
    proc = await asyncio.create_subprocess_exec(
        sys.executable,
        "-m",
        "klondike_race.cli",
        *args,
        stdout=asyncio.subprocess.PIPE,
        stderr=asyncio.subprocess.PIPE,
    )
    out, err = await asyncio.wait_for(proc.communicate(), 60)
    assert proc.returncode is not None
    return proc.returncode, out.decode(), err.decode()


async def test_a_bot_fast_win_is_flagged_and_an_operator_removes_it(daily, redis_url) -> None:
    cid = day_id()
    bot, bob = await guest(daily.port), await guest(daily.port)
    welcome = await bot.request("attempt", "welcome", challenge=cid, name="Bot")
    code = welcome["room"]["code"]
    await bob.request("attempt", "welcome", challenge=cid, name="Bob")
    rds = redis.Redis.from_url(redis_url)
    seed = orjson.loads(rds.get(f"ch:{cid}:0:deal"))["seed"]
    out = await daily.solving.solve_deal({"seed": seed}, {"draw": 1}, 10.0)
    assert out is not None and out["result"] == "win"
    for seq, text in enumerate(out["line"], 1):  # a whole game in well under 40 s
        await bot.send("move", seq=seq, **Move.parse(text).to_wire())
        assert (await bot.expect("ack", "refused", "error"))["type"] == "ack"
    await ended(bot)
    assert (await bob.move("draw", seq=1))["type"] == "ack"
    _, body = await get(daily.port, f"/api/challenges/{cid}")
    rows = {r["name"]: r for r in body["deals"][0]["rows"]}
    assert rows["Bot"]["status"] == "won" and rows["Bot"]["flagged"] is True
    assert rows["Bot"]["flags"] == ["speed"]
    assert rows["Bot"]["rank"] == 1  # flagged, still on the board
    assert rows["Bob"]["flags"] == ["address"]  # a second attempt from this address
    bot_who, bob_who = rows["Bot"]["who"], rows["Bob"]["who"]
    # the operator's command takes the row off, logged (a JSON line) and kept in Redis
    reason = "bot: 60 moves in 2 s"
    rc, printed, err = await cli(
        "challenge-remove",
        cid,
        "0",
        bot_who,
        "--reason",
        reason,
        "--by",
        "ops",
        "--redis-url",
        redis_url,
    )
    assert rc == 0, err
    record = orjson.loads(printed)
    assert record["who"] == bot_who and record["reason"] == "bot: 60 moves in 2 s"
    assert record["by"] == "ops" and record["row"]["code"] == code
    assert abs(record["when"] - Clock().now_ms()) < 60_000
    logged = orjson.loads(err.strip().splitlines()[-1])
    assert logged["event"] == "challenge row removed" and logged["player"] == bot_who
    assert logged["reason"] == "bot: 60 moves in 2 s" and logged["challenge"] == cid
    # removing a row not on the board: refused, nothing recorded
    rc, _, err = await cli(
        "challenge-remove", cid, "0", bot_who, "--reason", "again", "--redis-url", redis_url
    )
    assert rc == 1 and "not on" in err
    # a playing attempt taken off stays off when it moves again
    rc, _, err = await cli(
        "challenge-remove", cid, "0", bob_who, "--reason", "test", "--redis-url", redis_url
    )
    assert rc == 0, err
    assert (await bob.move("draw", seq=2))["type"] == "ack"
    _, body = await get(daily.port, f"/api/challenges/{cid}")
    assert body["deals"][0]["rows"] == [] and body["deals"][0]["players"] == 0
    rc, printed, _ = await cli("challenge-removed", cid, "0", "--redis-url", redis_url)
    listed = [orjson.loads(line) for line in printed.splitlines()]
    assert rc == 0 and [r["who"] for r in listed] == [bot_who, bob_who]
    assert [r["reason"] for r in listed] == ["bot: 60 moves in 2 s", "test"]
    assert rds.llen(f"ch:{cid}:0:removed") == 2
    # the attempt stays the player's: asking again gives the same (finished) room
    again = await bot.request("attempt", "welcome", challenge=cid, name="Bot")
    assert again["room"]["code"] == code and again["room"]["phase"] == "finished"
    assert rds.hget(f"ch:{cid}:0:att", bot_who).decode() == code
    rc, _, err = await cli("challenge-removed", cid, "0")
    assert rc == 2 and "REDIS_URL" in err
    for c in (bot, bob):
        await c.close()


# ---- daily results and streaks on the profile ----------------------------------------------
def to_day(clock: Clock, day: date, hour: int = 12) -> None:
    """Shift ``clock`` to ``hour``:00 UTC of ``day``."""
    clock.shift_to(ch.day_start(day) + hour * 3_600_000)


async def play_daily(port: int, device: str, day: date) -> str:
    client = await Client.open(port)
    await client.request("hello", "identity", device=device)
    cid = ch.daily_id(day, 1)
    got = await client.request("attempt", "welcome", challenge=cid, name="Dee")
    assert got["type"] == "welcome", got
    assert (await client.move("draw", seq=1))["type"] == "ack"
    assert (await client.request("resign", "ack", seq=2))["type"] == "ack"
    await ended(client)
    await client.close()
    return cid


async def test_daily_results_and_streaks_on_the_profile(daily, redis_url) -> None:
    device = secrets.token_urlsafe(24)
    start = ch.day_of(daily.clock.now_ms()) + timedelta(days=3)
    rds = redis.Redis.from_url(redis_url)
    to_day(daily.clock, start)
    first = await play_daily(daily.port, device, start)
    (who,) = [k.decode() for k in rds.hkeys(f"ch:{first}:0:att")]
    status, profile = await get(daily.port, f"/api/players/{who}")
    assert status == 200 and profile["variants"] == {} and profile["history"] == []
    assert profile["name"] == "Dee" and profile["guest"] is True  # the name she typed
    assert profile["daily"]["streak"] == 1 and profile["daily"]["best_streak"] == 1
    (entry,) = profile["daily"]["days"]
    assert entry == {
        "day": start.isoformat(),
        "challenge": first,
        "code": entry["code"],
        "status": "resigned",
        "foundation": 0,
        "moves": 1,
        "time_ms": entry["time_ms"],
    }
    # the next day, late in the evening: two days in a row; the day after, still 2
    to_day(daily.clock, start + timedelta(days=1), 23)
    second = await play_daily(daily.port, device, start + timedelta(days=1))
    status, profile = await get(daily.port, f"/api/players/{who}")
    assert profile["daily"]["streak"] == 2 and profile["daily"]["best_streak"] == 2
    assert [d["challenge"] for d in profile["daily"]["days"]] == [second, first]
    to_day(daily.clock, start + timedelta(days=2), 1)  # today not played yet: the streak holds
    assert (await get(daily.port, f"/api/players/{who}"))[1]["daily"]["streak"] == 2
    # a day missed: the streak is over, the best stays
    to_day(daily.clock, start + timedelta(days=4))
    status, profile = await get(daily.port, f"/api/players/{who}")
    assert profile["daily"]["streak"] == 0 and profile["daily"]["best_streak"] == 2
    third = await play_daily(daily.port, device, start + timedelta(days=4))
    status, profile = await get(daily.port, f"/api/players/{who}")
    assert profile["daily"]["streak"] == 1 and profile["daily"]["best_streak"] == 2
    assert [d["challenge"] for d in profile["daily"]["days"]] == [third, second, first]
    # once per attempt: one field per daily; 40 days on, only the last 30 days are shown
    assert rds.hlen(f"player:{who}:daily") == 3
    assert rds.ttl(f"player:{who}:daily") > 0  # a guest's: expires as their statistics
    to_day(daily.clock, start + timedelta(days=33))
    status, profile = await get(daily.port, f"/api/players/{who}")
    assert [d["challenge"] for d in profile["daily"]["days"]] == [third]
    assert profile["daily"]["best_streak"] == 2
    # the guest claims a name: the account has the dailies
    c = await Client.open(daily.port)
    await c.request("hello", "identity", device=device)
    made = await c.request("register", "identity", name="Dee Daily", password="dee's password")
    assert made["type"] == "identity", made
    status, named = await get(daily.port, "/api/players/Dee%20Daily")
    assert status == 200 and named["daily"] == profile["daily"]
    assert not rds.exists(f"player:{who}:daily")
    await c.close()


# ---- the clock's exact boundaries ----------------------------------------------------------
async def test_the_day_opens_exactly_at_midnight_utc(daily) -> None:
    tomorrow = await daily.challenges.find(day_id(1))
    await daily.challenges.deal(tomorrow, 0)  # prepared ahead, as every node does
    g = await guest(daily.port)
    daily.clock.freeze(tomorrow.opens - 1)  # 23:59:59.999 UTC
    got = await g.request("attempt", "welcome", challenge=tomorrow.id, name="Early")
    assert got["type"] == "error" and got["reason"] == "challenge_not_open", got
    listed = await g.request("challenges", "challenges")
    phases = {c["id"]: c["phase"] for c in listed["challenges"]}
    assert phases[tomorrow.id] == "upcoming"
    daily.clock.freeze(tomorrow.opens)  # 00:00:00.000 UTC
    got = await g.request("attempt", "welcome", challenge=tomorrow.id, name="Early")
    assert got["type"] == "welcome", got
    assert got["room"]["challenge"] == f"{tomorrow.id}/0"
    await g.close()


async def test_a_leaderboard_is_final_exactly_at_final_at(daily) -> None:
    c = await daily.challenges.find(day_id())
    g = await guest(daily.port)
    daily.clock.freeze(c.final_at() - 1)
    board = await g.request("watch_board", "leaderboard", challenge=c.id)
    assert board["type"] == "leaderboard" and board["final"] is False
    daily.clock.freeze(c.final_at())  # no move: the push says so all the same
    changes = await g.expect("leaderboard_changes")
    assert changes["final"] is True and changes["changed"] == [] and changes["gone"] == []
    board = await g.request("watch_board", "leaderboard", challenge=c.id)
    assert board["type"] == "leaderboard" and board["final"] is True
    await g.close()


# ---- second identities: attempts per client address -------------------------------------
@pytest.fixture
async def limited(redis_url: str) -> AsyncIterator[Node]:
    """A node that takes the client address from X-Forwarded-For (as behind HAProxy), so
    that the test's players come from several addresses, 3 attempts a deal each."""
    async with running(
        daily_config(redis_url, attempts_per_address=3, trust_forwarded=True)
    ) as node:
        yield node


async def guest_at(port: int, address: str) -> Client:
    return await guest(port, **{"X-Forwarded-For": address})


async def test_attempts_from_one_address_are_limited_and_flagged(limited, redis_url) -> None:
    cid = day_id()
    first, *others = [await guest_at(limited.port, "203.0.113.7") for _ in range(4)]
    answers = [
        await g.request("attempt", "welcome", challenge=cid, name=f"G{i}")
        for i, g in enumerate([first, *others[:2]])
    ]
    assert [a["type"] for a in answers[:3]] == ["welcome"] * 3
    rds = redis.Redis.from_url(redis_url)
    rooms, counts = set(rds.scan_iter("room:*")), rds.hgetall(f"ch:{cid}:0:addr")
    refused = await others[2].request("attempt", "welcome", challenge=cid, name="G3")
    answers.append(refused)
    assert refused["type"] == "error"
    assert refused["reason"] == "rate_limited" and refused["retry_after"] is None
    assert "3 attempts at this deal came from your address" in refused["message"]
    assert refused["about"] == "attempt"
    _, body = await get(limited.port, f"/api/challenges/{cid}")
    rows = {r["name"]: r for r in body["deals"][0]["rows"]}
    assert set(rows) == {"G0", "G1", "G2"}  # the refused attempt changed nothing
    assert body["deals"][0]["players"] == 3
    assert [rows[n]["flags"] for n in ("G0", "G1", "G2")] == [[], ["address"], ["address"]]
    assert [rows[n]["flagged"] for n in ("G0", "G1", "G2")] == [False, True, True]
    assert rds.hlen(f"ch:{cid}:0:att") == 3
    assert set(rds.scan_iter("room:*")) == rooms  # no room made
    assert rds.hgetall(f"ch:{cid}:0:addr") == counts  # nothing counted
    assert b"203.0.113.7" not in b"".join(rds.hkeys(f"ch:{cid}:0:addr"))  # kept hashed
    # the flag stays through the attempt's moves and its end
    assert (await others[0].move("draw", seq=1))["type"] == "ack"
    await others[0].send("resign", seq=2)
    await ended(others[0])
    _, body = await get(limited.port, f"/api/challenges/{cid}")
    rows = {r["name"]: r for r in body["deals"][0]["rows"]}
    assert rows["G1"]["status"] == "resigned" and rows["G1"]["flags"] == ["address"]
    # coming back to one's own attempt counts nothing; another address is its own count
    back = await first.request("attempt", "welcome", challenge=cid, name="G0")
    assert back["type"] == "welcome" and back["room"]["code"] == answers[0]["room"]["code"]
    elsewhere = await guest_at(limited.port, "198.51.100.2")
    welcome = await elsewhere.request("attempt", "welcome", challenge=cid, name="E")
    assert welcome["type"] == "welcome"
    _, body = await get(limited.port, f"/api/challenges/{cid}")
    rows = {r["name"]: r for r in body["deals"][0]["rows"]}
    assert rows["E"]["flags"] == []
    for c in (first, *others, elsewhere):
        await c.close()


async def test_attempts_sent_together_from_one_address_keep_to_the_limit(limited) -> None:
    cid = day_id()
    players = [await guest_at(limited.port, "192.0.2.55") for _ in range(6)]
    answers = await asyncio.gather(
        *(
            p.request("attempt", "welcome", challenge=cid, name=f"P{i}")
            for i, p in enumerate(players)
        )
    )
    kinds = sorted(a["type"] for a in answers)
    assert kinds == ["error"] * 3 + ["welcome"] * 3
    assert {a["reason"] for a in answers if a["type"] == "error"} == {"rate_limited"}
    _, body = await get(limited.port, f"/api/challenges/{cid}")
    assert body["deals"][0]["players"] == 3
    assert sorted(len(r["flags"]) for r in body["deals"][0]["rows"]) == [0, 1, 1]
    for p in players:
        await p.close()


async def test_a_players_devices_asking_together_count_once_at_an_address(limited) -> None:
    """Two devices of one player ask for their attempt at once, from an address with one
    attempt left: the player counts once there, both devices get the one attempt, and it
    is flagged as the address's third (not refused, not counted as a fourth)."""
    cid = day_id()
    for i in range(2):
        other = await guest_at(limited.port, "192.0.2.80")
        assert (await other.request("attempt", "welcome", challenge=cid, name=f"O{i}"))[
            "type"
        ] == "welcome"
        await other.close()
    device = secrets.token_urlsafe(24)
    devices = []
    for _ in range(2):
        c = await Client.open(limited.port, additional_headers={"X-Forwarded-For": "192.0.2.80"})
        await c.request("hello", "identity", device=device)
        devices.append(c)
    answers = await asyncio.gather(
        *(c.request("attempt", "welcome", challenge=cid, name="Pat") for c in devices)
    )
    assert [a["type"] for a in answers] == ["welcome", "welcome"], answers
    assert answers[0]["room"]["code"] == answers[1]["room"]["code"]
    _, body = await get(limited.port, f"/api/challenges/{cid}")
    rows = {r["name"]: r for r in body["deals"][0]["rows"]}
    assert rows["Pat"]["flags"] == ["address"] and body["deals"][0]["players"] == 3
    late = await guest_at(limited.port, "192.0.2.80")  # the address's three are made
    refused = await late.request("attempt", "welcome", challenge=cid, name="Late")
    assert refused["reason"] == "rate_limited", refused
    assert "3 attempts at this deal" in refused["message"]
    for c in (*devices, late):
        await c.close()


# ---- accounts-only ranking ------------------------------------------------------------
async def test_a_challenge_that_ranks_accounts_lists_guests_apart(redis_url) -> None:
    async with (
        running(daily_config(redis_url, challenge_ranking="accounts")) as node,
        running(daily_config(redis_url)) as other,  # set otherwise: the first one decided
    ):
        port, other_port = node.port, other.port
        cid = day_id()
        gus = await guest(port)
        ann = await guest(port)
        got = await ann.request(
            "register", "identity", name="Ann" + secrets.token_hex(3), password="correct horse"
        )
        assert got["player"]["guest"] is False
        assert (await gus.request("attempt", "welcome", challenge=cid, name="Gus"))[
            "type"
        ] == "welcome"
        assert (await ann.request("attempt", "welcome", challenge=cid, name="x"))[
            "type"
        ] == "welcome"
        assert (await gus.move("draw", seq=1))["type"] == "ack"
        assert (await ann.move("draw", seq=1))["type"] == "ack"
        await gus.send("resign", seq=2)
        await ended(gus)
        for p in (port, other_port):  # fixed for good once read open, whatever a node says
            _, body = await get(p, f"/api/challenges/{cid}")
            assert body["ranks"] == "accounts"
            deal = body["deals"][0]
            assert [r["guest"] for r in deal["rows"]] == [False]  # ranked: accounts only
            assert deal["players"] == 1 and deal["guests"] == 1
            assert [(r["name"], r["rank"], r["status"]) for r in deal["guest_rows"]] == [
                ("Gus", 1, "resigned")
            ]
        # the live leaderboard ranks the account alone; the guest's own place is on the
        # guests' list
        board = await ann.request("watch_board", "leaderboard", challenge=cid)
        assert [r["guest"] for r in board["rows"]] == [False] and board["players"] == 1
        listing = await gus.request("challenges", "challenges")
        mine = next(c for c in listing["challenges"] if c["id"] == cid)["deals"][0]["you"]
        assert mine["guests"] is True and mine["rank"] == 1 and mine["status"] == "resigned"
        # an operator takes a guest's row off their list like any other
        who = deal["guest_rows"][0]["who"]
        record = {"who": who, "when": 0, "reason": "test", "by": "ops"}
        taken = await node.store.challenges.remove(cid, 0, who, record)
        assert taken is not None and taken["row"]["name"] == "Gus"
        _, body = await get(port, f"/api/challenges/{cid}")
        assert body["deals"][0]["guest_rows"] == [] and body["deals"][0]["guests"] == 0
        assert [r["who"] for r in await node.store.challenges.removed(cid, 0)] == [who]
        for c in (gus, ann):
            await c.close()


async def test_the_live_leaderboard_of_a_challenge_that_ranks_accounts(redis_url) -> None:
    """The live frames carry the guests' list beside the ranked rows (a full board, then
    the changes of each), and a guest outside the guests' top gets their place there."""
    async with running(daily_config(redis_url, challenge_ranking="accounts")) as node:
        cid = day_id()
        ann = await guest(node.port)
        name = "Ann" + secrets.token_hex(3)
        await ann.request("register", "identity", name=name, password="correct horse")
        gus, gil = await guest(node.port), await guest(node.port)
        for c, who in ((ann, "x"), (gus, "Gus"), (gil, "Gil")):
            got = await c.request("attempt", "welcome", challenge=cid, name=who)
            assert got["type"] == "welcome", got
        board = await gus.request("watch_board", "leaderboard", challenge=cid)
        assert board["ranks"] == "accounts"
        assert [r["name"] for r in board["rows"]] == [name] and board["players"] == 1
        assert sorted(r["name"] for r in board["guest_rows"]) == ["Gil", "Gus"]
        assert board["guests"] == 2 and {r["rank"] for r in board["guest_rows"]} == {1}
        assert [r["flags"] for r in board["guest_rows"]] == [["address"]] * 2
        # a guest's attempt ends: a change on the guests' list alone, the version up
        await gil.send("resign", seq=1)
        await ended(gil)
        changes = await gus.expect("leaderboard_changes")
        assert changes["base"] == board["v"] and changes["v"] > board["v"]
        assert changes["changed"] == [] and changes["gone"] == []
        assert [(r["name"], r["status"]) for r in changes["guest_changed"]] == [("Gil", "resigned")]
        assert changes["guest_gone"] == [] and changes["guests"] == 2
        # 100 guests ahead of Gus (rows as the move script writes them): his own place
        # on the guests' list comes apart from the top
        row = {"name": "x", "guest": True, "code": "AAAAAA", "foundation": 9, "moves": 9,
               "reached_moves": 9, "reached_ms": 9, "status": "playing", "score": None,
               "last_ms": 9, "flagged": False, "flags": []}  # fmt: skip
        rds = redis.Redis.from_url(redis_url)
        for i in range(100):
            rds.zadd(f"ch:{cid}:0:guests:board", {f"g-{i:032x}": i})
            rds.hset(f"ch:{cid}:0:guests:rows", f"g-{i:032x}", orjson.dumps(row))
        rds.incr(f"ch:{cid}:0:guests:ver")
        top = await gus.request("watch_board", "leaderboard", challenge=cid)
        assert len(top["guest_rows"]) == 100 and top["guests"] == 102
        assert top["v"] > changes["v"]
        you = await gus.expect("leaderboard_you")
        assert you["guests"] is True
        # Gus and Gil tie (nothing reached): they share place 101, listed by player key,
        # which is random here, so either may come last
        near = [(r["rank"], r["name"]) for r in you["rows"]]
        assert sorted(near[-2:]) == [(101, "Gil"), (101, "Gus")] and near[-3] == (100, "x"), near
        mine = await ann.request("watch_board", "leaderboard", challenge=cid)
        assert mine["rows"][0]["name"] == name  # on the ranked rows' top: no place apart
        assert [m for m in await ann.drain(0.3) if m["type"] == "leaderboard_you"] == []
        for c in (ann, gus, gil):
            await c.close()


async def test_a_challenge_that_ranks_everyone_has_no_guests_list(daily) -> None:
    cid = day_id()
    gus = await guest(daily.port)
    assert (await gus.request("attempt", "welcome", challenge=cid, name="Gus"))["type"] == "welcome"
    _, body = await get(daily.port, f"/api/challenges/{cid}")
    assert body["ranks"] == "everyone"
    deal = body["deals"][0]
    assert [r["name"] for r in deal["rows"]] == ["Gus"]
    assert deal["guest_rows"] == [] and deal["guests"] == 0
    await gus.close()
