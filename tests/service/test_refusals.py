"""Every refusal reason over the wire, and that a refusal changes nothing."""

from __future__ import annotations

import asyncio

import pytest
from websockets.exceptions import ConnectionClosed

from klondike_race.engine import NAMES
from klondike_race.engine.deal import column_index
from klondike_race.service.node.rooms import SeatToken

from .conftest import WIRE_FIELDS, Client, start_race


def layout(columns: list[list[str]], stock: list[str]) -> list[str]:
    """The 52-card list of a deal with these columns (bottom first) and stock (first
    turned first)."""
    cards = [""] * 52
    for c, col in enumerate(columns):
        for r, name in enumerate(col):
            cards[column_index(c, r)] = name
    cards[28:] = stock
    assert sorted(cards) == sorted(NAMES)
    return cards


# Stock: all clubs then diamonds A-J, each playable home at once; the tableau has the rest.
STOCK = [r + "c" for r in "A23456789TJQK"] + [r + "d" for r in "A23456789TJ"]
COLUMNS = [
    ["Ah"],
    ["Kh", "2h"],
    ["3h", "4h", "5h"],
    ["6h", "7h", "8h", "9h"],
    ["Th", "Jh", "Qh", "As", "2s"],
    ["3s", "4s", "5s", "6s", "7s", "8s"],
    ["9s", "Ts", "Js", "Qs", "Ks", "Qd", "Kd"],
]
DEAL = {"cards": layout(COLUMNS, STOCK)}


def card(src: str, dst: str, count: int = 1) -> dict:
    return {"from": src, "to": dst, "count": count}


async def refused(client: Client, step, reason: str) -> None:
    before = client.seq
    answer = await client.move(step)
    assert answer["type"] == "refused", (step, answer)
    assert answer["reason"] == reason, (step, answer)
    assert client.seq == before


async def test_every_engine_refusal_reason(node) -> None:
    a, b = await start_race(node.port, deal=DEAL)
    await refused(a, card("col3", "col3"), "same_pile")
    await refused(a, card("waste", "col1"), "empty_source")
    await refused(a, card("col3", "col4", 2), "card_not_available")
    await refused(a, card("col2", "col3"), "illegal_target")
    await refused(a, card("col3", "waste"), "not_supported")
    await refused(a, "recycle", "stock_not_empty")
    await refused(a, "undo", "undo_disabled")
    assert (await a.move(card("col1", "foundation")))["type"] == "ack"
    await refused(a, card("col2", "col1"), "kings_only")
    assert (await a.move("draw"))["type"] == "ack"
    await refused(a, card("waste", "col4", 2), "bad_count")
    await refused(a, card("waste", "found-h"), "illegal_target")
    # Play the whole stock home: then draw and recycle have nothing to work on.
    assert (await a.move(card("waste", "foundation")))["type"] == "ack"
    for _ in range(23):
        assert (await a.move("draw"))["type"] == "ack"
        assert (await a.move(card("waste", "foundation")))["type"] == "ack"
    await refused(a, "draw", "stock_empty")
    await refused(a, "recycle", "waste_empty")
    # A resigned game is over, while the race goes on for the other player.
    assert (await b.request("resign", "ack", seq=1))["type"] == "ack"
    b.seq = 1  # the resignation took seq 1
    await refused(b, "draw", "game_over")
    # Service refusals
    answer = await a.request("move", "refused", seq=a.seq + 1, action="draw", player="p2")
    assert answer["reason"] == "not_your_game"
    answer = await a.request("move", "refused", seq=a.seq + 5, action="draw")
    assert answer["reason"] == "bad_seq"
    for c in (a, b):
        await c.close()


async def test_best_target_is_acknowledged_as_the_move_it_became(node) -> None:
    (a,) = await start_race(node.port, players=1, deal=DEAL)
    for src, move in (("col1", "1>h"), ("col2", "2>h")):  # Aces and Twos go home first
        answer = await a.move(card(src, "best"))
        assert (answer["type"], answer["move"]) == ("ack", move)
    await refused(a, card("col2", "best"), "no_target")  # Kh: a whole column already
    answer = await a.move(card("col7", "best"))  # Kd off the face-down Qd: the empty column
    assert (answer["type"], answer["move"]) == ("ack", "7>1")
    assert answer["board"]["columns"][0]["up"] == ["Kd"]
    await refused(a, card("col7", "best"), "no_target")  # Qd: no black King, no empty column
    answer = await a.move(card("best", "col1"))  # a target only
    assert (answer["type"], answer["reason"]) == ("error", "bad_field")
    await a.close()


async def test_settings_refusals(node) -> None:
    settings = {"passes": 1, "undo": True, "foundation_to_column": False}
    (a,) = await start_race(node.port, players=1, deal=DEAL, settings=settings, private=True)
    await refused(a, "undo", "nothing_to_undo")
    await refused(a, card("found-c", "col1"), "foundation_to_column_forbidden")
    for _ in range(24):
        assert (await a.move("draw"))["type"] == "ack"
    await refused(a, "recycle", "passes_exhausted")
    assert (await a.move("undo"))["type"] == "ack"
    await a.close()


async def test_moves_before_the_start_and_after_the_end(node) -> None:
    host = await Client.open(node.port)
    welcome = await host.request("create", "welcome", name="h", deal=DEAL)
    answer = await host.request("move", "refused", seq=1, action="draw")
    assert answer["reason"] == "not_started"
    guest = await Client.open(node.port)
    await guest.request("join", "welcome", code=welcome["room"]["code"], name="g")
    await host.send("start")
    await guest.expect("start")
    await host.expect("start")
    await host.request("resign", "ack", seq=1)
    await guest.request("resign", "ack", seq=1)
    room = await guest.expect("room")
    while room["room"]["phase"] != "finished":
        room = await guest.expect("room")
    answer = await guest.request("move", "refused", seq=2, action="draw")
    assert answer["reason"] == "race_over"
    for c in (host, guest):
        await c.close()


async def test_room_and_role_errors(node) -> None:
    lone = await Client.open(node.port)
    assert (await lone.request("move", "refused", seq=1, action="draw"))["reason"] == "not_in_room"
    assert (await lone.request("join", "welcome", code="ZZZZZZ", name="x"))["reason"] == "no_room"
    nowhere = str(SeatToken("ZZZZZZ", "p1", "notatoken"))
    for token in (nowhere, "short", "", "x" * 500):  # any string: a token or not
        assert (await lone.request("resume", "welcome", token=token))["reason"] == "bad_token"
    typed = await lone.request("resume", "welcome", token=7)
    assert typed["reason"] == "bad_field", typed
    a, b = await start_race(node.port, deal=DEAL)
    code = a.seen[0]["room"]["code"]
    # a refused watch (or join) of another room changes nothing: still racing here
    assert (await a.request("watch", "welcome", code="ZZZZZZ"))["reason"] == "no_room"
    assert (await a.request("join", "welcome", code="ZZZZZZ", name="x"))["reason"] == "no_room"
    assert (await a.move("draw"))["type"] == "ack"
    assert (await b.expect("progress"))["player"] == "p1"  # and still told of the room
    spectator = await Client.open(node.port)
    assert (await spectator.request("watch", "welcome", code=code))["role"] == "spectator"
    answer = await spectator.request("move", "refused", seq=1, action="draw")
    assert answer["reason"] == "not_a_player"
    answer = await spectator.request("join", "welcome", code=code, name="late")
    assert answer["reason"] == "watched_this_race"
    # a full room, and a room that has started
    c = await Client.open(node.port)
    assert (await c.request("join", "welcome", code=code, name="x"))["reason"] == "not_waiting"
    assert (await a.request("start", "room"))["reason"] == "not_waiting"
    for client in (lone, a, b, spectator, c):
        await client.close()


async def test_explicit_deals_need_a_dev_server(redis_url) -> None:
    from klondike_race.service.node import Node

    from .conftest import make_config

    node = Node(make_config(redis_url, dev=False), redis_url)
    port = await node.start()
    try:
        c = await Client.open(port)
        assert (await c.request("create", "welcome", name="x", deal=DEAL))["reason"] == (
            "deal_not_allowed"
        )
        await c.close()
    finally:
        await node.stop()


async def test_malformed_input_changes_nothing_and_keeps_the_connection(node) -> None:
    (a,) = await start_race(node.port, players=1, deal=DEAL)
    for raw in (
        "{",
        "[]",
        '{"type":"teleport"}',
        '{"type":"move"}',
        b"\x00\x01",
        '{"type":"move","seq":1,"from":"col1","to":"col2","count":-1}',
    ):
        await a.send_raw(raw)
        answer = await a.expect("error")
        assert answer["reason"] in ("bad_json", "unknown_type", "missing_field", "bad_field")
    assert (await a.move("draw"))["seq"] == 1
    await a.close()


async def test_oversized_frame_closes_with_1009(node) -> None:
    c = await Client.open(node.port)
    await c.send_raw('{"type":"ping","id":"' + "x" * 5000 + '"}')
    with pytest.raises(ConnectionClosed) as info:
        await c.recv()
    assert info.value.rcvd is not None and info.value.rcvd.code == 1009


async def test_flood_closes_with_1008(redis_url) -> None:
    from klondike_race.service.node import Node

    from .conftest import make_config

    node = Node(make_config(redis_url, rate=5.0, burst=10.0), redis_url)
    port = await node.start()
    try:
        c = await Client.open(port)
        for _ in range(30):
            try:
                await c.send("ping")
            except ConnectionClosed:
                break
        with pytest.raises(ConnectionClosed) as info:
            while True:
                await asyncio.wait_for(c.ws.recv(), 5)
        assert info.value.rcvd is not None and info.value.rcvd.code == 1008
        # the server is fine
        d = await Client.open(port)
        assert (await d.request("ping", "pong"))["type"] == "pong"
        await d.close()
    finally:
        await node.stop()


def random_message(rng) -> str:
    import json

    types = [
        "create",
        "join",
        "quick",
        "watch",
        "resume",
        "ready",
        "start",
        "move",
        "resign",
        "leave",
        "rooms",
        "ping",
        "nope",
        None,
        3,
    ]
    values = [
        None,
        True,
        0,
        -1,
        1,
        2**40,
        1.5,
        "",
        "x" * 30,
        "col1",
        "waste",
        "foundation",
        "draw",
        [],
        {},
        {"draw": 3},
        {"seed": 1},
        "ABCDEF",
        "ZZZZZZ.p1.abcdefghijkl",
    ]
    keys = [k for k in WIRE_FIELDS if k != "type"]
    message = {k: rng.choice(values) for k in rng.sample(keys, rng.randint(0, 5))}
    kind = rng.choice(types)
    if kind is not None:
        message["type"] = kind
    return json.dumps(message)


async def test_random_input_never_breaks_the_server(node) -> None:
    import random

    rng = random.Random(99)
    a, b = await start_race(node.port)
    for _ in range(300):
        await a.send_raw(random_message(rng))
    await a.send("ping", id="after")
    while True:
        message = await a.recv()
        if message["type"] == "pong" and message["id"] == "after":
            break
    assert (await b.move("draw"))["type"] == "ack"
    fresh = await Client.open(node.port)
    assert (await fresh.request("ping", "pong"))["type"] == "pong"
    for c in (a, b, fresh):
        await c.close()
