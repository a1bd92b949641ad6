"""Daily challenges: deals derived from the secret and certified by the solver, prepared
once; one ranked attempt per player per deal through reconnects and devices; the live
leaderboard; spectating and practice only after your own attempt; the reveal at close;
an attempt spanning midnight. Real Redis, real WebSockets, the clock shifted."""

from __future__ import annotations

import asyncio
import hashlib
import json
import secrets
import time
from datetime import UTC, date, datetime

import orjson
import pytest
import redis

from klondike_race.service.clock import Clock
from klondike_race.service.domain import challenge as ch
from klondike_race.service.logs import configure
from klondike_race.service.node import Node
from tests.conftest import until

from .conftest import SECRET, Client, daily_config, day_id, guest, http, make_config, running


async def get(port: int, path: str) -> tuple[int, dict]:
    status, _, body = await http(port, "GET", path)
    return status, orjson.loads(body)


class Held:
    """A watcher's leaderboard as a client keeps it: a ``leaderboard`` replaces it, a
    ``leaderboard_changes`` applies to the version it names (docs/protocol.md)."""

    def __init__(self) -> None:
        self.v, self.players, self.final, self.rows = -1, 0, False, []

    def take(self, m: dict) -> None:
        if m["type"] == "leaderboard_changes":
            assert m["base"] == self.v, (m["base"], self.v)
            by_who = {r["who"]: r for r in self.rows}
            for who in m["gone"]:
                del by_who[who]
            by_who.update((r["who"], r) for r in m["changed"])
            rows = sorted(by_who.values(), key=lambda r: (r["key"], r["who"]))
            rank = 1
            for i, r in enumerate(rows):  # a place: 1 + the rows with a smaller key
                if i and r["key"] != rows[i - 1]["key"]:
                    rank = i + 1
                rows[i] = {**r, "rank": rank}
        else:
            assert m["type"] == "leaderboard"
            rows = m["rows"]
        self.v, self.players, self.final, self.rows = m["v"], m["players"], m["final"], rows


def to_close(clock: Clock, challenge_id: str, ms: int) -> None:
    """Shift ``clock`` so that the challenge closes ``ms`` from now."""
    c = ch.parse_daily(challenge_id, (1,), 1800)
    assert c is not None
    clock.shift_to(c.closes - ms)


def final_at(challenge_id: str) -> int:
    """When a daily is final (its close and then an attempt's time limit): epoch ms."""
    c = ch.parse_daily(challenge_id, (1,), 1800)
    assert c is not None
    return c.final_at()


def sealed(got: dict, challenge_id: str) -> bool:
    """Whether ``got`` is the refusal of anything of a deal before its challenge is final."""
    return (
        got["type"] == "error"
        and got["reason"] == "not_yet"
        and got["opens_at"] == final_at(challenge_id)
        and "UTC" in got["message"]
    )


def test_seeds_are_secret_day_and_candidate_bound() -> None:
    a = ch.seed(b"s", "daily-2026-12-02-draw3", 0, 0)
    assert a == ch.seed(b"s", "daily-2026-12-02-draw3", 0, 0)  # reproducible
    others = {
        ch.seed(b"t", "daily-2026-12-02-draw3", 0, 0),
        ch.seed(b"s", "daily-2026-12-03-draw3", 0, 0),
        ch.seed(b"s", "daily-2026-12-02-draw1", 0, 0),
        ch.seed(b"s", "daily-2026-12-02-draw3", 1, 0),
        ch.seed(b"s", "daily-2026-12-02-draw3", 0, 1),
    }
    assert a not in others and len(others) == 5
    (d3,) = ch.dailies(date(2026, 12, 2), (3,), 1800)
    assert d3.id == "daily-2026-12-02-draw3" and d3.deals[0].draw == 3
    assert d3.closes - d3.opens == ch.DAY_MS and d3.phase(d3.opens - 1) == ch.UPCOMING
    assert d3.phase(d3.opens) == ch.OPEN and d3.phase(d3.closes) == ch.CLOSED
    assert ch.parse_daily("daily-2026-12-02-draw3", (1, 3), 1800) == d3
    for bad in ("daily-2026-13-02-draw3", "daily-2026-12-02-draw2", "weekly", "daily-x"):
        assert ch.parse_daily(bad, (1, 3), 1800) is None


def test_a_scheduled_challenge_is_read_strictly() -> None:
    entry = {
        "id": "weekly-49",
        "opens": "2026-12-07T00:00:00Z",
        "closes": "2026-12-14T00:00:00Z",
        "deals": [{"draw": 3}] * 5,
        "ranking": "foundation",
    }
    week = ch.scheduled(entry, 1800)
    assert len(week.deals) == 5 and week.ranking == "foundation" and week.time_limit == 1800
    # without a time limit of its own, KR_CHALLENGE_TIME_LIMIT_S's (10 s or more) as it is
    short = ch.scheduled(entry, 30)
    assert short.time_limit == 30
    base = {
        "id": "weekly-49",
        "opens": "2026-12-07T00:00:00Z",
        "closes": "2026-12-14T00:00:00Z",
        "deals": [{"draw": 3}],
    }
    for change, error in [
        ({"id": "daily-x"}, "id"),
        ({"id": "A"}, "id"),
        ({"closes": "2026-12-06T00:00:00Z"}, "closes must come after"),
        ({"opens": "2026-12-07T00:00:00"}, "time zone"),
        ({"deals": []}, "1 to 20"),
        ({"deals": [{"draw": 3}, {"draw": 1, "undo": True}]}, "undo is off"),
        ({"ranking": "places"}, "ranking"),
        ({"time_limit": 5}, "time_limit"),
        ({"colour": "red"}, "unknown field"),
    ]:
        with pytest.raises(ValueError, match=error):
            ch.scheduled({**base, **change}, 1800)


async def test_one_attempt_per_player_through_reconnects_and_devices(daily, redis_url) -> None:
    cid = day_id()
    dev = secrets.token_urlsafe(24)
    a = await Client.open(daily.port)
    await a.request("hello", "identity", device=dev)
    listed = await a.request("challenges", "challenges")
    mine = next(c for c in listed["challenges"] if c["id"] == cid)
    assert mine["phase"] == "open" and mine["deals"][0]["you"] is None
    welcome = await a.request("attempt", "welcome", challenge=cid, name="Gus")
    assert welcome["type"] == "welcome", welcome
    room = welcome["room"]
    assert room["challenge"] == f"{cid}/0" and room["phase"] == "racing"
    assert room["time_limit"] == 1800 and room["private"] and room["capacity"] == 1
    assert (await a.move("draw", seq=1))["type"] == "ack"
    # the same device again, on another connection: the same room and seat, the moves on
    b = await Client.open(daily.port)
    await b.request("hello", "identity", device=dev)
    again = await b.request("attempt", "welcome", challenge=cid, name="Gus")
    assert again["room"]["code"] == room["code"] and again["player"] == welcome["player"]
    assert again["seq"] == 1
    assert (await b.move("draw", seq=2))["type"] == "ack"
    # an account's attempt is one across its devices: claim, then sign in elsewhere
    e = await guest(daily.port)
    made = await e.request("register", "identity", name="Gus Player", password="gus's password")
    c = await Client.open(daily.port)
    await c.request("hello", "identity", session=made["session"])
    own = await c.request("attempt", "welcome", challenge=cid, name="x")
    other = await e.request("attempt", "welcome", challenge=cid, name="x")
    assert own["room"]["code"] == other["room"]["code"] != room["code"]
    # nobody can start a second attempt or a fresh one for someone else
    rds = redis.Redis.from_url(redis_url)
    assert rds.hlen(f"ch:{cid}:0:att") == 2
    # a guest who played, then claimed a name, cannot play the deal again as the account
    d = await Client.open(daily.port)
    await d.request("hello", "identity", device=dev)
    named = await d.request("register", "identity", name="Gus Again", password="gus's password")
    assert named["type"] == "identity", named
    again = await d.request("attempt", "welcome", challenge=cid, name="x")
    assert again["type"] == "error" and again["reason"] == "attempt_made", again
    assert rds.hlen(f"ch:{cid}:0:att") == 2
    await d.close()
    listed = await a.request("challenges", "challenges")
    you = next(c for c in listed["challenges"] if c["id"] == cid)["deals"][0]["you"]
    assert you["code"] == room["code"] and you["status"] == "playing" and you["rank"] >= 1
    # the attempt ended, its player watches it from a connection, then asks for it there:
    # the seat is theirs (a new seat is what a watched race refuses, not one's own)
    assert (await b.request("resign", "ack", seq=3))["type"] == "ack"
    f = await Client.open(daily.port)
    await f.request("hello", "identity", device=dev)
    watched = await f.request("watch", "welcome", code=room["code"])
    assert watched["type"] == "welcome" and watched["role"] == "spectator", watched
    back = await f.request("attempt", "welcome", challenge=cid, name="Gus")
    assert back["type"] == "welcome" and back["player"] == welcome["player"], back
    assert back["room"]["code"] == room["code"] and back["seq"] == 3
    for cl in (a, b, c, e, f):
        await cl.close()


async def test_refusals_change_nothing(daily, redis_url) -> None:
    cid = day_id()
    anon = await Client.open(daily.port)
    got = await anon.request("attempt", "welcome", challenge=cid, name="Anon")
    assert got["reason"] == "hello_first", got
    g = await guest(daily.port)
    for fields, reason in [
        ({"challenge": "nope-nope", "name": "G"}, "no_challenge"),
        ({"challenge": cid, "name": "G", "deal": 3}, "no_deal"),
        ({"challenge": cid, "name": "G", "deal": "0"}, "bad_field"),
        ({"challenge": cid, "name": "G", "deal": 20}, "bad_field"),
        ({"challenge": cid}, "missing_field"),
        ({"challenge": cid, "name": "G", "extra": 1}, "bad_field"),
        ({"challenge": "x" * 49, "name": "G"}, "bad_field"),
        ({"challenge": day_id(1), "name": "G"}, "challenge_not_open"),
        ({"challenge": day_id(-2), "name": "G"}, "challenge_not_open"),
        ({"challenge": cid, "name": "G", "practice": True}, "not_yet"),
        # a daily exists from the day before it opens until KR_KEEP_DAILY_S after it
        # closes: no other day's deal is made on demand
        ({"challenge": day_id(2), "name": "G"}, "no_challenge"),
        ({"challenge": "daily-2001-01-01-draw1", "name": "G", "practice": True}, "no_challenge"),
    ]:
        got = await g.request("attempt", "welcome", **fields)
        assert got["type"] == "error" and got["reason"] == reason, (fields, got)
    got = await g.request("watch_board", "leaderboard", challenge="nope-nope")
    assert got["reason"] == "no_challenge", got
    rds = redis.Redis.from_url(redis_url)
    assert not rds.exists(f"ch:{cid}:0:att")
    assert not list(rds.scan_iter("ch:daily-*:0:att"))
    status, body = await get(daily.port, "/api/challenges?day=2001-01-01")
    assert status == 200 and body["challenges"] == [], body
    assert (await get(daily.port, "/api/challenges/daily-2001-01-01-draw1"))[0] == 404
    assert not list(rds.scan_iter("ch:daily-2001-*"))
    for day in ("2026-13-01", "20261202", "2026-W49-3", "2026-12-02T00:00"):
        assert (await get(daily.port, f"/api/challenges?day={day}"))[0] == 400, day
    assert (await get(daily.port, "/api/challenges?when=x"))[0] == 400
    assert (await get(daily.port, "/api/challenges/nope-nope"))[0] == 404
    # no API's path: the server's plain 404, as any unknown path
    assert (await http(daily.port, "GET", "/api/challengesXYZ"))[::2] == (404, b"not found\n")
    await anon.close()
    await g.close()


async def test_watchers_get_the_rows_that_changed_and_hold_the_whole_board(daily) -> None:
    """After the first full board a watcher gets only the rows that changed (a move that
    changes no standing changes no row); whenever it joined, what it holds is the board
    a fresh watcher is sent."""
    cid = day_id()
    players = [await guest(daily.port) for _ in range(6)]
    for i, p in enumerate(players[:2]):
        await p.request("attempt", "welcome", challenge=cid, name=f"P{i}")
    early, late = await guest(daily.port), None
    boards = {early: Held()}
    await early.send("watch_board", challenge=cid)
    changes = []
    for turn in range(2, 6):
        await players[turn].request("attempt", "welcome", challenge=cid, name=f"P{turn}")
        quitter = players[turn - 2]
        assert (await quitter.request("resign", "ack", seq=quitter.seq + 1))["type"] == "ack"
        assert (await players[turn - 1].move("draw"))["type"] == "ack"  # no standing changes
        await asyncio.sleep(0.15)  # a push or two (every 50 ms)
        if turn == 3:
            late = await guest(daily.port)
            boards[late] = Held()
            await late.send("watch_board", challenge=cid)
        for w, held in boards.items():
            for m in await w.drain(0.1):
                if m["type"] in ("leaderboard", "leaderboard_changes"):
                    held.take(m)
                    if m["type"] == "leaderboard_changes":
                        changes.append(m)
    assert late is not None
    # an operator takes a row off: it is gone from every watcher's rows
    removed = boards[early].rows[0]["who"]
    assert await daily.store.challenges.remove(cid, 0, removed, {"reason": "test"})
    deadline = time.monotonic() + 5  # pushed within a frame or two (every 50 ms)
    while time.monotonic() < deadline and any(
        removed in [r["who"] for r in held.rows] for held in boards.values()
    ):
        for w, held in boards.items():
            for m in await w.drain(0.05):
                if m["type"] in ("leaderboard", "leaderboard_changes"):
                    held.take(m)
                    changes.append(m)
    assert any(m.get("gone") == [removed] for m in changes)
    fresh = await guest(daily.port)
    whole = await fresh.request("watch_board", "leaderboard", challenge=cid)
    assert whole["players"] == 5 and len(whole["rows"]) == 5
    assert removed not in [r["who"] for r in whole["rows"]]
    for held in boards.values():
        assert held.rows == whole["rows"] and held.players == 5
    assert any(len(m["changed"]) < len(whole["rows"]) for m in changes), changes
    for p in players[4:]:  # moves that change no standing: nothing is pushed
        assert (await p.move("draw"))["type"] == "ack"
    await asyncio.sleep(0.2)
    for w in boards:
        assert [m["type"] for m in await w.drain(0.1) if "leaderboard" in m["type"]] == []
    for c in (*players, early, late, fresh):
        await c.close()


async def test_the_live_leaderboard_and_who_may_watch(daily) -> None:
    cid = day_id()
    ann, bob, eve = await guest(daily.port), await guest(daily.port), await guest(daily.port)
    a = await ann.request("attempt", "welcome", challenge=cid, name="Ann")
    await bob.request("attempt", "welcome", challenge=cid, name="Bob")
    assert (await ann.move("draw", seq=1))["type"] == "ack"
    board = await eve.request("watch_board", "leaderboard", challenge=cid)
    assert board["players"] == 2 and board["final"] is False
    names = [r["name"] for r in board["rows"]]
    assert sorted(names) == ["Ann", "Bob"]
    # everyone ranked: no guests' list
    assert board["ranks"] == "everyone" and board["guests"] == 0 and board["guest_rows"] == []
    # Bob's attempt came from Ann's address (every test client is 127.0.0.1): flagged
    flags = {r["name"]: (r["flagged"], r["flags"]) for r in board["rows"]}
    assert flags == {"Ann": (False, []), "Bob": (True, ["address"])}
    for row in board["rows"]:  # a row is a summary: never a card
        assert set(row) == {
            "rank",
            "who",
            "name",
            "guest",
            "code",
            "foundation",
            "reached_moves",
            "reached_ms",
            "status",
            "score",
            "flagged",
            "flags",
            "key",
        }  # what ranks: not the moves made nor the last move's time, which every move changes
        assert row["guest"] is True
    # Bob is still playing: he may not watch Ann's board, nor may Eve (no attempt)
    code = a["room"]["code"]
    for c in (bob, eve):
        assert sealed(await c.request("watch", "welcome", code=code), cid)
    # Bob resigns: his attempt has ended, but Ann still plays the deal: nothing of her
    # game, and no practice of the deal, until the challenge is final
    assert (await bob.request("resign", "ack", seq=1))["type"] == "ack"
    assert sealed(await bob.request("watch", "welcome", code=code), cid)
    practice = await bob.request("attempt", "welcome", challenge=cid, name="Bob", practice=True)
    assert sealed(practice, cid), practice
    for c in (ann, bob, eve):
        await c.close()


async def test_a_throwaway_attempt_opens_nothing_of_the_deal_until_final(daily, redis_url) -> None:
    """A second identity costs nothing: one that attempts and resigns at once gets its own
    board and result, and nothing else of the deal while others play it: no finish it for
    me (the deal's winning line), no practice (hints), no watching, replay or ghost of
    another attempt. Each refusal says when it opens (``not_yet``, ``opens_at``) and makes
    nothing; at ``final_at`` every one of them opens."""
    cid = day_id()
    ann, eve = await guest(daily.port), await guest(daily.port)
    a = await ann.request("attempt", "welcome", challenge=cid, name="Ann")
    code = a["room"]["code"]
    assert (await ann.move("draw"))["type"] == "ack"  # Ann's attempt ends: its cards are
    assert (await ann.request("resign", "ack", seq=2))["type"] == "ack"  # still others'
    e = await eve.request("attempt", "welcome", challenge=cid, name="Eve")
    resigned = await eve.request("resign", "ack", seq=1)
    assert resigned["type"] == "ack" and resigned["can_finish"] is False, resigned
    own = await eve.expect("room")
    while own["room"]["phase"] != "finished":
        own = await eve.expect("room")
    rds = redis.Redis.from_url(redis_url)
    rooms_before = sorted(rds.scan_iter(match="room:{*}"))
    assert sealed(await eve.request("finish", "finishing"), cid)
    got = await eve.request("hint", "hint")  # hints are for practice games only
    assert got["reason"] == "not_in_practice", got
    for kind, fields in (
        ("attempt", {"challenge": cid, "name": "Eve", "practice": True}),
        ("watch", {"code": code}),
        ("replay", {"code": code}),
        ("ghost", {"code": code, "player": "p1", "name": "Eve"}),
    ):
        got = await eve.request(kind, "welcome", "replay", **fields)
        assert sealed(got, cid), (kind, got)
    assert sorted(rds.scan_iter(match="room:{*}")) == rooms_before  # nothing was made
    # final: all of it opens
    to_close(daily.clock, cid, -1_800_000 - 1_000)
    watched = await eve.request("watch", "welcome", code=code)
    assert watched["type"] == "welcome" and "reveal" in watched["room"], watched
    replay = await eve.request("replay", "replay", code=code)
    assert replay["type"] == "replay" and replay["replay"]["players"][0]["record"], replay
    ghost = await eve.request("ghost", "welcome", code=code, player="p1", name="Eve")
    assert ghost["type"] == "welcome" and ghost["room"]["ghost_of"]["code"] == code, ghost
    practice = await eve.request("attempt", "welcome", challenge=cid, name="Eve", practice=True)
    assert practice["type"] == "welcome" and practice["room"]["practice"], practice
    assert (await eve.request("hint", "hint"))["type"] == "hint"
    # her attempt again: finish it for me plays the line, in a practice continuation
    await eve.send("resume", token=e["token"])
    assert (await eve.expect("welcome"))["can_finish"] is True
    await eve.send("finish")
    fork = await eve.expect("welcome", timeout=30)
    assert fork["room"].get("parent") == e["room"]["code"], fork
    assert (await eve.expect("finishing", timeout=30))["moves"] > 0
    for c in (ann, eve):
        await c.close()


async def test_ones_own_attempt_gives_nothing_of_the_deal_but_its_board_and_result(
    daily, redis_url
) -> None:
    """Before the challenge is final a player's own ended attempt shows them its board
    and result (``watch`` of it), and nothing else of the deal: no replay of it (over the
    connection, or HTTP: ``opens_at`` and the time in UTC there too), no ghost race of it
    (a practice game on the deal), no par. At ``final_at`` each opens."""
    cid = day_id()
    eve = await guest(daily.port)
    e = await eve.request("attempt", "welcome", challenge=cid, name="Eve")
    mine = e["room"]["code"]
    assert (await eve.move("draw"))["type"] == "ack"
    assert (await eve.request("resign", "ack", seq=2))["type"] == "ack"
    room = await eve.expect("room")
    while room["room"]["phase"] != "finished":
        room = await eve.expect("room")
    assert "boards" in room and "analysis" not in room, room
    rds = redis.Redis.from_url(redis_url)
    rooms_before = sorted(rds.scan_iter(match="room:{*}"))
    got = await eve.request("replay", "replay", code=mine)
    assert sealed(got, cid) and got["about"] == "replay", got
    got = await eve.request("ghost", "welcome", code=mine, player="p1", name="Eve")
    assert sealed(got, cid) and got["about"] == "ghost", got
    for path in (f"/api/replays/{mine}", f"/api/replays/{mine}?player=p1&format=record"):
        status, body = await get(daily.port, path)
        assert status == 403 and sealed({"type": "error", "reason": body["error"], **body}, cid)
    assert sorted(rds.scan_iter(match="room:{*}")) == rooms_before  # nothing was made
    status, page = await get(daily.port, f"/api/challenges/{cid}")
    assert status == 200 and page["deals"][0]["par"] is None, page
    assert page["deals"][0]["rows"][0]["replay"] is None
    # her own board and result: watching her attempt (another device of hers)
    watched = await eve.request("watch", "welcome", code=mine)
    assert watched["type"] == "welcome" and watched["boards"]["p1"]["columns"], watched
    assert "reveal" not in watched["room"] and "analysis" not in watched, watched
    # final
    to_close(daily.clock, cid, -1_800_000 - 1_000)
    got = await eve.request("replay", "replay", code=mine)
    assert got["type"] == "replay" and got["replay"]["players"][0]["record"], got
    assert "reveal" in got["replay"]["room"]
    status, body = await get(daily.port, f"/api/replays/{mine}")
    assert status == 200 and body["code"] == mine, body
    got = await eve.request("ghost", "welcome", code=mine, player="p1", name="Eve")
    assert got["type"] == "welcome" and got["room"]["ghost_of"]["code"] == mine, got
    status, page = await get(daily.port, f"/api/challenges/{cid}")
    assert isinstance(page["deals"][0]["par"], int) and page["deals"][0]["reveal"], page
    assert page["deals"][0]["rows"][0]["replay"] == f"/replay/{mine}"
    await eve.close()


async def test_the_reveal_once_final_and_an_attempt_over_midnight(daily) -> None:
    """An attempt begun before the close goes on after it and counts; the deal's seed is
    revealed, and the attempts may be watched and the deal practised by anyone, only once
    the last attempt that could start has run out of time (``final_at``): until then a
    player still in their attempt could not be handed the cards."""
    cid = day_id()
    to_close(daily.clock, cid, 20_000)  # 20 s before the day closes
    ann, late = await guest(daily.port), await guest(daily.port)
    a = await ann.request("attempt", "welcome", challenge=cid, name="Ann")
    assert (await ann.move("draw", seq=1))["type"] == "ack"
    assert "reveal" not in a["room"]
    status, before = await get(daily.port, f"/api/challenges/{cid}")
    assert status == 200 and before["deals"][0]["reveal"] is None
    commitment = before["deals"][0]["commitment"]
    assert len(commitment) == 64
    assert before["deals"][0]["rows"][0]["replay"] is None
    to_close(daily.clock, cid, -1_000)  # the day closed a second ago
    got = await late.request("attempt", "welcome", challenge=cid, name="Late")
    assert got["reason"] == "challenge_not_open", got
    # Ann's attempt started before the close: it goes on and counts for its day, and
    # nothing of its deal is out yet: no reveal, no par, no watching, no practice
    assert (await ann.move("draw", seq=2))["type"] == "ack"
    status, closed = await get(daily.port, f"/api/challenges/{cid}")
    assert closed["phase"] == "closed" and not closed["final"]
    assert closed["deals"][0]["reveal"] is None and closed["deals"][0]["par"] is None
    assert closed["deals"][0]["rows"][0]["replay"] is None
    assert sealed(await late.request("watch", "welcome", code=a["room"]["code"]), cid)
    got = await late.request("attempt", "welcome", challenge=cid, practice=True, name="L")
    assert sealed(got, cid), got
    assert (await ann.request("resign", "ack", seq=3))["type"] == "ack"
    room = (await ann.expect("room"))["room"]
    while room["phase"] != "finished":
        room = (await ann.expect("room"))["room"]
    assert "reveal" not in room  # not final yet
    to_close(daily.clock, cid, -1_800_000 - 1_000)  # final: the last possible attempt is over
    status, after = await get(daily.port, f"/api/challenges/{cid}")
    deal = after["deals"][0]
    reveal = deal["reveal"]
    assert status == 200 and after["phase"] == "closed" and after["final"]
    candidates = {ch.seed(SECRET.encode(), cid, 0, n) for n in range(6)}
    assert reveal["seed"] in candidates and reveal["deal"] == f"v1:{reveal['seed']}"
    check = hashlib.sha256(f"{reveal['salt']}:{reveal['deal']}".encode()).hexdigest()
    assert check == commitment == deal["commitment"]
    assert deal["par"] > 0  # certified winnable: the solver's line length
    (row,) = deal["rows"]
    assert row["name"] == "Ann" and row["moves"] == 2 and row["status"] == "resigned"
    assert row["replay"] == f"/replay/{a['room']['code']}"
    # now anyone may watch the attempts (the attempt's own room reveals its deal too)
    got = await late.request("watch", "welcome", code=a["room"]["code"])
    assert got["type"] == "welcome" and "reveal" in got["room"], got
    for c in (ann, late):
        await c.close()


async def test_a_deal_is_prepared_once_by_racing_nodes_and_after_a_dead_one(redis_url) -> None:
    configure(json=False, level="warning")
    config = make_config(
        redis_url,
        daily_draws="1",
        challenge_secret=SECRET,
        solver_challenge_s=3.0,
        solver_challenge_tries=5,
    )
    nodes = [Node(config, redis_url), Node(config, redis_url)]
    for n in nodes:
        await n.start()
    rds = redis.Redis.from_url(redis_url)
    try:
        c = await nodes[0].challenges.find(day_id(1))  # tomorrow's: not open, made ahead
        made = await asyncio.gather(*(n.challenges.deal(c, 0) for n in nodes))
        assert made[0] == made[1] and made[0]["commitment"]
        assert orjson.loads(rds.get(f"ch:{c.id}:0:deal")) == made[0]
        # a node died holding the preparation lock of the day after: another takes over
        later = ch.parse_daily(day_id(2), (1,), 1800)  # (no challenge yet: made by hand)
        assert later is not None
        rds.set(f"ch:{later.id}:0:prep", "dead-node", px=600)
        got = await asyncio.wait_for(nodes[1].challenges.deal(later, 0), 30)
        assert got["seed"] == ch.seed(SECRET.encode(), later.id, 0, got["candidate"])
        assert rds.get(f"ch:{later.id}:0:prep") != b"dead-node"
    finally:
        for n in nodes:
            await n.stop()


async def test_a_watching_player_outside_the_top_gets_their_own_place(daily, redis_url) -> None:
    cid = day_id()
    rds = redis.Redis.from_url(redis_url)
    dev = secrets.token_urlsafe(24)
    ann = await Client.open(daily.port)
    await ann.request("hello", "identity", device=dev)
    assert (await ann.request("attempt", "welcome", challenge=cid, name="Ann"))["type"] == "welcome"
    await ann.close()
    # 150 others ahead of her, in tied pairs (rows as the move script writes them)
    row = {"name": "x", "guest": True, "code": "AAAAAA", "foundation": 9, "moves": 9,
           "reached_moves": 9, "reached_ms": 9, "status": "playing", "score": None,
           "last_ms": 9, "flagged": False}  # fmt: skip
    for i in range(150):
        rds.zadd(f"ch:{cid}:0:board", {f"g-{i:032x}": i // 2})
        rds.hset(f"ch:{cid}:0:rows", f"g-{i:032x}", orjson.dumps({**row, "name": f"p{i}"}))
    rds.incr(f"ch:{cid}:0:ver")
    watchers = []
    for _ in range(3):  # the same player on three connections
        w = await Client.open(daily.port)
        await w.request("hello", "identity", device=dev)
        await w.send("watch_board", challenge=cid)
        watchers.append(w)
    for w in watchers:
        top = await w.expect("leaderboard")
        assert len(top["rows"]) == 100 and top["players"] == 151
        assert [r["rank"] for r in top["rows"][:4]] == [1, 1, 3, 3]
        you = await w.expect("leaderboard_you")
        near = [(r["rank"], r["name"]) for r in you["rows"]]
        assert near == [(147, "p147"), (149, "p148"), (149, "p149"), (151, "Ann")], near
    for w in watchers:
        await w.close()


async def test_a_replay_of_an_attempt_over_the_connection_waits_for_final_as_http(
    daily,
) -> None:
    """Before the challenge is final, ``replay`` over the connection shows nobody an
    attempt, its own player included (``not_yet``, as HTTP, which knows no player); once
    final, anyone sees it, with its record and the deal."""
    cid = day_id()
    ann, bob, eve = await guest(daily.port), await guest(daily.port), await guest(daily.port)
    a = await ann.request("attempt", "welcome", challenge=cid, name="Ann")
    b = await bob.request("attempt", "welcome", challenge=cid, name="Bob")
    code, bobs = a["room"]["code"], b["room"]["code"]
    assert (await ann.move("draw"))["type"] == "ack"
    assert (await ann.request("resign", "ack", seq=ann.seq + 1))["type"] == "ack"
    got = await ann.request("replay", "replay", code=bobs)  # Bob's is still being played
    assert sealed(got, cid), got
    assert (await bob.request("resign", "ack", seq=bob.seq + 1))["type"] == "ack"
    for c in (ann, bob, eve):  # her own; Bob's attempt has ended too; Eve made none
        assert sealed(await c.request("replay", "replay", code=code), cid)
    status, body = await get(daily.port, f"/api/replays/{code}")
    assert (status, body["error"], body["opens_at"]) == (403, "not_yet", final_at(cid))
    to_close(daily.clock, cid, -1_800_000 - 1_000)  # final
    for c in (ann, eve):
        got = await c.request("replay", "replay", code=code)
        assert got["type"] == "replay", got
        replay = got["replay"]
        assert [p["id"] for p in replay["players"]] == ["p1"]
        one = replay["players"][0]
        assert [f["move"] for f in one["frames"]][:2] == ["d", "resign"], one["frames"]
        assert one["record"] and "reveal" in replay["room"]
        assert a["board"]["columns"] == one["initial"]["columns"]
    got = await eve.request("replay", "replay", code=code, player="p1")
    assert got["type"] == "replay" and len(got["replay"]["timeline"]) >= 1
    for fields, reason in (
        ({"code": "ZZZZZZ"}, "no_replay"),
        ({"code": "zz"}, "bad_field"),
        ({"code": code, "player": "p9"}, "no_player"),
        ({"code": code, "format": "record"}, "bad_field"),
    ):
        got = await eve.request("replay", "replay", **fields)
        assert (got["type"], got.get("reason")) == ("error", reason), (fields, got)
    for c in (ann, bob, eve):
        await c.close()


async def test_games_on_a_deal_once_final_show_its_cards_to_anyone(daily) -> None:
    """Once the challenge is final, a practice game on its deal and a practice
    continuation of an attempt (finish it for me) are made, and anyone may watch them and
    race an attempt's ghost; none of them can be made before (the throwaway test above)."""
    cid = day_id()
    ann, bob = await guest(daily.port), await guest(daily.port)
    anon = await Client.open(daily.port)
    attempt = await ann.request("attempt", "welcome", challenge=cid, name="Ann")
    assert (await ann.request("resign", "ack", seq=1))["type"] == "ack"
    to_close(daily.clock, cid, -1_800_000 - 1_000)  # final
    practice = await ann.request("attempt", "welcome", challenge=cid, name="Ann", practice=True)
    assert practice["type"] == "welcome" and practice["room"]["practice"], practice
    # her attempt: finish it for me plays on in a practice continuation
    await ann.send("resume", token=attempt["token"])
    await ann.expect("welcome")
    await ann.send("finish")
    fork = await ann.expect("welcome", timeout=30)
    assert fork["room"].get("parent") == attempt["room"]["code"], fork
    for code in (practice["room"]["code"], fork["room"]["code"]):
        for c in (bob, anon):  # Bob made no attempt; anon said no hello
            got = await c.request("watch", "welcome", code=code)
            assert got["type"] == "welcome" and got["role"] == "spectator", (code, got)
    ghost = await bob.request(
        "ghost", "welcome", code=attempt["room"]["code"], player="p1", name="B"
    )
    assert ghost["type"] == "welcome" and ghost["room"]["ghost"], ghost
    for c in (ann, bob, anon):
        await c.close()


async def test_a_past_daily_nobody_dealt_is_not_dealt_for_practice(daily, redis_url) -> None:
    """A closed daily whose deal no node prepared stays without one: practice of it is
    refused (no_deal), and its archive still shows no commitment, par or reveal (a
    practice request made the server deal it, certify it and publish all three)."""
    cid = day_id(-5)
    gus = await guest(daily.port)
    got = await gus.request("attempt", "welcome", challenge=cid, practice=True, name="Gus")
    assert got["type"] == "error" and got["reason"] == "no_deal", got
    status, page = await get(daily.port, f"/api/challenges/{cid}")
    assert status == 200 and page["phase"] == "closed", page
    deal = page["deals"][0]
    assert deal["commitment"] is None and deal["par"] is None and deal["reveal"] is None
    assert not redis.Redis.from_url(redis_url).exists(f"ch:{cid}:0:deal")
    await gus.close()


async def test_a_guest_who_claims_a_name_after_the_attempt_goes_on_from_it(daily) -> None:
    """A guest's attempt ended, then the guest claimed a name: the account has made its
    attempt (a new one is attempt_made); its replay, the others' attempts and practice
    open for it, as for anyone, once the challenge is final."""
    cid = day_id()
    rival = await guest(daily.port)
    theirs = await rival.request("attempt", "welcome", challenge=cid, name="Rex")
    gus = await guest(daily.port)
    mine = await gus.request("attempt", "welcome", challenge=cid, name="Gus")
    assert (await gus.request("resign", "ack", seq=1))["type"] == "ack"
    room = await gus.expect("room")
    while room["room"]["phase"] != "finished":
        room = await gus.expect("room")
    made = await gus.request(
        "register", "identity", name="Gussie", password="correct horse battery"
    )
    assert made["player"]["guest"] is False, made
    again = await gus.request("attempt", "welcome", challenge=cid, name="Gus")
    assert again["reason"] == "attempt_made", again
    assert sealed(await gus.request("replay", "replay", code=mine["room"]["code"]), cid)
    assert sealed(await gus.request("watch", "welcome", code=theirs["room"]["code"]), cid)
    practice = await gus.request("attempt", "welcome", challenge=cid, practice=True, name="G")
    assert sealed(practice, cid), practice
    to_close(daily.clock, cid, -1_800_000 - 1_000)  # final
    replay = await gus.request("replay", "replay", code=mine["room"]["code"])
    assert replay["type"] == "replay", replay
    watched = await gus.request("watch", "welcome", code=theirs["room"]["code"])
    assert watched["type"] == "welcome" and watched["role"] == "spectator", watched
    practice = await gus.request("attempt", "welcome", challenge=cid, practice=True, name="G")
    assert practice["type"] == "welcome" and practice["room"]["practice"], practice
    for c in (rival, gus):
        await c.close()


async def test_practice_of_a_challenge_not_open_yet_says_so(daily) -> None:
    gus = await guest(daily.port)
    got = await gus.request("attempt", "welcome", challenge=day_id(1), practice=True, name="G")
    assert got["reason"] == "challenge_not_open", got
    await gus.close()


async def test_nodes_set_to_different_time_limits_agree_on_when_a_challenge_is_final(
    redis_url,
) -> None:
    """KR_CHALLENGE_TIME_LIMIT_S says when a challenge is final (its close and then an
    attempt's time limit). Nodes set differently (a rolling change of the setting) keep
    the limit of the first node that read the challenge: a node set to 60 s neither gives
    its own attempts a 60 s limit nor opens anything of the deal 60 s after the close
    while the first node's 30-minute attempts may still be playing."""
    cid = day_id()
    clock = Clock()
    c = ch.parse_daily(cid, (1,), 1800)
    assert c is not None
    clock.shift_to(c.closes - 300_000)  # the close 5 minutes away
    async with (
        running(daily_config(redis_url, challenge_time_limit_s=1800), clock) as first,
        running(daily_config(redis_url, challenge_time_limit_s=60), clock) as later,
    ):
        ann, bob, eve = await guest(first.port), await guest(later.port), await guest(later.port)
        code = (await ann.request("attempt", "welcome", challenge=cid, name="Ann"))["room"]["code"]
        b = await bob.request("attempt", "welcome", challenge=cid, name="Bob")
        assert b["room"]["ends_at"] - b["room"]["start_at"] == 1_800_000, b["room"]
        listed = await eve.request("challenges", "challenges")
        (mine,) = [x for x in listed["challenges"] if x["id"] == cid]
        assert mine["final_at"] == c.final_at() and mine["time_limit"] == 1800, mine
        assert (await ann.request("resign", "ack", seq=1))["type"] == "ack"
        clock.shift_to(c.closes + 120_000)  # past the close by twice the later node's limit
        for kind, fields in (("watch", {"code": code}), ("replay", {"code": code})):
            got = await eve.request(kind, "welcome", "replay", **fields)
            assert sealed(got, cid), (kind, got)
        status, body = await get(later.port, f"/api/replays/{code}")
        assert status == 403 and body["opens_at"] == c.final_at(), body
        clock.shift_to(c.final_at() + 1_000)  # final as the first node fixed it: open
        watched = await eve.request("watch", "welcome", code=code)
        assert watched["type"] == "welcome" and "reveal" in watched["room"], watched
        for client in (ann, bob, eve):
            await client.close()


async def test_nodes_reading_different_schedules_keep_a_challenges_first_window(
    redis_url, tmp_path
) -> None:
    """A scheduled challenge's opening and close say when it is final (its deal and every
    attempt's replay open): a node whose KR_CHALLENGES_FILE gives it a later close (an
    edited file, a node not yet restarted) keeps the window of the first node that read
    it, so no attempt starts on it while the other already shows the results."""
    clock = Clock()
    now = clock.now_ms()
    iso = lambda ms: datetime.fromtimestamp(ms / 1000, UTC).isoformat()  # noqa: E731
    files = []
    for closes in (now + 600_000, now + 7_200_000):  # the first node's, the later node's
        entry = {"id": "weekly-t", "opens": iso(now - 60_000), "closes": iso(closes),
                 "deals": [{"draw": 1}], "time_limit": 60}  # fmt: skip
        files.append(tmp_path / f"{closes}.json")
        files[-1].write_text(json.dumps([entry]))
    first_config, later_config = (daily_config(redis_url, challenges_file=str(f)) for f in files)
    async with running(first_config, clock) as first, running(later_config, clock) as later:
        ann, bob = await guest(first.port), await guest(later.port)
        listed = await ann.request("challenges", "challenges")  # the first to read it
        (mine,) = [x for x in listed["challenges"] if x["id"] == "weekly-t"]
        closes = now + 600_000
        assert mine["closes"] == closes and mine["final_at"] == closes + 60_000, mine
        listed = await bob.request("challenges", "challenges")
        (theirs,) = [x for x in listed["challenges"] if x["id"] == "weekly-t"]
        assert theirs == mine
        clock.shift_to(closes + 1_000)  # closed, as the first node read it
        got = await bob.request("attempt", "welcome", challenge="weekly-t", name="Bob")
        assert (got["type"], got["reason"]) == ("error", "challenge_not_open"), got
        for client in (ann, bob):
            await client.close()


async def test_kr_daily_draws_none_runs_no_daily_and_prepares_no_deal(redis_url) -> None:
    """``KR_DAILY_DRAWS=none`` (the tests' default, make_config): no daily is listed or
    can be attempted, and a node starting prepares no daily deal."""
    store = redis.Redis.from_url(redis_url)
    async with running(make_config(redis_url, daily_draws="none")) as node:
        c = await guest(node.port)
        listed = await c.request("challenges", "challenges")
        assert [x["id"] for x in listed["challenges"] if x["daily"]] == []
        refused = await c.request("attempt", "welcome", challenge=day_id(), name="Ann")
        assert (refused["type"], refused["reason"]) == ("error", "no_challenge"), refused
        await asyncio.sleep(0.5)  # (a daily's deal is stored within this: below)
        assert not store.keys("ch:*")
        await c.close()
    async with running(make_config(redis_url, daily_draws="1")) as node:  # and with one
        c = await guest(node.port)
        listed = await c.request("challenges", "challenges")
        assert day_id() in [x["id"] for x in listed["challenges"] if x["daily"]]
        await until(lambda: bool(store.keys("ch:*:deal")))
        await c.close()
    store.close()
