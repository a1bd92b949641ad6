"""The protocol read strictly, as docs/protocol.md states it: HTTP methods and odd paths,
frames that are not JSON text, dev deals, a flood, a message that changes nothing."""

from __future__ import annotations

import pytest
import redis
from websockets.exceptions import ConnectionClosed

from klondike_race.service.node import Node
from klondike_race.service.store import moves_key

from .conftest import Client, http, make_config, start_race, winnable


async def test_http_answers_get_and_head_only_and_odd_paths_with_404(node) -> None:
    status, headers, body = await http(node.port, "GET", "/healthz")
    assert (status, body) == (200, b"ok\n")
    status, headers, body = await http(node.port, "HEAD", "/healthz")
    assert status == 200 and body == b"" and headers["Content-Length"] == "3"
    for method in ("POST", "PUT", "DELETE", "TRACE", "PATCH"):
        status, headers, _ = await http(node.port, method, "/")
        assert status == 405 and headers["Allow"] == "GET, HEAD", method
    odd = ("/" + "b" * 256, "/js/" + "x" * 300 + ".js", "/%00", "/missing.js")
    apis_misspelt = ("/api/arenasX", "/api/challengesx", "/api/players", "/api/replays")
    for path in (*odd, *apis_misspelt):
        status, _, body = await http(node.port, "GET", path)
        assert (status, body) == (404, b"not found\n"), path
    assert (await http(node.port, "GET", "/healthz"))[0] == 200  # nothing broke


async def test_a_binary_frame_is_read_as_text_and_invalid_utf8_text_closes_with_1007(
    node,
) -> None:
    c = await Client.open(node.port)
    await c.ws.send(b'{"type":"ping","id":1}')  # JSON in a binary frame: read as text
    assert (await c.expect("error", "pong"))["id"] == 1
    await c.ws.send(b'{"type":"ping","id":"\xff"}')  # not UTF-8 in a binary frame
    answer = await c.expect("error", "pong")
    assert answer["type"] == "error" and answer["reason"] == "bad_json"
    assert (await c.request("ping", "pong", id=2))["id"] == 2  # the connection goes on
    await c.ws.send(b'{"type":"ping","id":"\xff"}', text=True)
    with pytest.raises(ConnectionClosed) as info:
        await c.recv()
    assert info.value.rcvd is not None and info.value.rcvd.code == 1007


async def test_dev_deals_are_read_strictly(node) -> None:
    ref = winnable(draw=1)
    c = await Client.open(node.port)
    upper = [card[0] + card[1].upper() for card in ref["cards"]]
    for deal in ({"cards": upper}, {"seed": 42}):
        answer = await c.request("create", "welcome", name="ann", deal=deal)
        assert answer["type"] == "error" and answer["reason"] == "bad_field", deal
    answer = await c.request("create", "welcome", name="ann", deal={"seed": "42"})
    assert answer["type"] == "welcome"
    await c.close()


async def test_a_ready_that_changes_nothing_gets_no_answer(node) -> None:
    host = await Client.open(node.port)
    welcome = await host.request("create", "welcome", name="ann")
    await host.send("ready")
    assert (await host.expect("room"))["room"]["players"][0]["ready"] is True
    await host.send("ready")  # already ready: nothing changes, nothing is sent
    assert [m for m in await host.drain(0.3) if m["type"] in ("room", "error")] == []
    assert (await host.request("ping", "pong"))["type"] == "pong"
    assert welcome["room"]["code"]
    await host.close()


async def test_a_flood_is_closed_after_every_message_before_it_was_answered(redis_url) -> None:
    node = Node(make_config(redis_url, rate=1.0, burst=12.0), redis_url)
    port = await node.start()
    try:
        a, b = await start_race(port)  # create/join, ready, then moves
        code = a.seen[0]["room"]["code"]
        sent = a.seq
        for seq in range(sent + 1, sent + 21):  # far more than the credit left
            await a.ws.send(f'{{"type":"move","seq":{seq},"action":"draw"}}')
        answers = []
        with pytest.raises(ConnectionClosed) as info:
            while True:
                message = await a.recv()
                if message["type"] in ("ack", "refused"):
                    answers.append(message)
        assert info.value.rcvd is not None and info.value.rcvd.code == 1008
        stored = redis.Redis.from_url(redis_url).llen(moves_key(code, "p1"))
        acked = [m["seq"] for m in answers if m["type"] == "ack"]
        # every stored move was acknowledged before the close, in order
        assert stored > 0 and acked == list(range(sent + 1, sent + 1 + stored))
        await b.close()
    finally:
        await node.stop()


async def test_messages_are_answered_one_at_a_time_in_the_order_sent(node) -> None:
    """However a message arrives (whole or fragmented, text or binary) and whatever it
    waits for (a move waits for its group commit), the answers come in the order the
    messages were sent; more messages than the connection may leave waiting (16) are
    read once the ones before are answered."""
    host, _ = await start_race(node.port)
    ws = host.ws
    ping = b'{"type":"ping","id":%d}'
    await ws.send(['{"type":"ping",', '"id":1}'])  # fragmented: websockets' own queue
    await ws.send('{"type":"move","seq":1,"action":"draw"}')
    for i in range(2, 22):
        await ws.send((ping % i).decode())
    await ws.send(ping % 22)  # binary
    await ws.send('{"type":"move","seq":2,"action":"draw"}')
    await ws.send(['{"type":"ping"', ',"id":23}'])
    answers = []
    while len(answers) < 25:
        message = await host.recv()
        if message["type"] in ("pong", "ack", "refused", "error"):
            answers.append((message["type"], message.get("id", message.get("seq"))))
    assert answers == [
        ("pong", 1),
        ("ack", 1),
        *(("pong", i) for i in range(2, 23)),
        ("ack", 2),
        ("pong", 23),
    ]
    assert (await host.request("ping", "pong", id=24))["id"] == 24  # reading again


async def test_a_player_field_is_a_seat_id_and_seats_go_past_p8(node) -> None:
    """Seat ids are p1, p2, … in order of joining (a seat given up while waiting is not
    used again), so a room of 2 may seat p10; a ``player`` field that is no seat id at all
    is ``bad_field``, a seat id the room has not is ``no_player``."""
    host = await Client.open(node.port)
    welcome = await host.request("create", "welcome", name="ann", deal={"seed": "42"})
    code = welcome["room"]["code"]
    for _ in range(9):  # p2 … p10: each joins, and all but the last leave again
        guest = await Client.open(node.port)
        seat = await guest.request("join", "welcome", code=code, name="bob")
        if seat["player"] != "p10":
            assert (await guest.request("leave", "left"))["type"] == "left"
            await guest.close()
    assert seat["player"] == "p10"
    for c in (host, guest):
        await c.send("ready")
    for c in (host, guest):
        await c.expect("start")
    move = await guest.request("move", "ack", "refused", seq=1, action="draw", player="x")
    assert (move["type"], move["reason"]) == ("error", "bad_field"), move
    for c in (host, guest):
        assert (await c.request("resign", "ack", seq=1))["type"] == "ack"
    room = await host.expect("room")
    while room["room"]["phase"] != "finished":
        room = await host.expect("room")
    c = await Client.open(node.port)
    for fields, reason in (
        ({"player": "x"}, "bad_field"),
        ({"player": "p0"}, "bad_field"),
        ({"player": "p3"}, "no_player"),
    ):
        got = await c.request("replay", "replay", code=code, **fields)
        assert (got["type"], got.get("reason")) == ("error", reason), (fields, got)
        got = await c.request("ghost", "welcome", code=code, name="gus", **fields)
        assert (got["type"], got.get("reason")) == ("error", reason), (fields, got)
    got = await c.request("replay", "replay", code=code, player="p10")
    assert [p["id"] for p in got["replay"]["players"]] == ["p10"], got
    got = await c.request("ghost", "welcome", code=code, player="p10", name="gus")
    assert got["type"] == "welcome" and got["room"]["ghost_of"]["player"] == "p10", got
    for x in (host, guest, c):
        await x.close()
