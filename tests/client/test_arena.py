"""Arenas in the browser (docs/client.md, "Arenas"), against a server of its own whose
schedule (``KR_ARENAS_FILE``) has an hourly arena and whose clock (``KR_CLOCK_OFFSET_MS``)
is 10 s into it: two players join it from the lobby, are paired into a race by the server,
one sprints (her clock runs to half the time limit, her row marked for the other), both
see the arena's table beside the board (the phone's below it, no sideways scroll), resign
one after the other (a race everyone resigned: 0 points each), come back to the arena's
table with one race each, and are paired again; a reload comes back into the arena and
its race; Pause, then Leave back to the lobby. A player's place below the table's first
rows shows under it. A third page only watches the arena: its table kept from the
server's changes (a change to rows it does not hold: it asks for the whole table again),
and its top race watched in outline, then back to the table; her Join is refused (two
players an arena from one address: the others' pages share hers) and she watches on.
Then a player looks at the recent results, creates a private arena through the lobby's
form (a refusal first, in words), joins it, and a player in another browser opens its
link and joins it too."""

from __future__ import annotations

import time
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import pytest

from tests.client.conftest import Contexts, Player, player_factory, scheduled_server
from tests.servers import ServerProcess

HOUR_MS = 3_600_000
SCHEDULE = "hourly every=hour at=:00 minutes=30 size=2 time_limit=60 draw=1\n"


@pytest.fixture(scope="module")
def arena_server(tmp_path_factory: pytest.TempPathFactory) -> Iterator[ServerProcess]:
    """A server (its own Redis) whose clock is 10 s into the hourly arena of its schedule,
    two players an arena from one address (the pages' 127.0.0.1)."""
    now = time.time_ns() // 1_000_000
    offset = (now // HOUR_MS + 1) * HOUR_MS + 10_000 - now  # the next hour's start + 10 s
    folder = tmp_path_factory.mktemp("arenas")
    yield from scheduled_server(folder, SCHEDULE, offset, KR_ATTEMPTS_PER_ADDRESS="2")


@pytest.fixture
def arena_players(
    contexts: Contexts, arena_server: ServerProcess, request: pytest.FixtureRequest
) -> Iterator[Any]:
    yield from player_factory(contexts, arena_server, request)


def join_from_lobby(player: Player, name: str) -> None:
    player.open()
    player.set_name(name)
    item = player.page.locator("#arena-list li[data-arena^='arena-hourly-']").first
    text = item.inner_text()  # the running one first, then the next to start
    assert player.page.locator("#arena-list li").count() == 4
    assert "running" in text and "2 a race" in text and "Draw 1" in text, text
    item.locator("[data-arena-join]").click()
    player.screen("arena")


def raced(player: Player, before: str | None = None) -> str:
    """The player's next arena race, entered by the server's pairing: its code."""
    player.page.wait_for_function(
        "(before) => { const s = window.kr.store.state; return s.room && s.room.arena"
        " && s.room.code !== before && s.board && !s.board.over; }",
        arg=before,
        timeout=15_000,
    )
    player.wait_racing()
    return player.state("s.room.code")


def no_sideways_scroll(player: Player) -> None:
    assert player.page.evaluate(
        "() => document.documentElement.scrollWidth <= window.innerWidth + 1"
    ), "the page scrolls sideways"


def place_101(you: dict) -> list[dict]:
    """A player's place as ``arena_you`` gives it below the table's first rows: 101st,
    with the row above."""
    row = {"player": you["player"], "name": "Ann", "guest": True, "rank": 101, "points": 0,
           "races": 0, "wins": 0, "streak": 0, "fire": False, "performance": 0,
           "racing": you["racing"], "paused": False, "key": 2}  # fmt: skip
    return [{**row, "player": "g-0", "name": "Zed", "rank": 100, "key": 1}, row]


def resign(player: Player) -> None:
    player.page.click("#btn-resign")
    player.page.click("#btn-resign")


def test_two_players_race_in_an_arena_and_come_back_to_its_table(
    arena_players: Any, arena_server: ServerProcess, artifacts: Path
) -> None:
    ann = arena_players()
    # Ann's own line comes with a place below the table's first rows (as a player's 101st
    # would): the server's two players are both on the table, so her wire says so
    ann.wire().rewrite = lambda m: (
        {**m, "rows": place_101(m["you"])} if m["type"] == "arena_you" else m
    )
    bob = arena_players(viewport={"width": 390, "height": 844}, has_touch=True, is_mobile=True)
    join_from_lobby(ann, "Ann")
    ann.page.wait_for_selector("#arena-table tbody tr")
    assert ann.page.text_content("#arena-state") == "Waiting for the next race\u2026"
    ann.shot(artifacts / "arena-waiting.png")
    # Cat only watches the arena (from the lobby's Watch): its table, live; the first
    # change frame she gets is made to name rows she does not hold
    cat = arena_players()
    wire = cat.wire()
    broken: list[int] = []

    def break_first_changes(msg: dict) -> dict:
        if msg.get("type") != "arena_changes" or broken:
            return msg
        broken.append(msg["base"])
        return {**msg, "base": msg["base"] - 1000}

    wire.rewrite = break_first_changes
    cat.open()
    cat.page.locator("#arena-list li[data-arena^='arena-hourly-'] [data-arena-watch]").first.click()
    cat.screen("arena")
    cat.page.wait_for_selector("#arena-table tbody tr")
    assert cat.page.text_content("#arena-state") == "Watching: join to race in it."
    assert cat.page.text_content("#btn-arena-pause") == "Join"
    join_from_lobby(bob, "Bob")
    # paired by the server: the next race notice, the arena's table beside the board
    code = raced(ann)
    assert raced(bob) == code
    # Ann sprints before her first move: one click, her clock runs to half the race's
    # 60 s, and her row on Bob's standings is marked
    ann.shot(artifacts / "arena-sprint.png")
    ann.page.click("#btn-sprint")
    ann.page.wait_for_function(
        "() => document.querySelector('#stat-time').textContent.endsWith(' / 0:30')"
    )
    assert ann.page.locator("#race-sprint").is_hidden()
    mark = f"#race-standings .bar-row[data-player='{ann.state('s.player')}'] .tag.sprint"
    bob.page.wait_for_selector(mark, state="attached")
    assert bob.page.locator("#race-sprint").is_visible()  # (his own is still his to choose)
    assert bob.page.text_content("#stat-time").endswith(" / 1:00")
    # Cat's table: both racing in that race, its top race (from changes after the whole
    # table she asked for again when the changes did not fit hers)
    cat.page.wait_for_function(
        "(code) => { const a = window.kr.store.state.arena; return a && a.top === code"
        " && a.table.length === 2 && a.table.every((r) => r.racing === code); }",
        arg=code,
    )
    assert broken and len(wire.sent("watch_arena")) >= 2, wire.sent("watch_arena")
    kinds = [m["type"] for way, m in wire.log if way == "in"]
    wholes = [i for i, kind in enumerate(kinds) if kind == "arena"]
    assert len(wholes) >= 2 and "arena_changes" in kinds[wholes[-1] :], kinds
    # the top race: watched in outline (rated play), then back to the table
    cat.page.click("#btn-arena-tv")
    cat.screen("watch")
    assert cat.state("s.room.code") == code and cat.state("s.role") == "spectator"
    assert cat.state("Object.values(s.boards).every((b) => b.outline === true)")
    cat.shot(artifacts / "arena-top-race.png")
    cat.page.click("#btn-stop-watch")
    cat.screen("arena")
    cat.page.wait_for_selector("#btn-arena-tv:not([hidden])")
    cat.shot(artifacts / "arena-watching.png")
    # Cat's Join is refused (Ann and Bob came from her address): said, and she watches on
    arena_id = cat.state("s.arenaId")
    cat.page.click("#btn-arena-pause")
    cat.page.locator("#toast", has_text="2 players").wait_for()
    assert cat.state("[s.arenaId, s.arenaPaused]") == [arena_id, True]
    cat.screen("arena")
    assert cat.page.text_content("#btn-arena-pause") == "Join"
    assert cat.page.text_content("#arena-state") == "Watching: join to race in it."
    assert "Draw 1 arena" in (ann.page.text_content("#race-challenge") or "")
    table = ann.page.locator("#race-arena .arena-table")
    assert table.is_visible()
    names = table.locator("tbody td:nth-child(2)").all_inner_texts()
    assert sorted(n.split()[0] for n in names) == ["Ann", "Bob"], names
    side = ann.page.locator("#race-side")  # the compact table fits its panel
    assert ann.page.evaluate(
        "(el) => el.scrollWidth <= el.clientWidth", table.locator(".table-scroll").element_handle()
    )
    assert side.is_visible()
    ann.shot(artifacts / "arena-race.png")
    # the phone: the table below the board, within the screen's width
    bob_table = bob.page.locator("#race-arena")
    bob_table.scroll_into_view_if_needed()
    assert bob_table.is_visible() and "Ann" in bob_table.inner_text()
    box = bob_table.bounding_box()
    assert box is not None and box["x"] >= 0 and box["x"] + box["width"] <= 390 + 1, box
    no_sideways_scroll(bob)
    bob.shot(artifacts / "arena-race-phone.png")
    # one resigns: back to the arena, the race still on for the other
    resign(ann)
    ann.screen("arena")
    ann.page.wait_for_selector("#arena-last:not([hidden])")
    ann.page.wait_for_selector("#arena-near:not([hidden]) tr.me")  # her place, below the table
    near = ann.page.locator("#arena-near")
    assert "Your place" in near.inner_text(), near.inner_text()
    assert near.locator("tr.me td").first.inner_text() == "101"
    assert "others in it to finish" in (ann.page.text_content("#arena-state") or "")
    # the other resigns: the race is counted (0 points each) and both wait again
    resign(bob)
    for p in (ann, bob):
        p.page.wait_for_function(
            "() => { const a = window.kr.store.state.arena;"
            " return a && a.table.length === 2 && a.table.every((r) => r.races === 1); }"
        )
        p.page.wait_for_selector(
            "#screen-race:not([hidden]) #race-arena tbody tr, "
            "#screen-arena:not([hidden]) #arena-table tbody tr"
        )
    ann.shot(artifacts / "arena-table.png")
    # and paired again, into a new race
    again = raced(ann, code)
    assert raced(bob, code) == again
    rows = ann.page.locator("#race-arena tbody tr")
    assert rows.count() == 2
    assert [r.split("\t")[3] for r in rows.all_inner_texts()] == ["1", "1"]  # races
    # a reload comes back into the arena and its race
    ann.page.reload()
    ann.page.wait_for_selector('#conn-state[data-state="open"]')
    ann.screen("race")
    assert ann.state("s.room.code") == again and ann.state("s.arenaId")
    ann.page.wait_for_selector("#race-arena:not([hidden]) tbody tr")
    # resigned, paused, then left: the lobby, nothing of the arena kept
    resign(ann)
    ann.screen("arena")
    ann.page.click("#btn-arena-pause")
    ann.page.wait_for_selector("#btn-arena-pause:text('Resume')")
    assert "Paused" in (ann.page.text_content("#arena-state") or "")
    ann.page.click("#btn-arena-leave")
    ann.screen("lobby")
    assert ann.page.evaluate("() => localStorage.getItem('kr.arena')") is None
    resign(bob)
    bob.screen("arena")
    # the lobby's arenas: the recent results (none has ended on this server), then a
    # private arena made through the form, its link opened by another browser
    ann.page.click("#arena-finals")
    ann.page.wait_for_selector("#arena-view:not([hidden]) #arena-page-title:text('Recent arenas')")
    ann.page.locator("#arena-page-body", has_text="No arena has finished lately.").wait_for()
    ann.page.click("#arena-page-back")
    ann.screen("lobby")
    ann.page.click("#arena-create summary")
    form = ann.page.locator("#arena-form")
    form.locator("[name=minutes]").select_option("10")
    form.locator("[name=time_limit]").select_option("600")  # more than half of 10 minutes
    ann.page.click("#btn-arena-create")
    refusal = ann.page.locator("#arena-made [role=alert]")
    assert "at most half the arena's length" in refusal.inner_text(), refusal.inner_text()
    form.locator("[name=time_limit]").select_option("120")
    form.locator("[name=private]").check()
    ann.page.click("#btn-arena-create")
    ann.page.wait_for_function("() => document.querySelector('#arena-made-link')?.value")
    url = ann.page.locator("#arena-made-link").input_value()
    arena_id = url.rpartition("#/arena/")[2]
    assert url.startswith(arena_server.url) and arena_id.startswith("arena-p"), url
    assert "Private" in ann.page.inner_text("#arena-made")
    assert not ann.page.locator(f"#arena-list li[data-arena='{arena_id}']").count()  # unlisted
    ann.shot(artifacts / "arena-made.png")
    ann.page.click("[data-arena-made-join]")
    ann.screen("arena")
    # ("Joining the arena…" until the server's answer)
    ann.page.locator("#arena-state", has_text="the races begin at").wait_for()
    cy = arena_players()
    cy.page.goto(url)
    cy.page.wait_for_selector('#conn-state[data-state="open"]')
    page = cy.page.locator("#arena-view:not([hidden]) #arena-page-body")
    page.locator("#arena-page-title:text('Draw 1 arena')").wait_for()
    cy.page.wait_for_selector("#arena-page-body tbody tr[data-player]")  # Ann, joined
    assert "Ann" in page.inner_text() and "Private" in page.inner_text(), page.inner_text()
    cy.shot(artifacts / "arena-page.png")
    cy.page.fill("#arena-page-name", "Cy")
    cy.page.click(".arena-page-join [type=submit]")
    cy.screen("arena")
    assert cy.state("s.arenaId") == arena_id
    # the second identity from this address (every browser here is 127.0.0.1) is flagged
    row = cy.page.locator("#arena-table tbody tr", has_text="Cy")
    assert row.locator(".tag.flag").inner_text() == "flagged: shared address"
