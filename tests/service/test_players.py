"""Players across races: guests by device identity, accounts with a claimed name and a
password, sessions on several devices, sign-out everywhere, rate limits, and a seat
that every device of a player shares. Real Redis, real WebSockets."""

from __future__ import annotations

import io
import logging
import re
import secrets
import time

import pytest
import redis

from klondike_race.service.config import Config
from klondike_race.service.domain import players
from klondike_race.service.domain.errors import ServiceError
from klondike_race.service.logs import configure
from klondike_race.service.node import Node

from .conftest import Client, make_config, start_race

PASSWORD = "correct horse battery"
WIDE_ANN = "\uff21\uff2e\uff2e"  # full-width ANN
WIDE_BEA = "\uff22\uff25\uff21"


def device() -> str:
    return secrets.token_urlsafe(24)  # 32 characters, 192 bits


async def hello(port: int, **fields: str) -> tuple[Client, dict]:
    client = await Client.open(port)
    answer = await client.request("hello", "identity", **fields)
    return client, answer


async def register(port: int, name: str, dev: str | None = None) -> tuple[Client, dict]:
    client = await Client.open(port)
    if dev is not None:
        await client.request("hello", "identity", device=dev)
    answer = await client.request("register", "identity", name=name, password=PASSWORD)
    return client, answer


def test_names_are_one_under_normalisation_and_case() -> None:
    assert players.canonical("Ann") == players.canonical("ann") == players.canonical(WIDE_ANN)
    assert players.canonical("Straße") == players.canonical("STRASSE")
    assert players.display_name("\uff22\uff4f\uff42") == "Bob"  # shown as NFKC
    for bad, why in [
        ("ab", "3 to 24"),
        ("x" * 25, "3 to 24"),
        (" Ann", "spaces"),
        ("An  n", "spaces"),
        ("An\u200bn", "U+200B"),  # zero-width space
        ("An\u202en", "U+202E"),  # right-to-left override
        ("An\x07n", "U+0007"),
        ("An\u2028n", "U+2028"),
        ("An\tn", "U+0009"),
    ]:
        with pytest.raises(ServiceError, match=re.escape(why)) as info:
            players.display_name(bad)
        assert info.value.reason == "bad_name"


async def test_a_guest_is_their_device(node) -> None:
    dev = device()
    a, first = await hello(node.port, device=dev)
    b, again = await hello(node.port, device=dev)
    _, other = await hello(node.port, device=device())
    assert first["player"] == again["player"]
    assert first["player"]["guest"] is True and first["player"]["name"] is None
    assert first["player"]["id"].startswith("g-") and len(first["player"]["id"]) == 34
    assert dev not in first["player"]["id"]  # the device identity stays the client's secret
    assert other["player"]["id"] != first["player"]["id"]
    assert "session" not in first
    for bad in ("", "short", "x" * 31, "a" * 65, "a" * 300, "bad chars ~~~~~~~~~~~~~~~~~~~~~~~~"):
        got = await a.request("hello", "identity", device=bad)
        assert got["type"] == "error" and got["reason"] == "bad_device", (bad, got)
    got = await a.request("hello", "identity")
    assert got["reason"] == "missing_field", got
    # a guest's seat is marked as a guest's, with their key
    welcome = await b.request("create", "welcome", name="Gus")
    (seat,) = welcome["room"]["players"]
    assert seat["who"] == first["player"]["id"] and seat["guest"] is True
    assert seat["name"] == "Gus"
    for c in (a, b):
        await c.close()


async def test_a_name_is_claimed_once_under_any_case_or_width(node) -> None:
    a, made = await register(node.port, "Ann", device())
    assert made["type"] == "identity", made
    assert made["player"]["name"] == "Ann" and made["player"]["guest"] is False
    assert made["player"]["id"].startswith("a-") and len(made["session"]) >= 40
    for variant in ("ann", "ANN", WIDE_ANN):
        _, got = await register(node.port, variant)
        assert got["type"] == "error" and got["reason"] == "name_taken", got
    _, bad = await register(node.port, "A\u200bnn")
    assert bad["reason"] == "bad_name" and "U+200B" in bad["message"], bad
    c = await Client.open(node.port)
    short = await c.request("register", "identity", name="Zed", password="short")
    assert short["reason"] == "bad_password", short
    extra = await c.request("register", "identity", name="Zed", password=PASSWORD, x=1)
    assert extra["reason"] == "bad_field" and "'x'" in extra["message"], extra
    typed = await c.request("register", "identity", name=7, password=PASSWORD)
    assert typed["reason"] == "bad_field", typed
    huge = await c.request("register", "identity", name="Zed", password="p" * 257)
    assert huge["reason"] == "bad_password", huge
    long = await c.request("register", "identity", name="Z" * 65, password=PASSWORD)
    assert long["reason"] == "bad_name", long
    empty = await c.request("register", "identity", name="Zed", password="")
    assert empty["reason"] == "bad_field", empty
    # nothing was made by the refusals: Zed is still free
    _, zed = await register(node.port, "Zed")
    assert zed["type"] == "identity" and zed["player"]["name"] == "Zed", zed
    # an account's seat shows its name, whatever is typed
    welcome = await a.request("create", "welcome", name="Somebody Else")
    (seat,) = welcome["room"]["players"]
    assert seat["name"] == "Ann" and seat["guest"] is False
    assert seat["who"] == made["player"]["id"]
    for cl in (a, c):
        await cl.close()


async def test_sign_in_on_two_devices_and_sign_out_everywhere(node) -> None:
    a, made = await register(node.port, "Bea")
    phone = await Client.open(node.port)
    wrong = await phone.request("sign_in", "identity", name="bea", password="not the one")
    nobody = await phone.request("sign_in", "identity", name="Nobody", password="not the one")
    assert wrong["reason"] == nobody["reason"] == "bad_credentials"
    assert wrong["message"] == nobody["message"] == "wrong name or password"
    signed = await phone.request("sign_in", "identity", name=WIDE_BEA, password=PASSWORD)
    assert signed["player"] == made["player"] and signed["session"] != made["session"]
    # each session says who it is on a new connection
    for session in (made["session"], signed["session"]):
        c, who = await hello(node.port, session=session)
        assert who["player"] == made["player"], who
        await c.close()
    # sign out everywhere: both sessions end; the connection is its guest again
    dev = device()
    await phone.request("hello", "identity", device=dev, session=signed["session"])
    out = await phone.request("sign_out", "identity", everywhere=True)
    assert out["player"]["guest"] is True, out
    for session in (made["session"], signed["session"]):
        c, who = await hello(node.port, session=session)
        assert who["type"] == "error" and who["reason"] == "bad_session", who
        await c.close()
    # a refused hello changes nothing: the connection is still the guest it was
    other = device()
    ended = await phone.request("hello", "identity", device=other, session=signed["session"])
    assert ended["reason"] == "bad_session", ended
    room = await phone.request("create", "welcome", name="Pip")
    (seat,) = room["room"]["players"]
    assert seat["who"] == out["player"]["id"], (seat, out)
    await phone.request("leave", "left")
    again = await phone.request("sign_out", "identity")
    assert again["reason"] == "not_signed_in", again
    for c in (a, phone):
        await c.close()


async def test_changing_the_password_ends_the_other_sessions(node) -> None:
    a, made = await register(node.port, "Cid")
    b = await Client.open(node.port)
    other = await b.request("sign_in", "identity", name="Cid", password=PASSWORD)
    wrong = await a.request(
        "change_password", "identity", password="nope nope", new_password="a new password"
    )
    assert wrong["reason"] == "bad_credentials", wrong
    for new in ("short", "p" * 257):  # the new password's rule, whatever its length
        refused = await a.request(
            "change_password", "identity", password=PASSWORD, new_password=new
        )
        assert refused["reason"] == "bad_password", refused
    changed = await a.request(
        "change_password", "identity", password=PASSWORD, new_password="a new password"
    )
    assert changed["type"] == "identity" and changed["session"] not in (
        made["session"],
        other["session"],
    )
    for session, alive in (
        (made["session"], False),
        (other["session"], False),
        (changed["session"], True),
    ):
        c, who = await hello(node.port, session=session)
        assert (who["type"] == "identity") is alive, who
        await c.close()
    # b, signed in with a session that ended, is told so (it said no hello: nobody now)
    # before it signs in again; its sign-ins' answers are then its own
    told = await b.expect("identity", timeout=8)
    assert told["player"] is None and "session" not in told, told
    old = await b.request("sign_in", "identity", name="Cid", password=PASSWORD)
    assert old["reason"] == "bad_credentials"
    new = await b.request("sign_in", "identity", name="Cid", password="a new password")
    assert new["type"] == "identity", new
    for c in (a, b):
        await c.close()


async def test_sign_ins_are_rate_limited_per_account_and_per_address(redis_url) -> None:
    configure(json=False, level="warning")
    node = Node(make_config(redis_url), redis_url)
    port = await node.start()
    try:
        a, _ = await register(port, "Dee")
        c = await Client.open(port)
        for _ in range(5):
            got = await c.request("sign_in", "identity", name="Dee", password="guess guess")
            assert got["reason"] == "bad_credentials"
        # the sixth is refused before its password is checked, even the right one
        limited = await c.request("sign_in", "identity", name="dee", password=PASSWORD)
        assert limited["reason"] == "rate_limited", limited
        assert 0 < limited["retry_after"] <= 900 and "try again in" in limited["message"]
        # another account from the same address is not limited by Dee's failures
        await register(port, "Eve")
        ok = await c.request("sign_in", "identity", name="Eve", password=PASSWORD)
        assert ok["type"] == "identity", ok
        # the address: 20 sign-ins per 10 minutes, whatever the name
        for i in range(20 - 7):
            got = await c.request("sign_in", "identity", name=f"X{i}xx", password="guess guess")
            assert got["reason"] == "bad_credentials", (i, got)
        limited = await c.request("sign_in", "identity", name="Eve", password=PASSWORD)
        assert limited["reason"] == "rate_limited" and limited["retry_after"] > 0, limited
        # account creation: 5 an hour per address (two made above)
        made = [await register(port, f"New{i}") for i in range(4)]
        answers = [m[1]["type"] if m[1]["type"] != "error" else m[1]["reason"] for m in made]
        assert answers == ["identity"] * 3 + ["rate_limited"], answers
        rds = redis.Redis.from_url(redis_url)
        assert rds.get("acct:name:new3") is None  # the refused one made nothing
        await a.close()
        await c.close()
    finally:
        await node.stop()


async def test_behind_a_balancer_the_limits_count_the_address_it_added(redis_url) -> None:
    """KR_TRUST_FORWARDED: the client's address is the last entry of the last
    X-Forwarded-For line, the one the balancer appended after any the client sent
    (HAProxy adds a line of its own); two lines once closed the connection with 1011."""
    configure(json=False, level="warning")
    node = Node(make_config(redis_url, trust_forwarded=True), redis_url)
    port = await node.start()
    try:
        lines = [("X-Forwarded-For", "1.2.3.4"), ("X-Forwarded-For", "10.0.0.9, 5.6.7.8")]
        c = await Client.open(port, additional_headers=lines)
        assert (await c.request("ping", "pong", id=1))["type"] == "pong"
        got = await c.request("sign_in", "identity", name="Nobody", password="guess guess")
        assert got["reason"] == "bad_credentials", got
        rds = redis.Redis.from_url(redis_url)
        assert rds.exists("rl:signin:addr:5.6.7.8")
        assert not rds.keys("rl:signin:addr:1.2.3.4") and not rds.keys("rl:signin:addr:10.*")
        await c.close()
    finally:
        await node.stop()


async def test_an_unknown_name_costs_the_time_of_a_wrong_password(redis_url) -> None:
    # the default profile: the tests' CHEAPEST hash costs less than a request's own noise
    config = make_config(redis_url, password_profile=Config().password_profile)
    assert config.password_profile != "CHEAPEST"
    node = Node(config, redis_url)
    port = await node.start()
    try:
        await _unknown_name_costs_a_hash(port)
    finally:
        await node.stop()


async def _unknown_name_costs_a_hash(port: int) -> None:
    await register(port, "Fay")
    c = await Client.open(port)
    await c.request("sign_in", "identity", name="Warmup", password="guess guess")
    times: dict[str, list[float]] = {"known": [], "unknown": []}
    for i in range(4):
        for kind, name in (("known", "Fay"), ("unknown", f"Ghost{i}")):
            t0 = time.perf_counter()
            got = await c.request("sign_in", "identity", name=name, password="guess guess")
            times[kind].append(time.perf_counter() - t0)
            assert got["reason"] == "bad_credentials"
    known, unknown = min(times["known"]), min(times["unknown"])
    # both check an argon2 hash: neither answer is several times faster than the other
    assert unknown > known / 3 and known > unknown / 3, times
    await c.close()


async def test_a_password_never_reaches_a_log_or_a_message(redis_url) -> None:
    stream = io.StringIO()
    handler = logging.StreamHandler(stream)
    root = logging.getLogger()
    root.addHandler(handler)
    configure(json=True, level="debug")
    node = Node(make_config(redis_url), redis_url)
    port = await node.start()
    secret = "Sw0rdfish-" + secrets.token_hex(6)
    try:
        c = await Client.open(port)
        await c.request("register", "identity", name="Hal", password=secret)
        await c.request("sign_in", "identity", name="Hal", password=secret + "x")
        await c.request("change_password", "identity", password=secret, new_password=secret + "2")
        await c.request("register", "identity", name="Hal", password=secret)
        await c.send("register", name="Hal", password=secret, junk=True)
        await c.drain(0.3)
        assert not [m for m in c.raw if secret in m]
        rds = redis.Redis.from_url(redis_url)
        for key in rds.scan_iter():
            kind = rds.type(key)
            dump = repr(rds.hgetall(key) if kind == b"hash" else rds.dump(key))
            assert secret not in dump, key
        await c.close()
    finally:
        await node.stop()
        root.removeHandler(handler)
    assert secret not in stream.getvalue()


async def test_every_device_of_a_player_has_one_seat(node) -> None:
    laptop, made = await register(node.port, "Ivy")
    host = await Client.open(node.port)
    welcome = await host.request("create", "welcome", name="host", capacity=3)
    code = welcome["room"]["code"]
    first = await laptop.request("join", "welcome", code=code, name="Ivy")
    phone = await Client.open(node.port)
    await phone.request("hello", "identity", session=made["session"])
    again = await phone.request("join", "welcome", code=code, name="Ivy")
    assert again["player"] == first["player"] and again["token"] != first["token"]
    assert len(again["room"]["players"]) == 2  # no second seat
    # the phone is told about the room on its next hello
    told = await phone.request("hello", "identity", session=made["session"])
    assert {"code": code, "phase": "waiting", "player": first["player"]} in told["rooms"]
    # both devices' tokens resume the same seat
    for token in (first["token"], again["token"]):
        c = await Client.open(node.port)
        got = await c.request("resume", "welcome", token=token)
        assert got["type"] == "welcome" and got["player"] == first["player"], got
        await c.close()
    # the race goes on from either device; moves continue one sequence
    for c in (host, laptop):
        await c.send("ready")
    await laptop.expect("start")
    await phone.expect("start")
    assert (await laptop.move("draw", seq=1))["type"] == "ack"
    second = await phone.move("draw", seq=1)
    assert second["type"] == "ack" and second.get("duplicate"), second
    assert (await phone.move("draw", seq=2))["type"] == "ack"
    # the laptop, one move behind: a gap is checked against the stored sequence, so the
    # number its refusal names is the stored one, and the move sent under it is played
    refused = await laptop.move("draw", seq=4)
    assert refused["type"] == "refused" and refused["reason"] == "bad_seq", refused
    assert refused["message"] == "the next sequence number is 3", refused
    played = await laptop.move("draw", seq=3)
    assert played["type"] == "ack" and not played.get("duplicate"), played
    assert (await laptop.move("draw", seq=4))["type"] == "ack"
    # a retry on the phone, behind: acknowledged as stored, with the current board
    retry = await phone.move("draw", seq=2)
    assert retry["duplicate"] and retry["board"]["moves"] == 4, retry
    # a guest device joining as the same guest gets the same seat back too
    for c in (host, laptop, phone):
        await c.close()


async def test_a_game_ended_on_one_device_ends_it_on_the_others(node) -> None:
    """The seat's other connection learns that the player's game is over (the other
    device resigned): from then on it sees the race as a finished player, the others'
    boards included, as the device that ended it does."""
    laptop, made = await register(node.port, "Ivy")
    host = await Client.open(node.port)
    welcome = await host.request("create", "welcome", name="host", capacity=3)
    code = welcome["room"]["code"]
    await laptop.request("join", "welcome", code=code, name="Ivy")
    phone = await Client.open(node.port)
    await phone.request("hello", "identity", session=made["session"])
    await phone.request("join", "welcome", code=code, name="Ivy")
    for c in (host, laptop):
        await c.send("ready")
    for c in (host, laptop, phone):
        await c.expect("start")
    assert (await laptop.move("draw", seq=1))["type"] == "ack"
    await laptop.send("resign", seq=2)
    assert (await laptop.expect("ack"))["board"]["over"]
    mine = await phone.expect("progress")
    while mine["progress"]["status"] != "resigned":
        mine = await phone.expect("progress")
    assert mine["player"] == laptop.player and mine["board"]["over"], mine
    boards = (await phone.expect("boards"))["boards"]
    assert set(boards) == {host.player, laptop.player}
    assert "columns" in boards[host.player]
    # the host's next move reaches the phone with the host's board, as a finished player's
    assert (await host.move("draw", seq=1))["type"] == "ack"
    theirs = await phone.expect("progress")
    assert theirs["player"] == host.player and "columns" in theirs["board"], theirs
    for c in (host, laptop, phone):
        await c.close()


async def test_a_seated_player_cannot_watch_their_race_from_another_connection(node) -> None:
    """The racer's other connection (the same device's guest here) is refused a `watch`
    of the race (it would show the others' boards live); it may join it, and once the
    race has finished it may watch it like anyone."""
    dev = device()
    racer, _ = await hello(node.port, device=dev)
    created = await racer.request("create", "welcome", name="Ivy")
    code = created["room"]["code"]
    rival = await Client.open(node.port)
    await rival.request("join", "welcome", code=code, name="Rex")
    for c in (racer, rival):
        await c.send("ready")
    for c in (racer, rival):
        await c.expect("start")
    other, _ = await hello(node.port, device=dev)
    refused = await other.request("watch", "welcome", code=code)
    assert refused["type"] == "error" and refused["reason"] == "already_player", refused
    stranger = await Client.open(node.port)
    assert (await stranger.request("watch", "welcome", code=code))["type"] == "welcome"
    seat = await other.request("join", "welcome", code=code, name="Ivy")
    assert seat["player"] == created["player"] and "boards" not in seat, seat
    for c, seq in ((racer, 1), (rival, 1)):
        assert (await c.request("resign", "ack", seq=seq))["type"] == "ack"
    room = await rival.expect("room")
    while room["room"]["phase"] != "finished":
        room = await rival.expect("room")
    late, _ = await hello(node.port, device=dev)
    watched = await late.request("watch", "welcome", code=code)
    assert watched["type"] == "welcome" and watched["room"]["phase"] == "finished", watched
    for c in (racer, rival, other, stranger, late):
        await c.close()


async def test_sign_out_everywhere_reaches_open_connections_on_every_node(node, redis_url) -> None:
    """A connection signed in with a session that another connection ended (sign out
    everywhere, here on another node) is its guest again within a few seconds, told by an
    `identity`: a seat it takes afterwards is not the account's."""
    other = Node(make_config(redis_url), redis_url)
    port = await other.start()
    try:
        laptop, made = await register(node.port, "Dot")
        dev = device()
        phone, _ = await hello(port, device=dev)
        signed = await phone.request("sign_in", "identity", name="Dot", password=PASSWORD)
        assert signed["player"] == made["player"]
        out = await laptop.request("sign_out", "identity", everywhere=True)
        assert out["type"] == "identity", out
        told = await phone.expect("identity", timeout=8)
        assert told["player"]["guest"] is True and told["player"]["id"] != made["player"], told
        room = await phone.request("create", "welcome", name="Pip")
        (seat,) = room["room"]["players"]
        assert seat["who"] == told["player"]["id"], seat
        refused = await phone.request(
            "change_password", "identity", password=PASSWORD, new_password="another password"
        )
        assert refused["reason"] == "not_signed_in", refused
        for c in (laptop, phone):
            await c.close()
    finally:
        await other.stop()


async def test_a_connection_joining_its_own_room_again_keeps_its_one_seat(node) -> None:
    """Without hello (no player key) too: a second join of the room the connection sits
    in gives its own seat back, never another (one connection filled a room with
    orphaned seats, and lost the host's)."""
    host = await Client.open(node.port)
    welcome = await host.request("create", "welcome", name="host", capacity=3)
    code = welcome["room"]["code"]
    for _ in range(2):
        again = await host.request("join", "welcome", code=code, name="host")
        assert again["player"] == welcome["player"] and again["token"] != welcome["token"]
        assert [p["id"] for p in again["room"]["players"]] == [welcome["player"]], again
    guest = await Client.open(node.port)
    assert (await guest.request("join", "welcome", code=code, name="g"))["type"] == "welcome"
    await host.send("start")  # still the host
    assert (await host.expect("room", "error"))["type"] == "room"
    for c in (host, guest):
        await c.close()


async def test_the_last_player_not_ready_leaving_starts_the_countdown(node) -> None:
    host = await Client.open(node.port)
    code = (await host.request("create", "welcome", name="a", capacity=3))["room"]["code"]
    ready, slow = await Client.open(node.port), await Client.open(node.port)
    for c, name in ((ready, "b"), (slow, "c")):
        assert (await c.request("join", "welcome", code=code, name=name))["type"] == "welcome"
    for c in (host, ready):
        await c.send("ready", ready=True)
    while not all(p["ready"] for p in (await host.expect("room"))["room"]["players"][:2]):
        pass
    assert (await slow.request("leave", "left"))["type"] == "left"
    while (await host.expect("room"))["room"]["phase"] != "countdown":
        pass
    await host.expect("start")
    for c in (host, ready, slow):
        await c.close()


async def test_signing_out_everywhere_takes_the_accounts_seats_from_other_devices(
    node, redis_url
) -> None:
    """A device signed in with a session ended elsewhere (a stolen one, say) leaves the
    account's seat it sits in (`left`) and its token resumes it no more; the account,
    signed in again, joins and plays on. A guest's token is no session's: it resumes."""
    other = Node(make_config(redis_url), redis_url)
    port = await other.start()
    try:
        laptop, _ = await register(node.port, "Eve")
        phone, _ = await hello(port, device=device())  # on the other node
        await phone.request("sign_in", "identity", name="Eve", password=PASSWORD)
        rival = await Client.open(node.port)
        code = (await rival.request("create", "welcome", name="Rex"))["room"]["code"]
        seated = await phone.request("join", "welcome", code=code, name="Eve")
        token = seated["token"]
        for c in (rival, phone):
            await c.send("ready", ready=True)
        await phone.expect("start")
        assert (await phone.move("draw", seq=1))["type"] == "ack"
        await laptop.request("sign_out", "identity", everywhere=True)
        assert (await phone.expect("identity", timeout=8))["player"]["guest"] is True
        assert (await phone.expect("left"))["code"] == code
        refused = await phone.request("move", "error", seq=2, action="draw")
        assert refused["reason"] == "not_in_room", refused
        stale = await Client.open(node.port)
        refused = await stale.request("resume", "error", token=token)
        assert refused["reason"] == "bad_token" and "sign in" in refused["message"], refused
        # the account, signed in again, has its seat back and plays on from its moves
        back = await Client.open(node.port)
        await back.request("sign_in", "identity", name="Eve", password=PASSWORD)
        again = await back.request("join", "welcome", code=code, name="Eve")
        assert again["player"] == seated["player"], again
        assert (await back.move("draw", seq=2))["type"] == "ack"
        # the rival, a guest, resumes with its own token as ever
        rival_token = rival.token
        await rival.close()
        rival = await Client.open(port)
        assert (await rival.request("resume", "welcome", token=rival_token))["type"] == "welcome"
        for c in (laptop, phone, stale, back, rival):
            await c.close()
    finally:
        await other.stop()


async def test_signing_out_gives_up_the_seat_this_connection_took_as_the_account(node) -> None:
    """A connection seated as the account in a waiting room that signs out leaves the
    seat as one whose session ended elsewhere does: `left`, the seat given up, the others
    told by a `room` event; its device's guest acts for no seat of the account's."""
    ivy, _ = await register(node.port, "Ivy", device())
    host = await Client.open(node.port)
    code = (await host.request("create", "welcome", name="host", capacity=3))["room"]["code"]
    seated = await ivy.request("join", "welcome", code=code, name="Ivy")
    out = await ivy.request("sign_out", "identity")
    assert out["player"]["guest"] is True, out
    await ivy.send("ready")
    refused = await ivy.expect("error")
    assert (refused["reason"], refused["about"]) == ("not_in_room", "ready"), refused
    left = [m for m in ivy.seen if m["type"] == "left"]
    assert left == [{"type": "left", "code": code}], ivy.seen
    room = await host.expect("room")
    while seated["player"] in [p["id"] for p in room["room"]["players"]]:
        room = await host.expect("room")
    assert [p["id"] for p in room["room"]["players"]] == [host.player], room
    stale = await Client.open(node.port)
    gone = await stale.request("resume", "welcome", token=seated["token"])
    assert gone["reason"] == "bad_token", gone
    for c in (ivy, host, stale):
        await c.close()


async def test_a_session_ended_elsewhere_frees_a_seat_taken_after_the_room_was_opened(
    node,
) -> None:
    """The seat a connection took, signed in, in a room this node had open already (the
    host's) is given up when its session ends elsewhere, as any other (the node's copy of
    the room as it opened had no such seat)."""
    laptop, _ = await register(node.port, "Ivy")
    phone, _ = await hello(node.port, device=device())
    await phone.request("sign_in", "identity", name="Ivy", password=PASSWORD)
    host = await Client.open(node.port)
    code = (await host.request("create", "welcome", name="host", capacity=3))["room"]["code"]
    seated = await phone.request("join", "welcome", code=code, name="Ivy")
    await laptop.request("sign_out", "identity", everywhere=True)
    assert (await phone.expect("identity", timeout=8))["player"]["guest"] is True
    assert (await phone.expect("left"))["code"] == code
    room = await host.expect("room")
    while seated["player"] in [p["id"] for p in room["room"]["players"]]:
        room = await host.expect("room")
    for c in (laptop, phone, host):
        await c.close()


async def test_signing_out_in_a_race_leaves_the_seat_to_the_account(node) -> None:
    """In a race the connection that signs out leaves (`left`) and its moves act for the
    seat no more; the seat stays the account's, whose token taken under the ended session
    resumes nothing: the account, signed in again, joins and plays on."""
    ivy, _ = await register(node.port, "Ivy", device())
    rival = await Client.open(node.port)
    code = (await rival.request("create", "welcome", name="Rex"))["room"]["code"]
    seated = await ivy.request("join", "welcome", code=code, name="Ivy")
    for c in (rival, ivy):
        await c.send("ready")
    await ivy.expect("start")
    assert (await ivy.move("draw", seq=1))["type"] == "ack"
    await ivy.request("sign_out", "identity")
    await ivy.send("move", seq=2, action="draw")
    refused = await ivy.expect("error", "ack")
    assert (refused["type"], refused.get("reason")) == ("error", "not_in_room"), refused
    assert [m["code"] for m in ivy.seen if m["type"] == "left"] == [code], ivy.seen
    stale = await Client.open(node.port)
    gone = await stale.request("resume", "welcome", token=seated["token"])
    assert gone["reason"] == "bad_token" and "sign in" in gone["message"], gone
    back = await Client.open(node.port)
    await back.request("sign_in", "identity", name="Ivy", password=PASSWORD)
    again = await back.request("join", "welcome", code=code, name="Ivy")
    assert again["player"] == seated["player"] and again["seq"] == 1, again
    assert (await back.move("draw", seq=2))["type"] == "ack"
    for c in (ivy, rival, stale, back):
        await c.close()


@pytest.mark.parametrize("switch", ["hello as another device", "register another name"])
async def test_a_connection_that_stops_being_the_account_gives_up_its_seat(
    node, switch: str
) -> None:
    """Found by an outside audit: a connection that took the account's seat and then
    became another identity (a `hello` as another device, a `register`) still moved the
    seat, after a sign-out everywhere too. Becoming someone else is leaving the account:
    `left`, its moves act for the seat no more, and the account plays on elsewhere."""
    ivy, _ = await register(node.port, "Ivy" + secrets.token_hex(2), device())
    rival = await Client.open(node.port)
    code = (await rival.request("create", "welcome", name="Rex"))["room"]["code"]
    await ivy.request("join", "welcome", code=code, name="Ivy")
    for c in (rival, ivy):
        await c.send("ready")
    await ivy.expect("start")
    assert (await ivy.move("draw", seq=1))["type"] == "ack"
    if switch == "hello as another device":
        await ivy.request("hello", "identity", device=device())
    else:
        name = "Other" + secrets.token_hex(2)
        await ivy.request("register", "identity", name=name, password=PASSWORD)
    assert (await ivy.expect("left"))["code"] == code
    await ivy.send("move", seq=2, action="draw")
    refused = await ivy.expect("error", "ack")
    assert (refused["type"], refused.get("reason")) == ("error", "not_in_room"), refused
    for c in (ivy, rival):
        await c.close()


async def test_a_signed_in_connection_that_says_hello_as_its_device_seats_a_guest(
    node,
) -> None:
    """Found by an outside audit: a `hello` with the device alone made the connection the
    device's guest but kept the account's session on it, so the guest's seats were given
    under that session, and their tokens stopped resuming once the account signed out."""
    dev = device()
    ivy, made = await register(node.port, "Ivy" + secrets.token_hex(2), dev)
    back = await ivy.request("hello", "identity", device=dev)
    assert back["player"]["guest"] is True, back
    room = await ivy.request("create", "welcome", name="Pip")
    code, token = room["room"]["code"], room["token"]
    assert room["room"]["players"][0]["who"] == back["player"]["id"]
    await ivy.close()
    # the account signs out everywhere: the guest's seat is no session's, it resumes
    other, _ = await hello(node.port, session=made["session"])
    out = await other.request("sign_out", "identity", everywhere=True)
    assert out["type"] == "identity" and out["player"] is None, out  # (no device: nobody)
    await other.close()
    again = await Client.open(node.port)
    resumed = await again.request("resume", "welcome", token=token)
    assert resumed["type"] == "welcome" and resumed["room"]["code"] == code, resumed
    await again.close()


async def test_a_player_watches_their_finished_race_from_their_seat(node) -> None:
    """``already_player`` is for a race not finished: once it is, the seated connection
    may watch it (as a new connection of the same device may)."""
    a, b = await start_race(node.port)
    code = a.seen[0]["room"]["code"]
    refused = await a.request("watch", "welcome", code=code)
    assert refused["reason"] == "already_player", refused
    for c in (a, b):
        assert (await c.request("resign", "ack", seq=1))["type"] == "ack"
    while (await a.expect("room"))["room"]["phase"] != "finished":
        pass
    watched = await a.request("watch", "welcome", code=code)
    assert watched["type"] == "welcome" and watched["role"] == "spectator", watched
    for c in (a, b):
        await c.close()


async def test_passwords_are_hashed_with_the_configured_argon2_profile(redis_url) -> None:
    """The default, RFC 9106's low-memory argon2id (64 MiB, 3 passes, 4 lanes); the tests'
    nodes use argon2-cffi's cheapest. A hash keeps its parameters: a node of the other
    profile signs the account in."""
    from klondike_race.service.config import Config

    assert Config().password_profile == "RFC_9106_LOW_MEMORY"
    assert Config(password_profile="FAST").problems() == [
        "KR_PASSWORD_PROFILE='FAST': one of RFC_9106_LOW_MEMORY, RFC_9106_HIGH_MEMORY, CHEAPEST"
    ]
    configure(json=False, level="warning")
    rds = redis.Redis.from_url(redis_url)
    made = {}
    for name, profile, params in [
        ("Strong", "RFC_9106_LOW_MEMORY", b"m=65536,t=3,p=4"),
        ("Cheap", "CHEAPEST", b"m=8,t=1,p=1"),
    ]:
        node = Node(make_config(redis_url, password_profile=profile), redis_url)
        port = await node.start()
        try:
            client, made[name] = await register(port, name)
            assert made[name]["type"] == "identity", made[name]
            account = made[name]["player"]["id"].removeprefix("a-")
            assert rds.hget(f"acct:{account}", "hash").startswith(b"$argon2id$v=19$" + params)
            other = "Cheap" if name == "Strong" else "Strong"
            if other in made:  # registered on the other profile's node
                signed = await client.request("sign_in", "identity", name=other, password=PASSWORD)
                assert signed["player"] == made[other]["player"], signed
            await client.close()
        finally:
            await node.stop()
