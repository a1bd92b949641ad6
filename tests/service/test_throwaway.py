"""Every route of docs/protocol.md tried by throwaway identities (a new guest costs a
browser profile): while a rated race runs and a daily challenge is open, nothing any of
them gets names a card, but of their own attempt's own board; each request that would
show one is refused with its specific reason, and changes nothing.

The identities: ``nosy``, a new guest that never plays; ``throwaway``, a new guest that
makes its own attempt at the daily, resigns it, and then asks for everything of the deal.
Compare test_who_sees_what.py (what each role of a race sees) and test_challenges.py
(the sealed deal, role by role)."""

from __future__ import annotations

import secrets
from typing import Any

import orjson

from klondike_race.service.node.rooms import SeatToken

from .conftest import Client, day_id, guest, http
from .test_who_sees_what import cards_in


def others_cards(messages: list[dict], own: str | None = None) -> set[str]:
    """Every card the messages name outside the receiver's own board (seat ``own``)."""
    return set().union(*(cards_in(m, own) for m in messages))


async def ask(c: Client, type: str, **fields: Any) -> dict:
    """The answer to one request: its first reply or error."""
    await c.send(type, **fields)
    while True:
        m = await c.recv(timeout=10)
        if m["type"] not in ("progress", "spectators", "room", "leaderboard_changes", "played"):
            return m


async def test_throwaway_identities_get_no_card_by_any_route(daily) -> None:
    port = daily.port
    cid = day_id()
    # a rated race under way, moves made
    p1, p2 = await guest(port), await guest(port)
    code = (await p1.request("create", "welcome", name="one", private=False))["room"]["code"]
    assert (await p2.request("join", "welcome", code=code, name="two"))["type"] == "welcome"
    for c in (p1, p2):
        await c.send("ready")
    for c in (p1, p2):
        await c.expect("start", timeout=10)
    for c in (p1, p2):
        assert (await c.move("draw"))["type"] == "ack"
    # a daily attempt under way
    dana = await guest(port)
    attempt = await dana.request("attempt", "welcome", challenge=cid, name="Dana")
    dana_room = attempt["room"]["code"]
    assert (await dana.move("draw", seq=1))["type"] == "ack"
    dana_who = attempt["room"]["players"][0]["who"]

    nosy = await guest(port)
    guessed = str(SeatToken(code, "p1", secrets.token_urlsafe(18)))  # a seat's, its secret not
    refused: dict[str, str] = {}
    for label, type, fields in [
        ("join the race", "join", {"code": code, "name": "n"}),
        ("ghost of the race", "ghost", {"code": code, "player": "p1", "name": "n"}),
        ("replay of the race", "replay", {"code": code}),
        ("watch the attempt", "watch", {"code": dana_room}),
        ("join the attempt", "join", {"code": dana_room, "name": "n"}),
        ("ghost of the attempt", "ghost", {"code": dana_room, "player": "p1", "name": "n"}),
        ("replay of the attempt", "replay", {"code": dana_room}),
        ("practice of the deal", "attempt", {"challenge": cid, "practice": True, "name": "n"}),
        ("resume a racer's seat", "resume", {"token": guessed}),
        ("hint", "hint", {}),
        ("finish", "finish", {}),
        ("rematch", "rematch", {}),
        ("a move for a racer", "move", {"seq": 2, "action": "draw", "player": "p1"}),
    ]:
        answer = await ask(nosy, type, **fields)
        assert answer["type"] == "error", (label, answer)
        refused[label] = answer["reason"]
    assert refused == {
        "join the race": "not_waiting",
        "ghost of the race": "not_finished",
        "replay of the race": "not_finished",
        "watch the attempt": "not_yet",
        "join the attempt": "not_waiting",
        "ghost of the attempt": "not_yet",
        "replay of the attempt": "not_yet",
        "practice of the deal": "not_yet",
        "resume a racer's seat": "bad_token",
        "hint": "not_in_room",
        "finish": "not_in_room",
        "rematch": "not_in_room",
        "a move for a racer": "not_in_room",
    }
    # what a throwaway may have: lists, the leaderboard, the race as a spectator (outlines)
    for type, fields in [
        ("rooms", {}),
        ("challenges", {}),
        ("watch_board", {"challenge": cid}),
        ("watch", {"code": code}),
    ]:
        answer = await ask(nosy, type, **fields)
        assert answer["type"] != "error", (type, answer)
    assert (await p1.move("draw", seq=2))["type"] == "ack"  # an update while it watches
    await nosy.expect("progress", timeout=10)
    await nosy.drain(0.2)
    assert not others_cards(nosy.seen), "a card reached an identity with no game"

    # one that plays its own attempt, resigns, and asks for everything of the deal
    throwaway = await guest(port)
    mine = await throwaway.request("attempt", "welcome", challenge=cid, name="T")
    assert mine["type"] == "welcome" and mine["room"]["code"] != dana_room
    assert (await throwaway.move("draw", seq=1))["type"] == "ack"
    await throwaway.send("resign", seq=2)
    while (await throwaway.expect("room", timeout=10))["room"]["phase"] != "finished":
        pass
    after: dict[str, str] = {}
    for label, type, fields in [
        ("finish it for me", "finish", {}),
        ("hint", "hint", {}),
        ("practice of the deal", "attempt", {"challenge": cid, "practice": True, "name": "T"}),
        ("watch the other attempt", "watch", {"code": dana_room}),
        ("replay of the other attempt", "replay", {"code": dana_room}),
        ("replay of its own attempt", "replay", {"code": mine["room"]["code"]}),
        ("ghost of the other attempt", "ghost", {"code": dana_room, "player": "p1", "name": "T"}),
    ]:
        answer = await ask(throwaway, type, **fields)
        assert answer["type"] == "error", (label, answer)
        after[label] = answer["reason"]
        if answer["reason"] == "not_yet":
            assert isinstance(answer["opens_at"], int), answer
    assert after == {
        "finish it for me": "not_yet",
        "hint": "not_in_practice",
        "practice of the deal": "not_yet",
        "watch the other attempt": "not_yet",
        "replay of the other attempt": "not_yet",
        "replay of its own attempt": "not_yet",
        "ghost of the other attempt": "not_yet",
    }
    own = mine["player"]  # its attempt's results show its own board, under its seat
    leaks = [m["type"] for m in throwaway.seen if others_cards([m], own)]
    assert not leaks, leaks

    # and over HTTP: no replay, no reveal, no par, nothing of a board
    for path, status in [
        (f"/api/replays/{dana_room}", 403),
        (f"/api/replays/{mine['room']['code']}", 403),
        (f"/api/replays/{code}", 409),
        (f"/api/challenges/{cid}", 200),
        (f"/api/players/{dana_who}", 200),  # a guest's profile, from her first seat
    ]:
        got, _, body = await http(port, "GET", path)
        assert got == status, (path, got, body)
        assert not others_cards([{"type": "http", "body": orjson.loads(body)}]), path
        if path.startswith("/api/challenges"):
            assert b'"reveal":null' in body and b'"par":null' in body
        if path.startswith("/api/players"):  # her name, nothing of her running attempt
            shown = orjson.loads(body)
            assert shown["name"] == "Dana" and shown["daily"]["days"] == [], shown
            assert dana_room.encode() not in body, body
    # nothing of it changed anything: the race and the attempt go on
    assert (await p2.move("draw", seq=2))["type"] == "ack"
    assert (await dana.move("draw", seq=2))["type"] == "ack"
    for c in (p1, p2, dana, nosy, throwaway):
        await c.close()
