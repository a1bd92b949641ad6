"""Reconnect with the player token, resume at the last acknowledged move; duplicates."""

from __future__ import annotations

import redis

from klondike_race.service.store import moves_key

from .conftest import Client, start_race, winnable


async def test_reconnect_resumes_at_the_last_acknowledged_move(node, redis_url) -> None:
    ref = winnable(draw=1, index=3)
    a, b = await start_race(node.port, deal={"cards": ref["cards"]})
    token, code = a.token, a.seen[0]["room"]["code"]
    last = None
    for step in ref["line"][:20]:
        last = await a.move(step)
        assert last["type"] == "ack"
    version = last["v"]
    await a.ws.close()  # the connection drops
    for _ in range(3):
        assert (await b.move("draw"))["type"] == "ack"
    # a full resync: welcome with the board at exactly move 20
    c = await Client.open(node.port)
    welcome = await c.request("resume", "welcome", token=token)
    assert welcome["type"] == "welcome" and welcome["player"] == "p1"
    assert welcome["seq"] == 20
    assert welcome["board"] == last["board"]
    assert welcome["progress"]["p2"]["moves"] == 3
    assert "boards" not in welcome  # still racing: no opponent boards
    # the next move continues the game
    assert (await c.move(ref["line"][20], seq=21))["type"] == "ack"
    await c.ws.close()
    # resume with the version last seen: only the missed events follow
    d = await Client.open(node.port)
    resumed = await d.request("resume", "resumed", token=token, since=version)
    assert resumed["type"] == "resumed" and resumed["seq"] == 21
    missed = await d.drain(0.2)
    versions = [m["v"] for m in missed if "v" in m]
    assert versions == list(range(version + 1, version + 1 + len(versions)))
    assert [m["player"] for m in missed if m["type"] == "progress"] == ["p2"] * 3 + ["p1"]
    assert all("board" not in m for m in missed)
    # each with the standings (as they are now: the last is the room's)
    standings = {r["player"]: r["moves"] for r in missed[-1]["leaderboard"]}
    assert standings == {"p1": 21, "p2": 3}, missed[-1]
    assert all(m["leaderboard"] for m in missed if m["type"] == "progress")
    log = redis.Redis.from_url(redis_url).lrange(moves_key(code, "p1"), 0, -1)
    assert len(log) == 21
    for client in (b, d):
        await client.close()


async def test_duplicate_sequence_numbers_are_answered_not_applied(node, redis_url) -> None:
    a, b = await start_race(node.port)
    code = a.seen[0]["room"]["code"]
    first = await a.move("draw", seq=1)
    again = await a.move("draw", seq=1)
    assert again["type"] == "ack" and again["duplicate"] is True
    assert again["board"]["moves"] == 1 and again["board"]["stock"] == first["board"]["stock"]
    # a burst of the same message, as a retrying client might send
    for _ in range(5):
        await a.send("move", seq=2, action="draw")
    answers = [await a.expect("ack", "refused") for _ in range(5)]
    assert [m.get("duplicate", False) for m in answers] == [False] + [True] * 4
    # the same seq from a second connection of the same player (another tab)
    other = await Client.open(node.port)
    await other.request("resume", "welcome", token=a.token)
    dup = await other.move("draw", seq=2)
    assert dup["type"] == "ack" and dup["duplicate"] is True
    assert (await other.move("draw", seq=3))["type"] == "ack"
    # the first connection's game is stale now: its seq 3 is answered as a duplicate
    stale = await a.move("draw", seq=3)
    assert stale["type"] == "ack" and stale["duplicate"] is True
    log = redis.Redis.from_url(redis_url).lrange(moves_key(code, "p1"), 0, -1)
    assert [e.decode().split("@")[0] for e in log] == ["d", "d", "d"]
    for client in (a, b, other):
        await client.close()


async def test_a_seq_another_connection_stored_is_a_duplicate_whatever_the_move(node) -> None:
    """A connection behind its seat's stored moves (another connection of the player's
    moved) has a stored ``seq`` answered as a duplicate with the stored move and the
    current board, whatever move it sends (one its own copy of the game refuses too), and
    its game catches up: its next move is played on the stored one. After the end too."""
    a, b = await start_race(node.port)
    other = await Client.open(node.port)
    await other.request("resume", "welcome", token=a.token)
    sent = [
        {"action": "undo"},  # undo_disabled
        {"from": "col1", "to": "col1"},  # same_pile
        {"action": "recycle"},  # stock_not_empty
    ]
    for seq, fields in enumerate(sent, 1):
        assert (await other.move("draw", seq=seq))["type"] == "ack"
        await a.send("move", seq=seq, **fields)
        answer = await a.expect("ack", "refused")
        assert answer["type"] == "ack" and answer["duplicate"] is True, answer
        assert (answer["seq"], answer["move"], answer["board"]["moves"]) == (seq, "d", seq)
    played = await a.move("draw", seq=4)
    assert played["type"] == "ack" and not played.get("duplicate"), played
    assert played["board"]["moves"] == 4 and played["board"]["waste"]["count"] == 4, played
    # the race ends on the other connection's resignation: a's seq 5 is that, stored
    assert (await other.request("resign", "ack", seq=5))["type"] == "ack"
    assert (await b.request("resign", "ack", seq=1))["type"] == "ack"
    while (await a.expect("room"))["room"]["phase"] != "finished":
        pass
    late = await a.move("draw", seq=5)
    assert late["type"] == "ack" and late["duplicate"] is True and late["move"] == "resign", late
    refused = await a.move("draw", seq=6)
    assert (refused["type"], refused["reason"]) == ("refused", "race_over"), refused
    for client in (a, b, other):
        await client.close()


async def test_a_stored_move_sent_again_after_the_end_is_a_duplicate(node) -> None:
    """A retry of a move that was stored is answered as one (``duplicate``) after the race
    has finished too, not refused with ``race_over``: a ``refused`` says nothing changed,
    and that move did change the game (here: the resignation that ended the race)."""
    a, b = await start_race(node.port)
    assert (await a.move("draw", seq=1))["type"] == "ack"
    assert (await b.request("resign", "ack", seq=1))["type"] == "ack"
    assert (await a.request("resign", "ack", seq=2))["type"] == "ack"
    room = await a.expect("room")
    while room["room"]["phase"] != "finished":
        room = await a.expect("room")
    again = await a.request("resign", "ack", "refused", seq=2)
    assert again["type"] == "ack" and again["duplicate"] is True, again
    assert again["move"] == "resign" and again["board"]["status"] == "resigned"
    again = await a.move("draw", seq=1)
    assert again["type"] == "ack" and again["duplicate"] is True and again["move"] == "d", again
    late = await a.move("draw", seq=3)
    assert (late["type"], late["reason"]) == ("refused", "race_over"), late
    for client in (a, b):
        await client.close()


async def test_a_player_who_sees_boards_resumes_with_every_board(node, redis_url) -> None:
    """Stored events carry no boards: a finished player who missed an opponent's moves
    gets a full welcome with all boards, not the events without them."""
    a, b = await start_race(node.port)
    resigned = await a.request("resign", "ack", seq=1)
    assert resigned["type"] == "ack"
    await a.ws.close()
    for i in (1, 2):
        assert (await b.move("draw", seq=i))["type"] == "ack"
    c = await Client.open(node.port)
    welcome = await c.request("resume", "welcome", token=a.token, since=resigned["v"])
    assert welcome["type"] == "welcome"
    assert welcome["boards"]["p2"]["moves"] == 2 and welcome["boards"]["p2"]["stock"] == 22
    # with nothing missed, a plain resume
    d = await Client.open(node.port)
    resumed = await d.request("resume", "resumed", token=a.token, since=welcome["v"])
    assert resumed["type"] == "resumed"
    for client in (b, c, d):
        await client.close()


async def test_a_resumed_room_event_carries_the_phase_now_not_when_it_was_made(node) -> None:
    host = await Client.open(node.port)
    welcome = await host.request("create", "welcome", name="ann")
    code, token = welcome["room"]["code"], host.token
    guest = await Client.open(node.port)
    await guest.request("join", "welcome", code=code, name="bob")
    await host.send("ready")
    before = (await host.expect("room"))["v"]  # ann is ready; bob joined before
    await host.ws.close()  # ann drops
    await guest.send("ready")  # everyone ready: the countdown (150 ms) begins ...
    countdown = await guest.expect("room")
    while countdown["room"]["start_at"] is None:  # ann's ready came first
        countdown = await guest.expect("room")
    assert countdown["room"]["phase"] == "countdown"
    await guest.expect("start", timeout=5)  # ... and ends: the race is on
    # ann resumes with the version she had: the countdown's room event she missed comes
    # with the room's phase now, so a client that keeps the last phase is not set back
    again = await Client.open(node.port)
    resumed = await again.request("resume", "resumed", token=token, since=before)
    assert resumed["room"]["phase"] == "racing"
    missed = [m for m in await again.drain(0.3) if m["type"] == "room"]
    assert missed[-1]["v"] == countdown["v"]
    assert all(m["room"]["phase"] == "racing" for m in missed)
    assert missed[-1]["room"]["start_at"] == countdown["room"]["start_at"]
    # with the leaderboard and, for a player, the flags, as the room events she missed
    assert all(
        len(m["leaderboard"]) == 2 and "can_hint" in m and "can_finish" in m for m in missed
    ), missed
    for c in (guest, again):
        await c.close()


async def test_a_resignation_keeps_its_sequence_number_across_a_reconnect(node, redis_url) -> None:
    a, b = await start_race(node.port)
    for seq in (1, 2):
        assert (await a.move("draw", seq=seq))["type"] == "ack"
    resigned = await a.request("resign", "ack", seq=3)
    assert resigned["type"] == "ack" and resigned["move"] == "resign"
    token = a.token
    await a.ws.close()
    c = await Client.open(node.port)
    welcome = await c.request("resume", "welcome", token=token)
    assert welcome["seq"] == 3  # two moves and the resignation are stored
    again = await c.request("resign", "ack", seq=3)  # a retry: answered, not applied
    assert again["type"] == "ack" and again["duplicate"] is True and again["move"] == "resign"
    late = await c.move("draw", seq=4)
    assert late["type"] == "refused" and late["reason"] == "game_over"
    code = welcome["room"]["code"]
    assert redis.Redis.from_url(redis_url).llen(moves_key(code, "p1")) == 3
    for client in (b, c):
        await client.close()
