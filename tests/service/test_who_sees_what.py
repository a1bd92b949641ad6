"""Who sees what of a race, over every room kind, role and phase, through real
connections (docs/rules.md, "Who sees what"): on identical deals a card of anyone's board
is a card of everyone's, so

- a racer whose game is on sees no board but their own (any connection of their seat);
- in rated play (public rooms, quick matches, rated private rooms) spectators, and
  racers whose own game is over, see outlines while the race runs: no card at all;
- in unrated rooms (the owner's choice, live by default) they see every board;
- once the race is over everyone sees every board (the results).

Each room kind plays one race with every role in it: the racers (p1 with a second
connection of the same seat), a guest and an account watching from the waiting room, a
guest arriving mid-race and one arriving after p1's game ended. What each connection got
is checked as a whole, for cards of boards not its own: the cells are (kind, role, phase).
Daily attempts have their own table in test_challenges.py (nothing of the deal before
the challenge is final)."""

from __future__ import annotations

import secrets
from collections.abc import AsyncIterator
from dataclasses import dataclass, field
from typing import Any

import pytest

from klondike_race.service.node import Node

from .conftest import Client, make_config, running, winnable
from .test_hidden import card_strings

OWN_BOARD = ("start", "ack", "welcome", "resumed", "resync")  # "board": the receiver's own


def others_cards(messages: list[dict]) -> set[str]:
    """Every card named in ``messages`` outside the receiver's own board."""
    out: set[str] = set()
    for m in messages:
        rest = {k: v for k, v in m.items() if not (k == "board" and m["type"] in OWN_BOARD)}
        out.update(card_strings(rest))
    return out


def outlines_only(messages: list[dict]) -> bool:
    """Whether every board of another player shown is an outline (and at least one is)."""
    shown = []
    for m in messages:
        if m["type"] not in OWN_BOARD and isinstance(m.get("board"), dict):
            shown.append(m["board"])
        shown += list((m.get("boards") or {}).values())
    return bool(shown) and all(b.get("outline") for b in shown)


async def hello(port: int) -> Client:
    c = await Client.open(port)
    await c.request("hello", "identity", device=secrets.token_urlsafe(24))
    return c


@dataclass
class Race:
    """One race of a kind with every role connected; ``cut``: how many messages each
    connection had when the race ended (what it got while it ran)."""

    code: str
    roles: dict[str, Client] = field(default_factory=dict)
    cut: dict[str, int] = field(default_factory=dict)


async def seat_two(port: int, kind: str) -> tuple[str, Client, Client, str]:
    """Two racers of ``kind`` in a room, in its waiting room (quick matches start on
    their own): (code, p1, p2, p1's device)."""
    device = secrets.token_urlsafe(24)
    p1 = await Client.open(port)
    await p1.request("hello", "identity", device=device)
    p2 = await hello(port)
    if kind == "quick":
        await p1.send("quick", name="one")
        await p2.send("quick", name="two")
        w1, w2 = await p1.expect("welcome"), await p2.expect("welcome")
        assert w1["room"]["code"] == w2["room"]["code"]
        return w1["room"]["code"], p1, p2, device
    create: dict[str, Any] = {"name": "one", "capacity": 2}
    if kind == "public":
        create["private"] = False
    elif kind == "rated_private":
        create.update(private=True, rated=True)
    else:
        create["private"] = True
    welcome = await p1.request("create", "welcome", **create)
    assert welcome["type"] == "welcome", welcome
    code = welcome["room"]["code"]
    assert (await p2.request("join", "welcome", code=code, name="two"))["type"] == "welcome"
    return code, p1, p2, device


async def play(port: int, kind: str) -> Race:
    code, p1, p2, device = await seat_two(port, kind)
    race = Race(code)
    # p1's second connection: the same device, its own seat back
    again = await Client.open(port)
    await again.request("hello", "identity", device=device)
    assert (await again.request("join", "welcome", code=code, name="one"))["type"] == "welcome"
    early = await hello(port)
    assert (await early.request("watch", "welcome", code=code))["type"] == "welcome"
    account = await Client.open(port)
    name = "w" + secrets.token_hex(4)
    got = await account.request("register", "identity", name=name, password="correct horse")
    assert got["player"]["guest"] is False, got
    assert (await account.request("watch", "welcome", code=code))["type"] == "welcome"
    if kind != "quick":
        for c in (p1, p2):
            await c.send("ready")
    for c in (p1, p2, again):
        await c.expect("start", timeout=10)
    assert (await p1.move("draw"))["type"] == "ack"
    assert (await p2.move("draw"))["type"] == "ack"
    late = await hello(port)
    assert (await late.request("watch", "welcome", code=code))["type"] == "welcome"
    await p1.send("resign", seq=p1.seq + 1)
    assert (await p1.expect("ack"))["type"] == "ack"
    await p1.expect("boards")  # p1's game is over: the others' boards (or outlines)
    after = await hello(port)
    assert (await after.request("watch", "welcome", code=code))["type"] == "welcome"
    assert (await p2.move("draw", seq=2))["type"] == "ack"
    race.roles = {
        "racer": p2,
        "finished racer": p1,
        "finished racer's second connection": again,
        "guest from the waiting room": early,
        "account from the waiting room": account,
        "guest arriving mid-race": late,
        "guest arriving after a racer finished": after,
    }
    for c in race.roles.values():
        await c.drain(0.15)
    race.cut = {role: len(c.seen) for role, c in race.roles.items()}
    await p2.send("resign", seq=3)
    for c in race.roles.values():
        room = await c.expect("room", timeout=10)
        while room["room"]["phase"] != "finished":
            room = await c.expect("room", timeout=10)
    return race


RATED = ("public", "quick", "rated_private")
KINDS = (*RATED, "unrated_private")
SPECTATORS = (
    "guest from the waiting room",
    "account from the waiting room",
    "guest arriving mid-race",
    "guest arriving after a racer finished",
)
OVER = ("finished racer", "finished racer's second connection")


def expected(kind: str, role: str) -> str:
    """What a role sees of the others' boards while the race runs: "none" (a racer whose
    game is on), "outlines" (rated play) or "boards"."""
    if role == "racer":
        return "none"
    return "outlines" if kind in RATED else "boards"


@pytest.fixture
async def slow_start(redis_url: str) -> AsyncIterator[Node]:
    """A node with a 1.5 s countdown: a quick match counts down as soon as it is made,
    and its watchers (and a racer's second connection) must arrive before its start,
    however busy the machine is."""
    async with running(make_config(redis_url, countdown_ms=1500)) as node:
        yield node


@pytest.mark.parametrize("kind", KINDS)
async def test_what_each_role_sees_while_the_race_runs_and_after(slow_start, kind: str) -> None:
    race = await play(slow_start.port, kind)
    for role, client in race.roles.items():
        running = client.seen[: race.cut[role]]
        seen = others_cards(running)
        want = expected(kind, role)
        cell = (kind, role)
        if want == "none":
            assert not seen, cell
            assert not [m for m in running if m.get("boards")], cell
        elif want == "outlines":
            assert not seen, cell
            assert outlines_only(running), cell
        else:
            assert seen, cell  # every board, cards and all
        # once the race is over: every board, for everyone
        results = [m for m in client.seen[race.cut[role] :] if m["type"] == "room"]
        assert results and results[-1]["room"]["phase"] == "finished", cell
        assert others_cards([results[-1]]), cell
    for client in race.roles.values():
        await client.close()


@pytest.mark.parametrize("kind", KINDS)
async def test_nothing_of_a_board_before_the_start(slow_start, kind: str) -> None:
    """In the waiting room and the countdown there are no boards: a spectator's welcome
    and the room events carry no card, in any kind of room."""
    node = slow_start
    code, p1, p2, _ = await seat_two(node.port, kind)
    watcher = await hello(node.port)
    welcome = await watcher.request("watch", "welcome", code=code)
    assert welcome["type"] == "welcome" and welcome["room"]["phase"] in ("waiting", "countdown")
    if kind != "quick":
        await p1.send("ready")
        await p2.send("ready")
    room = await watcher.expect("room", "start", timeout=10)
    before: list[dict] = [welcome]
    while room["type"] != "start":
        before.append(room)
        room = await watcher.expect("room", "start", timeout=10)
    assert not others_cards(before)
    assert not [m for m in before if "boards" in m or "board" in m]
    start = room  # the first boards come with the start
    assert start["boards"] and (outlines_only([start]) == (kind in RATED))
    for c in (p1, p2, watcher):
        await c.close()


async def solo_room(port: int, kind: str, device: str) -> tuple[Client, dict]:
    """A practice game, or a race against the ghost of a recorded one (its deal the same
    for both): the player's connection, said hello as ``device``, and its welcome."""
    me = await Client.open(port)
    await me.request("hello", "identity", device=device)
    if kind == "practice":
        welcome = await me.request("create", "welcome", name="solo", practice=True)
        return me, welcome
    ref = winnable(draw=1)
    rec = await hello(port)
    made = await rec.request(
        "create", "welcome", name="Rec", practice=True, deal={"cards": ref["cards"]}
    )
    for seq, step in enumerate(ref["line"][:25], start=1):
        assert (await rec.move(step, seq=seq))["type"] == "ack"
    assert (await rec.request("resign", "ack", seq=26))["type"] == "ack"
    while (await rec.expect("room", timeout=10))["room"]["phase"] != "finished":
        pass  # a ghost is of a finished game
    await rec.close()
    code = made["room"]["code"]
    welcome = await me.request("ghost", "welcome", code=code, player="p1", name="solo")
    return me, welcome


@pytest.mark.parametrize("kind", ["practice", "ghost"])
async def test_a_single_seat_game_shows_its_racer_nothing_but_their_own(node, kind: str) -> None:
    """Practice and ghost races are unrated: their spectators see every board. The
    player (either connection of the seat) sees no board but their own while playing:
    racing a ghost, the ghost's board is the recorded game's, on the same deal."""
    device = secrets.token_urlsafe(24)
    me, welcome = await solo_room(node.port, kind, device)
    assert welcome["type"] == "welcome", welcome
    code = welcome["room"]["code"]
    assert welcome["room"]["spectator_view"] == "live"
    again = await Client.open(node.port)
    await again.request("hello", "identity", device=device)
    assert (await again.request("join", "welcome", code=code, name="solo"))["type"] == "welcome"
    watcher = await hello(node.port)
    assert (await watcher.request("watch", "welcome", code=code))["type"] == "welcome"
    assert (await me.move("draw"))["type"] == "ack"
    if kind == "ghost":  # the ghost's moves come at their recorded times
        await me.expect("progress", timeout=10)
    await watcher.expect("progress", timeout=10)
    for c in (me, again, watcher):
        await c.drain(0.15)
    assert not others_cards(me.seen) and not others_cards(again.seen), kind
    assert others_cards(watcher.seen), kind  # every board, cards and all
    for c in (me, again, watcher):
        await c.close()
