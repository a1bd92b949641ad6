"""The arena's sprint through real connections (docs/rules.md, "Arena tournaments",
"Sprint"; docs/protocol.md, "Arenas"): chosen before one's first move and shown to the
room, each refusal changing nothing, a sprinter's own time limit (moves after it
refused, an idle sprinter's game out of time at it on whichever node holds the room,
once, and by the sweeper when they are away), the race finishing once every game is
over, and an outright sprint win's point, counted once."""

from __future__ import annotations

import asyncio
from pathlib import Path
from typing import Any

import orjson
import pytest

from klondike_race.cli import main
from klondike_race.service.domain import arena as A

from .conftest import Client, guest, http, running, start_race, winnable
from .test_arenas import race_of, running_arena, until_you


def reference_deals(*nodes: Any) -> dict:
    """The arena races of ``nodes`` deal a reference deal (its analysis at the race's end
    is decided at once: a node's stop waits for it), returned."""
    ref = winnable(draw=1)

    async def reference(_arena: object) -> tuple[dict, bool]:  # a known win
        return {"cards": ref["cards"]}, True

    for node in nodes:
        node.arenas.deal = reference
    return ref


async def arena_race(node: Any, arena_id: str, *clients: Client) -> list[dict]:
    """``clients`` join the arena, are paired into one race and pause (so that they are
    not paired again once it has finished): each one's welcome."""
    for i, c in enumerate(clients):
        await c.request("join_arena", "arena", arena=arena_id, name=f"P{i}")
    races = [await race_of(c) for c in clients]
    assert len({r["room"]["code"] for r in races}) == 1
    for c in clients:
        await c.send("pause_arena", arena=arena_id)
        await until_you(c, "paused")
    return races


async def refused(client: Client, reason: str) -> dict:
    got = await client.request("sprint")  # (a sprint taken is answered by a room event)
    assert got["type"] == "error" and got["reason"] == reason, got
    assert got["about"] == "sprint", got
    return got


async def room_event(client: Client, code: str, done: Any) -> dict:
    """The next ``room`` event of room ``code`` whose room ``done`` accepts."""
    while True:
        got = await client.expect("room")
        if got["room"]["code"] == code and done(got["room"]):
            return got


def sprints(room: dict) -> dict[str, bool]:
    """Each seat's ``sprint`` (absent: false)."""
    return {p["id"]: p.get("sprint", False) for p in room["players"]}


async def progress_of(client: Client, player: str, status: str) -> dict:
    """The next ``progress`` event in which ``player``'s game has ``status``."""
    while True:
        got = await client.expect("progress")
        if got["player"] == player and got["progress"]["status"] == status:
            return got


async def test_a_sprint_is_shown_to_the_room_its_refusals_change_nothing_and_a_win_earns_its_point(
    tmp_path: Path, redis_url: str
) -> None:
    clock, arena_id, config = running_arena(tmp_path, redis_url)
    async with running(config, clock) as node:
        ref = reference_deals(node)
        ann, bob = await guest(node.port), await guest(node.port)
        race = (await arena_race(node, arena_id, ann, bob))[0]
        code, start_at = race["room"]["code"], race["room"]["start_at"]
        # a spectator sprints nothing
        watcher = await Client.open(node.port)
        await watcher.request("watch", "welcome", code=code)
        await refused(watcher, "not_a_player")
        # Ann sprints: every seat of the room sees it (her own answer is the room event)
        await ann.send("sprint")
        told = [await room_event(c, code, lambda r: sprints(r)[ann.player]) for c in (ann, bob)]
        assert sprints(told[1]["room"]) == {ann.player: True, bob.player: False}, told[1]
        rev = (await node.store.rooms.load(code))[1]  # type: ignore[index]
        # her other device: once is enough
        again = await Client.open(node.port)
        assert (await again.request("resume", "resumed", "welcome", token=ann.token))["player"]
        await refused(again, "already_sprinting")
        # Ann wins with the time she has; Bob has moved: too late for him, then past half
        # the time limit too late anyway
        for seq, step in enumerate(ref["line"], start=1):
            assert (await ann.move(step, seq=seq))["type"] == "ack"
        assert (await bob.move("draw"))["type"] == "ack"
        await refused(bob, "already_moved")
        clock.shift_to(start_at + A.sprint_limit(60) * 1000 + 500)
        await refused(bob, "too_late")
        assert (await node.store.rooms.load(code))[1] == rev  # type: ignore[index]
        assert len(await node.store.log.read(code, bob.player)) == 1  # Bob's one move only
        # Bob resigns: the race is over, and counted once: 2 points and the sprint's 1
        assert (await bob.request("resign", "ack", seq=2))["type"] == "ack"
        await room_event(bob, code, lambda r: r["phase"] == "finished")
        await refused(ann, "race_over")
        for _ in range(50):
            standings = {e.name: e.standing for e in await node.store.arenas.entrants(arena_id)}
            if all(s.races for s in standings.values()):
                break
            await asyncio.sleep(0.1)
        got = {n: (s.points, s.wins, s.sprints) for n, s in standings.items()}
        assert got == {"P0": (3, 1, 1), "P1": (0, 0, 0)}, got
        finished = await node.rooms.load(code)
        assert await node.arenas.count(finished) is False  # once
        back = await ann.request("join_arena", "arena", arena=arena_id, name="P0")
        assert (back["you"]["points"], back["you"]["sprints"]) == (3, 1), back["you"]
        assert [r["points"] for r in back["table"]] == [3, 0]
        page = orjson.loads((await http(node.port, "GET", f"/api/arenas/{arena_id}"))[2])
        (listed,) = page["races"]
        assert [(p["name"], p["points"]) for p in listed["players"]] == [("P0", 3), ("P1", 0)]
        # not an arena race
        host, other = await start_race(node.port)
        await refused(host, "not_arena_race")
        for c in (ann, bob, watcher, again, host, other):
            await c.close()


async def test_an_idle_sprinters_game_ends_at_their_own_limit_once_on_any_node(
    tmp_path: Path, redis_url: str, capsys: pytest.CaptureFixture[str]
) -> None:
    """Ann sprints and plays one move; past her own limit her moves are refused while
    Bob races on. The node that opens the room then (a spectator on another node) ends
    her game out of time at her limit, once: the first node's players see it, and a
    time-out asked again writes nothing. The race finishes when Bob is done; its replay
    and Ann's record read the time-out."""
    clock, arena_id, config = running_arena(tmp_path, redis_url)
    async with running(config, clock) as one, running(config, clock) as two:
        reference_deals(one, two)
        ann, bob = await guest(one.port), await guest(one.port)
        race = (await arena_race(one, arena_id, ann, bob))[0]
        code, start_at = race["room"]["code"], race["room"]["start_at"]
        await ann.send("sprint")
        await room_event(bob, code, lambda r: sprints(r)[ann.player])
        assert (await ann.move("draw"))["type"] == "ack"
        clock.shift_to(start_at + 30_500)  # past Ann's 30 s, within the race's 60
        late = await ann.move("draw")
        assert (late["type"], late["reason"]) == ("refused", "race_over"), late
        assert "sprint" in late["message"], late
        assert (await bob.move("draw"))["type"] == "ack"
        watcher = await Client.open(two.port)
        seen = await watcher.request("watch", "welcome", code=code)
        for c in (ann, bob, watcher):  # (the watcher's welcome may show it already)
            if c is watcher and seen["progress"][ann.player]["status"] == "out_of_time":
                continue
            out = await progress_of(c, ann.player, "out_of_time")
            assert out["progress"]["moves"] == 1, out
        log = await one.store.log.read(code, ann.player)
        assert log[1:] == ["timeout@30000"], log
        await one.race.time_out(code, ann.player)  # the first node's timer, later: nothing more
        assert await one.store.log.read(code, ann.player) == log
        assert (await ann.move("draw"))["reason"] == "race_over"
        assert (await one.rooms.load(code)).status == "started"  # Bob races on
        assert (await bob.request("resign", "ack", seq=2))["type"] == "ack"
        done = await room_event(ann, code, lambda r: r["phase"] == "finished")
        assert done["room"]["end_reason"] == "all_over", done["room"]
        assert {r["player"]: r["status"] for r in done["leaderboard"]} == {
            ann.player: "out_of_time",
            bob.player: "resigned",
        }
        status, _, body = await http(two.port, "GET", f"/api/replays/{code}?player={ann.player}")
        replay = orjson.loads(body)["players"][0]
        assert status == 200 and replay["frames"][-1]["move"] == "timeout", replay["frames"]
        assert (
            replay["frames"][-1]["at_ms"] == 30_000 and replay["final"]["status"] == "out_of_time"
        )
        # the command line reads it: verify the record, print the room from Redis
        record = tmp_path / "ann.json"
        record.write_text(orjson.dumps(replay["record"]).decode())
        assert replay["record"]["ended"] == "out_of_time"
        assert main(["verify", str(record)]) == 0
        final = capsys.readouterr().out.splitlines()[-1]
        assert orjson.loads(final.removeprefix("final: "))["status"] == "out_of_time"
        assert main(["replay", code, "--redis-url", redis_url]) == 0
        printed = capsys.readouterr().out
        lines = [line.split() for line in printed.splitlines()]
        assert ["0:30.0", ann.player, "P0", "timeout", "0"] in lines, printed
        assert f"# {ann.player} P0: out_of_time, 0 home, 1 moves" in printed, printed
        for c in (ann, bob, watcher):
            await c.close()


async def test_an_away_sprinter_is_out_of_time_not_resigned(tmp_path: Path, redis_url: str) -> None:
    """The sweeper ends the games of players away once the others' have ended: a
    sprinter past their own limit ends out of time at it (a race everyone resigned
    would give nobody points)."""
    clock, arena_id, config = running_arena(tmp_path, redis_url, sweep_interval_s=1, away_s=2)
    async with running(config, clock) as node:
        reference_deals(node)
        ann, bob = await guest(node.port), await guest(node.port)
        race = (await arena_race(node, arena_id, ann, bob))[0]
        code, start_at = race["room"]["code"], race["room"]["start_at"]
        await ann.send("sprint")
        await room_event(bob, code, lambda r: sprints(r)[ann.player])
        assert (await bob.request("resign", "ack", seq=1))["type"] == "ack"
        for c in (ann, bob):
            await c.close()
        clock.shift_to(start_at + 40_000)  # Ann away, past her 30 s
        await node.sweep()
        room = await node.rooms.load(code)
        assert (room.status, room.end_reason) == ("finished", "all_over")
        assert await node.store.log.read(code, ann.player) == ["timeout@30000"]
        _, progress, _ = await node.store.rooms.snapshot(code)
        assert progress[ann.player]["status"] == "out_of_time", progress
