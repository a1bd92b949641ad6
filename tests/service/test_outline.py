"""Spectators of rated play (public rooms, quick match, rated private rooms, challenge
attempts: test_challenges.py) see outlines while the race runs, boards at the end; an
operator may show them the boards behind the race instead (KR_RATED_SPECTATORS); unrated
rooms keep their owner's choice. docs/rules.md, "Who sees what"."""

from __future__ import annotations

from typing import Any

from klondike_race.service.node import Node

from .conftest import Client, make_config, start_race, winnable
from .test_hidden import card_strings


def shown_boards(messages: list[dict]) -> list[dict]:
    """Every board (or outline) in ``messages``: in a ``board`` of another player's
    progress, or in ``boards``."""
    out = [m["board"] for m in messages if m["type"] == "progress" and "board" in m]
    return out + [b for m in messages for b in (m.get("boards") or {}).values()]


async def finish_race(*players: Client) -> dict:
    """Every player resigns; the results as the first player's ``room`` event has them."""
    for c in players:
        assert (await c.request("resign", "ack", seq=c.seq + 1))["type"] == "ack"
    room = await players[0].expect("room")
    while room["room"]["phase"] != "finished":
        room = await players[0].expect("room")
    return room


async def until_finished(c: Client) -> dict:
    room = await c.expect("room")
    while room["room"]["phase"] != "finished":
        room = await c.expect("room")
    return room


async def test_a_spectator_of_a_rated_race_sees_outlines_then_the_boards(node) -> None:
    line = winnable(index=1)  # its first move puts a card home, from a column
    deal = {"cards": line["cards"]}
    a, b, c = await start_race(node.port, players=3, deal=deal)
    code = a.seen[0]["room"]["code"]
    assert a.seen[0]["room"]["rated"] and a.seen[0]["room"]["spectator_view"] == "outline"
    lobby = await Client.open(node.port)
    listed = await lobby.request("rooms", "rooms")
    assert [r["spectator_view"] for r in listed["rooms"] if r["code"] == code] == ["outline"]
    watcher = await Client.open(node.port)
    welcome = await watcher.request("watch", "welcome", code=code)
    assert welcome["room"]["spectator_view"] == "outline"
    assert welcome["room"]["spectator_delay"] == 0
    for player in welcome["boards"].values():  # pile sizes, no card
        assert player["outline"] is True and "foundations" not in player
        assert player["columns"] == [{"down": n} for n in range(7)]  # no face-up count
        assert player["stock"] == 24 and player["waste"] == {"count": 0}
    # a's reference line: draws, column moves and cards home, each seen as an outline
    for step in line["line"][:12]:
        ack = await a.move(step)
        assert ack["type"] == "ack"
    assert ack["board"]["foundation"] > 0
    # c resigns: a finished player sees the others' outlines too (no second screen)
    assert (await c.request("resign", "ack", seq=1))["type"] == "ack"
    got = await c.expect("boards")
    assert all(board["outline"] for board in got["boards"].values())
    assert got["boards"]["p1"]["moves"] == 12
    assert got["boards"]["p1"]["foundation"] == ack["board"]["foundation"]
    ack = await a.move("draw")
    assert ack["type"] == "ack"
    update = await c.expect("progress")
    assert update["board"]["outline"] and update["board"]["moves"] == 13
    seen = await watcher.expect("progress")
    while seen["progress"]["moves"] < 13 or seen["player"] != "p1":
        seen = await watcher.expect("progress")
    # the outline is the board a racer sees, without its cards or face-up counts
    own = ack["board"]
    assert seen["board"]["columns"] == [{"down": col["down"]} for col in own["columns"]]
    assert seen["board"]["waste"] == {"count": own["waste"]["count"]}
    assert (seen["board"]["stock"], seen["board"]["foundation"]) == (
        own["stock"],
        own["foundation"],
    )
    # no card string in any message the spectator or c got while the race ran
    results = await finish_race(a, b)
    for viewer in (watcher, c):
        end = await until_finished(viewer)
        before = viewer.seen[: viewer.seen.index(end)]
        since = 0 if viewer is watcher else c.seen.index(got)
        assert not card_strings(before[since:]), before[since:]
        assert len(shown_boards(before[since:])) >= 2
        assert all(b["outline"] for b in shown_boards(before[since:]))
        # the results show every board in full
        assert end["boards"]["p1"]["columns"] == results["boards"]["p1"]["columns"]
        assert card_strings(end["boards"]) and "outline" not in end["boards"]["p1"]
    late = await Client.open(node.port)
    after = await late.request("watch", "welcome", code=code)
    assert card_strings(after["boards"]) and "reveal" in after["room"]
    for client in (a, b, c, watcher, lobby, late):
        await client.close()


async def test_quick_match_and_rated_private_rooms_are_outlined(node) -> None:
    ann, bob = await Client.open(node.port), await Client.open(node.port)
    await ann.send("quick", name="ann")
    await bob.send("quick", name="bob")
    for c in (ann, bob):
        welcome = await c.expect("welcome")
        assert welcome["room"]["quick"] and welcome["room"]["spectator_view"] == "outline"
    host = await Client.open(node.port)
    rated = await host.request(
        "create", "welcome", name="h", private=True, rated=True, spectator_delay=30
    )
    # outlines show no card: the owner's delay has nothing to hide
    assert rated["room"]["spectator_view"] == "outline"
    assert rated["room"]["spectator_delay"] == 0
    for c in (ann, bob, host):
        await c.close()


async def test_an_unrated_room_keeps_its_owners_choice(node) -> None:
    a, b = await start_race(node.port, private=True)
    code = a.seen[0]["room"]["code"]
    assert not a.seen[0]["room"]["rated"] and a.seen[0]["room"]["spectator_view"] == "live"
    watcher = await Client.open(node.port)
    welcome = await watcher.request("watch", "welcome", code=code)
    assert card_strings(welcome["boards"])  # every board live, face-up cards and all
    assert (await a.move("draw"))["type"] == "ack"
    update = await watcher.expect("progress")
    assert "outline" not in update["board"] and update["board"]["waste"]["fan"]
    host = await Client.open(node.port)
    behind = await host.request("create", "welcome", name="h", private=True, spectator_delay=30)
    assert behind["room"]["spectator_view"] == "delayed"
    assert behind["room"]["spectator_delay"] == 30
    for c in (a, b, watcher, host):
        await c.close()


async def test_an_operator_may_show_rated_races_behind_instead(redis_url) -> None:
    node = Node(make_config(redis_url, rated_spectators="delayed:300"), redis_url)
    port = await node.start()
    try:
        a, b = await start_race(port)
        room: dict[str, Any] = a.seen[0]["room"]
        assert room["spectator_view"] == "delayed" and room["spectator_delay"] == 300
        assert (await a.move("draw"))["type"] == "ack"
        # a spectator sees every board, as it was 300 s ago: the start
        watcher = await Client.open(port)
        welcome = await watcher.request("watch", "welcome", code=room["code"])
        assert welcome["progress"] == {}
        assert welcome["boards"]["p1"]["moves"] == 0 and card_strings(welcome["boards"])
        assert "outline" not in welcome["boards"]["p1"]
        # the owner's longer delay stands; an unrated room keeps its own (none: live)
        host = await Client.open(port)
        longer = await host.request(
            "create", "welcome", name="h", private=True, rated=True, spectator_delay=300
        )
        assert longer["room"]["spectator_delay"] == 300
        shorter = await host.request(
            "create", "welcome", name="h", private=True, rated=True, spectator_delay=20
        )
        assert shorter["room"]["spectator_delay"] == 300
        unrated = await host.request("create", "welcome", name="h", private=True)
        assert unrated["room"]["spectator_view"] == "live"
        assert unrated["room"]["spectator_delay"] == 0
        for c in (a, b, watcher, host):
            await c.close()
    finally:
        await node.stop()
