"""Replays over HTTP (``GET /api/replays/{CODE}``), game records that ``verify`` replays,
and ``klondike-race replay``."""

from __future__ import annotations

import itertools
import json
import random
from typing import Any

import orjson
import pytest

from klondike_race.cli import main
from klondike_race.engine import Deal, Game, Move, Settings, board_view
from klondike_race.service.clock import Clock
from klondike_race.service.domain import replay as rp
from klondike_race.service.domain.options import RoomOptions
from klondike_race.service.node.replays import parse_query

from .conftest import Client, http, start_race, winnable


async def get_json(port: int, path: str) -> tuple[int, Any]:
    status, _, body = await http(port, "GET", path)
    return status, orjson.loads(body)


async def play_randomly(
    c: Client, game: Game, moves: int, rng: random.Random, at_least_once: tuple[str, ...] = ()
) -> None:
    """``moves`` legal moves chosen at random on ``game`` (the player's deal, mirrored
    here), each acknowledged by the server; moves whose text starts with one of
    ``at_least_once`` are preferred once each when legal (undo, recycle)."""
    wanted = list(at_least_once)
    for _ in range(moves):
        if game.over:
            return
        legal = game.legal_moves()
        if not legal:
            return
        preferred = [m for m in legal if any(str(m).startswith(w) for w in wanted)]
        move = preferred[0] if preferred else rng.choice(legal)
        if preferred:
            wanted = [w for w in wanted if not str(move).startswith(w)]
        wire: Any = move.to_wire()
        answer = await c.move(wire.get("action") or wire)
        assert answer["type"] == "ack", answer
        game.play(move)


async def finished_room(c: Client) -> dict:
    room = await c.expect("room")
    while room["room"]["phase"] != "finished":
        room = await c.expect("room")
    return room


def boards_of(player: dict) -> list[dict]:
    """A player's board after each frame, the initial board first (forward application)."""
    boards = [player["initial"]]
    for frame in player["frames"]:
        boards.append(rp.apply_delta(boards[-1], frame["board"]))
    return boards


SETTINGS = [
    {"draw": 1},
    {"draw": 3},
    {"draw": 3, "passes": 1},
    {"draw": 1, "passes": 3, "undo": True},
    {"draw": 3, "undo": True, "scoring": "vegas"},
]


@pytest.mark.parametrize(
    "settings", SETTINGS, ids=lambda s: ",".join(f"{k}={v}" for k, v in s.items())
)
async def test_a_replay_reaches_the_results_boards(node, settings: dict, tmp_path) -> None:
    # (undo is off in rated races: these rooms are private)
    clients = await start_race(node.port, deal={"seed": "42"}, settings=settings, private=True)
    code = clients[0].seen[0]["room"]["code"]
    rng = random.Random(str(settings))
    games = [Game(Deal.from_seed("42"), Settings.from_dict(settings)) for _ in clients]
    for _ in range(3):  # interleaved, so the timeline mixes the players
        for c, game in zip(clients, games, strict=True):
            await play_randomly(c, game, 15, rng, ("u", "r"))
    # running: refused, and nothing of the race is in the answer
    status, body = await get_json(node.port, f"/api/replays/{code}")
    assert (status, body["error"]) == (409, "not_finished")
    assert set(body) == {"error", "message"}
    for c in clients:
        await c.send("resign", seq=c.seq + 1)
    results = await finished_room(clients[0])
    status, replay = await get_json(node.port, f"/api/replays/{code}")
    assert status == 200, replay
    assert replay["room"]["phase"] == "finished" and replay["room"]["reveal"]["seed"] == "42"
    assert [p["id"] for p in replay["players"]] == ["p1", "p2"]
    for player in replay["players"]:
        boards = boards_of(player)
        # the final frame is the results' board, exactly
        assert boards[-1] == results["boards"][player["id"]]
        assert boards[-1]["status"] == "resigned"
        # each board is the engine's board after that many moves (stepping back is exact)
        record = player["record"]
        game = Game(Deal.from_seed("42"), Settings.from_dict(settings))
        assert boards[0] == board_view(game, 0)
        for i, move in enumerate(record["moves"]):
            game.play(Move.parse(move), record["times"][i])
            assert boards[i + 1] == board_view(game, record["times"][i])
        assert [f["move"] for f in player["frames"]] == [*record["moves"], "resign"]
        assert record["ended"] == "resigned"
        # and the record replays offline
        path = tmp_path / f"{player['id']}.json"
        path.write_text(json.dumps(record))
        assert main(["verify", str(path)]) == 0
    # the timeline holds every frame once, in race-time order
    frames = {p["id"]: p["frames"] for p in replay["players"]}
    assert sorted(replay["timeline"]) == sorted(pid for pid, f in frames.items() for _ in f)
    seen = {pid: 0 for pid in frames}
    times = []
    for pid in replay["timeline"]:
        times.append(frames[pid][seen[pid]]["at_ms"])
        seen[pid] += 1
    assert times == sorted(times)
    t = replay["timeline"]
    assert sum(a != b for a, b in itertools.pairwise(t)) >= 3  # turns interleave
    for c in clients:
        await c.close()


async def test_one_players_record_is_the_notation_and_verifies(node, tmp_path, capsys) -> None:
    ref = winnable(1)
    clients = await start_race(node.port, deal={"cards": ref["cards"]})
    code = clients[0].seen[0]["room"]["code"]
    for step in ref["line"]:
        assert (await clients[0].move(step))["type"] == "ack"
    await clients[1].send("resign", seq=1)
    results = await finished_room(clients[1])
    status, record = await get_json(node.port, f"/api/replays/{code}?player=p1&format=record")
    assert status == 200, record
    assert set(record) == {"format", "deal", "settings", "moves", "times"}
    assert record["format"] == "klondike-race/record/1"
    assert record["deal"] == {"cards": ref["cards"]}
    assert len(record["moves"]) == len(ref["line"]) == len(record["times"])
    path = tmp_path / "won.json"
    path.write_text(json.dumps(record))
    capsys.readouterr()
    assert main(["verify", str(path)]) == 0
    out = capsys.readouterr().out
    assert '"foundation": 52' in out and '"status": "won"' in out
    # the loser's record: no moves, resigned
    status, other = await get_json(node.port, f"/api/replays/{code}?player=p2&format=record")
    assert status == 200 and other["moves"] == [] and other["ended"] == "resigned"
    # one player's replay
    status, one = await get_json(node.port, f"/api/replays/{code}?player=p1")
    assert status == 200 and [p["id"] for p in one["players"]] == ["p1"]
    assert boards_of(one["players"][0])[-1] == results["boards"]["p1"]
    assert boards_of(one["players"][0])[-1]["foundation"] == 52
    # klondike-race replay: against Redis, move by move; and of a record file
    capsys.readouterr()
    assert main(["replay", code, "--redis-url", node.config.redis_url or ""]) == 0
    lines = capsys.readouterr().out.splitlines()
    moves = [x for x in lines if x[:1] == " " and x.split()[1:2] in (["p1"], ["p2"])]
    assert len(moves) == len(ref["line"]) + 1  # p2's resignation too
    assert moves[-1].split()[1] == "p2" and "resign" in moves[-1]
    last_p1 = [line for line in moves if line.split()[1] == "p1"][-1]
    assert last_p1.split()[-1] == "52"
    assert main(["replay", str(path)]) == 0
    lines = capsys.readouterr().out.splitlines()
    assert sum(1 for line in lines if line[:1] == " ") == len(ref["line"])
    for c in clients:
        await c.close()


async def test_hostile_requests_get_their_errors(node) -> None:
    clients = await start_race(node.port, deal={"seed": "42"})
    code = clients[0].seen[0]["room"]["code"]
    for c in clients:
        await c.send("resign", seq=1)
    await finished_room(clients[0])
    cases = [
        ("/api/replays/ZZZZZZ", 404, "no_replay"),
        ("/api/replays/abcdef", 400, "bad_code"),
        ("/api/replays/ABCDE", 400, "bad_code"),
        ("/api/replays/ABCDEFG", 400, "bad_code"),
        ("/api/replays/ABCDE0", 400, "bad_code"),  # 0 is no code letter
        ("/api/replays/", 400, "bad_code"),
        (f"/api/replays/{code}/x", 400, "bad_code"),
        ("/api/replays/%41BCDEF", 400, "bad_code"),
        (f"/api/replays/{code}?player=" + "p" * 5000, 400, "bad_request"),
        (f"/api/replays/{code}?evil=1", 400, "bad_request"),
        (f"/api/replays/{code}?player=p1&player=p2", 400, "bad_request"),
        (f"/api/replays/{code}?format=pgn", 400, "bad_request"),
        (f"/api/replays/{code}?format=record", 400, "bad_request"),
        (f"/api/replays/{code}?player", 400, "bad_request"),
        (f"/api/replays/{code}?player=%ff", 400, "bad_request"),
        (f"/api/replays/{code}?player=%ZZ", 400, "bad_request"),  # no percent-encoding
        (f"/api/replays/{code}?player=p%3", 400, "bad_request"),
        (f"/api/replays/{code}?player=p1%", 400, "bad_request"),
        (f"/api/replays/{code}?&&&&&&", 400, "bad_request"),
        (f"/api/replays/{code}?player=p9&format=record", 404, "no_player"),
        (f"/api/replays/{code}?player=host", 404, "no_player"),
    ]
    for path, want_status, want_error in cases:
        status, headers, body = await http(node.port, "GET", path)
        assert (status, orjson.loads(body)["error"]) == (want_status, want_error), path
        assert headers["Content-Type"] == "application/json"
    status, _, body = await http(node.port, "GET", f"/api/replays/{code}?format=replay")
    assert status == 200
    status, _, body = await http(node.port, "HEAD", f"/api/replays/{code}")
    assert status == 200 and body == b""
    # the replay page (profiles' and archives' links): to the client's viewer
    status, headers, _ = await http(node.port, "GET", f"/replay/{code}")
    assert (status, headers["Location"]) == (302, f"/#/replay/{code}")
    status, headers, _ = await http(node.port, "GET", f"/replay/{code}/12")
    assert (status, headers["Location"]) == (302, f"/#/replay/{code}/12")
    assert (await http(node.port, "GET", "/replay/nope"))[0] == 404
    for c in clients:
        await c.close()


def test_query_parsing() -> None:
    assert parse_query("") == {}
    assert parse_query("player=p1&format=record") == {"player": "p1", "format": "record"}
    assert isinstance(parse_query("a=1&b=2&c=3"), str)
    assert isinstance(parse_query("x" * 65), str)


async def test_a_challenge_attempt_waits_for_the_close(node) -> None:
    """An attempt's replay (and its continuation's) is refused with not_yet until its
    challenge closes (the attempt's reveal_at), then served with the reveal."""
    now = Clock().now_ms()
    codes = {}
    for name, reveal_at in (("open", now + 3_600_000), ("closed", now - 1)):
        room, _, _ = await node.rooms.create_seated(
            "ann",
            RoomOptions(capacity=1, private=True, time_limit=1800),
            {"seed": "7"},
            challenge=f"test-{name}/0",
            reveal_at=reveal_at,
        )
        await node.rooms.finish(room.code, "all_over")
        codes[name] = room.code
    status, body = await get_json(node.port, f"/api/replays/{codes['open']}")
    assert (status, body["error"]) == (403, "not_yet")
    status, body = await get_json(
        node.port, f"/api/replays/{codes['open']}?player=p1&format=record"
    )
    assert (status, body["error"]) == (403, "not_yet")
    status, body = await get_json(node.port, f"/api/replays/{codes['closed']}")
    assert status == 200 and body["room"]["reveal"]["seed"] == "7"
    # a practice continuation of the open attempt: the same rule
    child, _, _ = await node.rooms.create_seated(
        "ann", RoomOptions(practice=True, private=True), {"seed": "7"}, parent=codes["open"]
    )
    await node.rooms.finish(child.code, "all_over")
    status, body = await get_json(node.port, f"/api/replays/{child.code}")
    assert (status, body["error"]) == (403, "not_yet")
    # attempts' keys are kept for KR_KEEP_DAILY_S, races' for KR_KEEP_FINISHED_S
    ttl = node.redis.ttl
    assert await ttl(f"room:{{{codes['open']}}}") > node.config.keep_finished_s
    assert 0 < await ttl(f"room:{{{codes['open']}}}:events") <= node.config.keep_finished_s
    assert await ttl(f"room:{{{child.code}}}") <= node.config.keep_finished_s


def test_delta_round_trips() -> None:
    game = Game(Deal.from_seed("9"), Settings.from_dict({"draw": 3}))
    before = board_view(game, 0)
    for move in ["d", "d", "d"]:
        game.play(move)
        after = board_view(game, 0)
        change = rp.delta(before, after)
        assert rp.apply_delta(before, change) == after
        assert "columns" not in change or len(change["columns"]) < 7
        before = after


async def test_a_race_past_its_time_limit_is_replayed_once_its_results_are_made(node) -> None:
    """Past the limit and not yet ended (nobody connected: the sweeper ends it within a
    sweep): not_finished, not a replay of games still "playing" with no end frame."""
    room, _, _ = await node.rooms.create_seated(
        "ann", RoomOptions(practice=True, private=True, time_limit=10), {"seed": "7"}
    )
    assert room.start_at is not None
    past = room.start_at + 11_000
    refused = rp.refusal(room, None, past)
    assert refused is not None and refused[0] == 409, refused
    assert refused[1].reason == "not_finished" and "ending" in str(refused[1]), refused
    await node.rooms.finish(room.code, "time_limit")
    status, body = await get_json(node.port, f"/api/replays/{room.code}")
    assert status == 200 and body["room"]["end_reason"] == "time_limit", body
    (record,) = body["players"]
    assert record["record"]["ended"] == "out_of_time", record
    assert record["final"]["status"] == "out_of_time", record
