"""An arena through to its podium in the browser (docs/client.md, "Arenas"), on a server of
its own (its own Redis) whose clock (``KR_CLOCK_OFFSET_MS``) is ``LEAD_S`` before the end
of a 10-minute arena of its schedule (``KR_ARENAS_FILE``), races of 3 with a 60 s time
limit: pairing closes 30 s before the end (docs/rules.md, "When races start"), so the
three players who join at once are paired into one race, the arena's last, which runs
past the end. Its deal is a seed the test put first in the arena's pool of certified
deals, so that the test knows a winning line: Cy resigns at once, Bob puts a card home
and resigns, Ann plays the line but its last move, and once the arena is over (no race
started after pairing closed) that last move wins it. The race counted, the arena is
final: each player's arena screen shows the podium (Ann 2 points, Bob 1, Cy 0: a race
of 3) and the final table; the arena's page (``#/arena/ID``) the same, with the race and
its replay, which opens; a profile lists the arena with the player's final rank; and a
reload comes back to the results."""

from __future__ import annotations

import time
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import pytest
import redis
from playwright.sync_api import Browser

from klondike_race.engine import Deal, Game, Settings
from klondike_race.engine.views import board_view
from klondike_race.service.store.arena_deals import deals_key
from klondike_race.solver import find_winnable_seed
from tests.client.conftest import Contexts, Player, player_factory, scheduled_server
from tests.servers import ServerProcess

HOUR_MS = 3_600_000
MINUTES = 10  # the shortest arena
LEAD_S = 55  # the server starts this long before the arena's end: pairing closes at 30 s
SCHEDULE = f"podium every=hour at=:00 minutes={MINUTES} size=3 time_limit=60 draw=1\n"


class PodiumServer(ServerProcess):
    arena: str  # the arena's id (the schedule's name and its UTC start)
    redis_url: str


@pytest.fixture(scope="module")
def podium_server(
    browser: Browser, tmp_path_factory: pytest.TempPathFactory
) -> Iterator[PodiumServer]:
    """A server (its own Redis) whose clock is ``LEAD_S`` before the end of its arena
    (the browser is launched first: the arena's clock runs from the server's start)."""
    now = time.time_ns() // 1_000_000
    starts = (now // HOUR_MS + 1) * HOUR_MS  # the next hour's arena, its clock moved on
    offset = starts + MINUTES * 60_000 - LEAD_S * 1000 - now
    for srv in scheduled_server(tmp_path_factory.mktemp("podium"), SCHEDULE, offset, PodiumServer):
        srv.arena = "arena-podium-" + time.strftime("%Y-%m-%d-%H%M", time.gmtime(starts // 1000))
        yield srv


@pytest.fixture
def podium_players(
    contexts: Contexts, podium_server: PodiumServer, request: pytest.FixtureRequest
) -> Iterator[Any]:
    yield from player_factory(contexts, podium_server, request)


def certified_line() -> tuple[str, list[Any], int]:
    """A seed the solver proves winnable in Draw 1 (a state budget: the same seed and
    line on every machine), its winning line as the client's steps, and how many of its
    first moves put a card home."""
    found = find_winnable_seed("arena-podium", Settings(draw=1), max_states=200_000)
    assert found is not None and found.solution.line
    steps: list[Any] = []
    home = 0
    game = Game(Deal.from_seed(found.seed), Settings(draw=1))
    for move in found.solution.line:
        wire: dict[str, Any] = dict(move.to_wire())
        steps.append(wire.get("action") or wire)
        game.play(move)
        if not home and game.found_count:
            home = len(steps)
    return str(found.seed), steps, home


def join(player: Player, name: str, arena: str) -> None:
    """Join the arena from the lobby (its page loading already)."""
    player.page.wait_for_selector('#conn-state[data-state="open"]')
    player.set_name(name)
    item = player.page.locator(f"#arena-list li[data-arena='{arena}']")
    assert "running" in item.inner_text() and "3 a race" in item.inner_text()
    item.locator("[data-arena-join]").click()
    player.screen("arena")


def resign(player: Player) -> None:
    player.page.click("#btn-resign")
    player.page.click("#btn-resign")


def podium(root: Any) -> list[tuple[str, str, str]]:
    """A podium's places as (place, name, points and wins)."""
    return [
        (
            li.locator(".podium-place").inner_text(),
            li.locator(".profile-link").inner_text(),
            li.locator(".muted").last.inner_text(),
        )
        for li in root.locator(".arena-podium li").all()
    ]


PODIUM = [
    ("1st", "Ann", "2 points, 1 win"),
    ("2nd", "Bob", "1 point, 0 wins"),
    ("3rd", "Cy", "0 points, 0 wins"),
]


def table(root: Any) -> list[list[str]]:
    """A final table's rows: rank, name, points, races, wins."""
    rows = []
    for tr in root.locator("tbody tr").all():
        cells = tr.locator("td")
        name = cells.nth(1).locator(".profile-link").inner_text()
        rows.append([cells.nth(0).inner_text(), name, *cells.all_inner_texts()[2:5]])
    return rows


FINAL_TABLE = [["1", "Ann", "2", "1", "1"], ["2", "Bob", "1", "1", "0"], ["3", "Cy", "0", "1", "0"]]


def test_an_arena_ends_its_last_race_counts_and_every_player_sees_the_podium(
    podium_players: Any, podium_server: PodiumServer, artifacts: Path
) -> None:
    arena = podium_server.arena
    seed, line, home = certified_line()
    # the arena's pool of certified deals: the test's seed first, taken by its first race
    with redis.Redis.from_url(podium_server.redis_url) as r:
        r.rpush(deals_key(arena), seed)
    ann, bob, cy = podium_players(), podium_players(), podium_players()
    for player in (ann, bob, cy):  # the three pages load at once
        player.page.goto(player.base, wait_until="commit")
    for player, name in ((ann, "Ann"), (bob, "Bob"), (cy, "Cy")):
        join(player, name, arena)
    # the three are paired into one race while pairing is open, on the test's deal
    for player in (ann, bob, cy):
        player.page.wait_for_function(
            "() => { const s = window.kr.store.state; return s.room && s.room.arena && s.board; }",
            timeout=15_000,
        )
        player.wait_racing()
    code = ann.state("s.room.code")
    assert bob.state("s.room.code") == cy.state("s.room.code") == code
    assert ann.state("s.room.winnable_only") is True  # a certified deal
    dealt = board_view(Game(Deal.from_seed(seed), Settings(draw=1)))["columns"]
    assert ann.state("s.board.columns.map((c) => c.up)") == [c["up"] for c in dealt]
    # Cy resigns at once; Bob puts a card home, then resigns: 3rd and 2nd
    resign(cy)
    cy.screen("arena")
    assert "waiting for the others" in (cy.page.text_content("#arena-state") or "")
    bob.play_line(line[:home])
    resign(bob)
    bob.screen("arena")
    # Ann plays her line but its last move meanwhile: 51 cards home
    ann.play_line(line[:-1])
    assert ann.state("[s.board.foundation, s.board.status]") == [51, "playing"]
    # no more races start; the arena ends with Ann's race still on
    # (the long waits ask four times a second, not at every frame)
    ann.page.wait_for_function(
        "() => window.kr.store.state.arena.arena.pairing === false", polling=250, timeout=35_000
    )
    ann.page.wait_for_function(
        "() => window.kr.store.state.arena.arena.phase === 'over'", polling=250, timeout=40_000
    )
    assert ann.state("!s.board.over && s.room.code") == code
    assert ann.state("s.arena.arena.final") is False
    cy.page.locator("#arena-state", has_text="its last races still count").wait_for()
    # Ann reloads: back in her race, the arena (over: joining it is refused) watched
    ann.page.reload()
    ann.wait_racing()
    assert ann.state("[s.board.foundation, s.room.code, s.arenaId]") == [51, code, arena]
    ann.page.wait_for_function("() => window.kr.store.state.arenaPaused === true")
    assert ann.state("s.notice.reason") == "arena_over" and ann.page.is_hidden("#toast")
    # Ann wins the arena's last race with her last move: it is counted, and the arena is final
    ann.play_line(line[-1:])
    for player in (ann, bob, cy):
        player.screen("arena")
        player.page.locator("#arena-state", has_text="final results").wait_for()
        result = player.page.locator("#arena-final")
        assert podium(result) == PODIUM
        assert table(player.page.locator("#arena-table")) == FINAL_TABLE
        assert player.page.locator("#btn-arena-pause").is_hidden()
        assert player.state("s.arenaPaused") is True  # (a reload watches it, not joins it)
    assert "Last race" in ann.page.inner_text("#arena-last")
    assert ann.page.inner_text("#arena-you") == "You: 1st \u00b7 2 points"
    ann.shot(artifacts / "arena-podium.png")
    # the arena's page: the same podium and final table, its race with its replay
    ann.page.click("#arena-results")
    body = ann.page.locator("#arena-view:not([hidden]) #arena-page-body")
    body.locator("[data-arena-page-phase]", has_text="final results").wait_for()
    assert podium(body) == PODIUM
    assert table(body.locator("table.arena-final")) == FINAL_TABLE
    race = body.locator(f".arena-races tr[data-code='{code}']")
    assert "1st Ann (2)" in race.inner_text() and "3rd Cy (0)" in race.inner_text()
    assert body.locator(".arena-races tbody tr").count() == 1
    ann.shot(artifacts / "arena-podium-page.png", full_page=True)
    race.locator("a", has_text="replay").click()
    ann.page.wait_for_selector("#replay-view:not([hidden])")
    ann.page.locator("#replay-title", has_text=f"Replay {code}").wait_for()
    ann.page.locator("#replay-view", has_text="Ann").wait_for()
    # a profile (Bob's own name on his final table): the arena, his rank of 3
    bob.page.locator("#arena-table .profile-link", has_text="Bob").click()
    row = bob.page.locator(f"#profile-view:not([hidden]) .arena-history tr[data-arena='{arena}']")
    row.wait_for()
    assert row.locator("td").all_inner_texts()[1:] == ["Draw 1 arena", "2 of 3", "1", "1", "0"]
    # and a reload of a final arena shows its results (watched, not joined: no refusal)
    cy.page.reload()
    cy.page.wait_for_selector('#conn-state[data-state="open"]')
    cy.screen("arena")
    cy.page.locator("#arena-state", has_text="final results").wait_for()
    assert podium(cy.page.locator("#arena-final")) == PODIUM
    assert cy.state("[s.arenaId, s.notice && s.notice.reason]") == [arena, None]
