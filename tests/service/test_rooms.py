"""Room lifecycle: pure transitions, listing, private rooms, ranking by score."""

from __future__ import annotations

import pytest
import redis

from klondike_race.engine import Settings
from klondike_race.service.domain import room as race
from klondike_race.service.domain.errors import RoomError
from klondike_race.service.domain.options import RoomOptions
from klondike_race.service.domain.room import Room
from klondike_race.service.node.rooms import SeatToken, new_token
from klondike_race.service.store import room_key

from .conftest import Client, start_race


def room(**kw) -> Room:
    return Room("ABCDEF", 0, {"seed": "1"}, "salt", RoomOptions(Settings(), **kw))


def test_a_seat_token_is_its_text_and_nothing_else_is_one() -> None:
    secret, _ = new_token()
    token = SeatToken("K7QW2M", "p2", secret)
    assert str(token) == f"K7QW2M.p2.{secret}" and SeatToken.parse(str(token)) == token
    for text in ("", "short", "K7QW2M.p2", "K7QW2M.p2.", ".p2.x", "K7QW2.p2.x", "K7QW2M.p2.x.y"):
        assert SeatToken.parse(text) is None, text


def test_transitions_return_new_rooms_or_refuse_with_a_reason() -> None:
    r0 = room(capacity=2)
    r1, p1 = race.add_player(r0, "ann", "h1", 10)
    r2, p2 = race.add_player(r1, "bob", "h2", 10)
    assert (p1, p2, r2.host) == ("p1", "p2", "p1") and r0.seats == ()
    with pytest.raises(RoomError) as info:
        race.add_player(r2, "cat", "h3", 10)
    assert info.value.reason == "room_full"
    with pytest.raises(RoomError) as info:
        race.start(r2, 10, 3000, by="p2")
    assert info.value.reason == "not_host"
    r3 = race.set_ready(race.set_ready(r2, "p1", True, 10), "p2", True, 10)
    assert race.all_ready(r3) and not race.all_ready(r2)
    r4 = race.start(r3, 100, 3000)
    assert r4.phase(100) == "countdown" and r4.phase(3100) == "racing"
    for change in (
        lambda r: race.set_ready(r, "p1", False, 200),
        lambda r: race.add_player(r, "x", "h", 200),
        lambda r: race.remove_player(r, "p1", 200),
    ):
        with pytest.raises(RoomError) as info:
            change(r4)
        assert info.value.reason == "not_waiting"
        assert "countdown" in str(info.value), info.value  # at 200 ms: not yet started
    with pytest.raises(RoomError) as info:
        race.set_ready(r4, "p1", False, 4000)
    assert str(info.value) == "the race has already started"
    r5 = race.finish(r4, 5000, "all_over")
    assert r5.phase(5000) == "finished" and race.finish(r5, 6000, "x") is r5
    public = r4.view(4000).to_json()
    assert "reveal" in r5.view(5000).to_json() and "reveal" not in public
    assert "seed" not in str(public) and "salt" not in str(public)


def test_time_limit_and_leaving() -> None:
    r, _ = race.add_player(room(time_limit=60), "ann", "h", 0)
    r = race.start(r, 0, 1000)
    assert r.phase(60_999) == "racing" and r.phase(61_000) == "finished"
    ended = race.finish(r, 70_000, "all_over")
    assert ended.end_reason == "time_limit" and ended.ended == 61_000
    w, _ = race.add_player(room(), "ann", "h", 0)
    w, _ = race.add_player(w, "bob", "h", 0)
    w = race.remove_player(w, "p1", 0)
    assert w.host == "p2" and [s.id for s in w.seats] == ["p2"]
    w = race.remove_player(w, "p2", 0)
    assert w.status == "finished" and w.end_reason == "abandoned"
    assert Room.from_json(w.to_json()) == w


async def test_public_rooms_are_listed_and_private_ones_are_not(node) -> None:
    a = await Client.open(node.port)
    public = await a.request("create", "welcome", name="a", capacity=4)
    b = await Client.open(node.port)
    private = await b.request("create", "welcome", name="b", private=True)
    c = await Client.open(node.port)
    listed = await c.request("rooms", "rooms")
    codes = [r["code"] for r in listed["rooms"]]
    assert public["room"]["code"] in codes and private["room"]["code"] not in codes
    # a private room is joined by its code
    assert (await c.request("join", "welcome", code=private["room"]["code"], name="c"))[
        "type"
    ] == "welcome"
    assert (await c.request("leave", "left"))["type"] == "left"
    for x in (a, b, c):
        await x.close()


async def test_ranking_by_score_and_the_redis_sorted_set(node, redis_url) -> None:
    from .test_refusals import DEAL

    a, b = await start_race(node.port, deal=DEAL, settings={"scoring": "vegas"}, rank_by="score")
    assert (await a.move({"from": "col1", "to": "foundation", "count": 1}))["type"] == "ack"
    ack = await b.move("draw")
    board = ack["leaderboard"]
    assert [(r["player"], r["score"], r["rank"]) for r in board] == [("p1", -47, 1), ("p2", -52, 2)]
    code = a.seen[0]["room"]["code"]
    rds = redis.Redis.from_url(redis_url)
    ranked = rds.zrange(room_key(code) + ":rank", 0, -1, withscores=True)
    assert [m.decode() for m, _ in ranked] == ["p1", "p2"]
    assert all(score == int(score) for _, score in ranked)
    for x in (a, b):
        await x.close()


async def test_a_player_without_a_move_stands_at_the_starting_score(node) -> None:
    """Vegas starts every player at -52: one who has not moved yet is ranked (and shown)
    at -52, not above a player who has put a card home (-47)."""
    from .test_refusals import DEAL

    a, b = await start_race(node.port, deal=DEAL, settings={"scoring": "vegas"}, rank_by="score")
    ack = await a.move({"from": "col1", "to": "foundation", "count": 1})
    assert ack["board"]["score"] == -47
    board = ack["leaderboard"]
    assert [(r["player"], r["score"], r["rank"]) for r in board] == [("p1", -47, 1), ("p2", -52, 2)]
    for x in (a, b):
        await x.close()
    c, d = await start_race(node.port, deal=DEAL, settings={"scoring": "standard"})
    ack = await c.move("draw")  # standard scoring starts at 0
    assert [r["score"] for r in ack["leaderboard"]] == [0, 0]
    for x in (c, d):
        await x.close()


def test_the_server_copies_every_progress_field_of_the_engine() -> None:
    from klondike_race.engine import Game, progress
    from klondike_race.service.domain.progress import PROGRESS_KEYS

    assert set(progress(Game.from_seed(1))) == set(PROGRESS_KEYS)


def test_the_starting_score_is_the_engines() -> None:
    from klondike_race.engine import Game, progress
    from klondike_race.service.domain.progress import initial_progress

    for scoring in ("none", "standard", "vegas"):
        game = Game.from_seed(1, Settings(scoring=scoring))
        assert initial_progress(scoring)["score"] == progress(game)["score"], scoring
