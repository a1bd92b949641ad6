"""The browser client in real Chromium against the real server and a real Redis.

The races are on seed 42 (Draw 1), whose opening the engine confirms first: columns show
Qs Js Jh 2d Ac 6d Th, so Jh can go on Qs, Ac can go home, and 2d cannot go on 6d.
"""

from __future__ import annotations

import hashlib
import re
import time

import pytest
from playwright.sync_api import Page

from klondike_race.engine import Deal, Game, Settings, board_view
from tests.conftest import dealt, quick_win, step_to_move

from .conftest import PHONE, Player, cards_query, practise, start_race
from .test_focus import FELT, colours, contrast, hex_rgb

SEED = "42"
RANKS = "A23456789TJQK"
RANK_WORDS = {"A": "Ace", "2": "Two", "3": "Three", "4": "Four", "5": "Five", "6": "Six",
              "7": "Seven", "8": "Eight", "9": "Nine", "T": "Ten", "J": "Jack", "Q": "Queen",
              "K": "King"}  # fmt: skip
SUIT_WORDS = {"c": "clubs", "d": "diamonds", "h": "hearts", "s": "spades"}


def card_words(name: str) -> str:
    """A card as screen readers hear it from the client ("Jack of hearts")."""
    return f"{RANK_WORDS[name[0]]} of {SUIT_WORDS[name[1]]}"


def test_the_deal_is_what_the_tests_expect() -> None:
    game = Game.from_seed(SEED)
    tops = [c["up"] for c in board_view(game)["columns"]]
    assert tops == [["Qs"], ["Js"], ["Jh"], ["2d"], ["Ac"], ["6d"], ["Th"]]
    assert {"3>1", "5>c"} <= {str(m) for m in game.legal_moves()}
    assert "4>6" not in {str(m) for m in game.legal_moves()}


def test_two_players_race_and_a_spectator_watches(players, artifacts) -> None:
    alice, bob, watcher = players(), players(), players(viewport={"width": 1280, "height": 900})
    # a private room is unrated: its spectators see every board live (a rated one shows
    # outlines: test_a_spectator_of_a_rated_race_sees_outlines)
    code = start_race(alice, [bob], seed=SEED, watchers=(watcher,), checks=("private",))
    page = alice.page

    # Drag a card onto a column: Jh from column 3 onto the Qs of column 1.
    alice.drag(alice.card("Jh"), alice.pile("col1"))
    page.wait_for_selector(f'{alice.pile("col1")} .card[data-card="Jh"]')
    assert page.text_content("#stat-moves") == "1"
    # every move of her own is said in the live region: the card, where, what it turned
    turned = alice.state("s.board.columns[2].up[0]")
    said = f"Jack of hearts to column 1, turning up the {card_words(turned)}"
    assert page.text_content("#announce") == said
    assert page.get_attribute("#announce", "aria-live") == "polite"

    # Double-click a card home: Ac to the clubs foundation.
    page.dblclick(alice.card("Ac"))
    page.wait_for_selector(f'{alice.pile("found-c")} .card[data-card="Ac"]')
    assert page.text_content("#stat-found") == "1"
    assert (page.text_content("#announce") or "").startswith("Ace of clubs to the clubs foundation")
    # ... and her own row of the standings follows (the ack carries the leaderboard).
    page.wait_for_selector('#race-standings .bar-row.me[data-player="p1"] .bar[aria-valuenow="1"]')

    # Click the stock: one card turns over.
    page.click(alice.pile("stock"))
    page.wait_for_selector(f'{alice.pile("waste")} .card[data-card="8c"]')
    assert alice.state("s.board.stock") == 23
    assert page.text_content("#announce") == "Drew the Eight of clubs"

    # An illegal drop snaps back and says why; nothing changes.
    alice.drag(alice.card("2d"), alice.pile("col6"))
    refusal = page.locator("#refusal")
    refusal.wait_for(state="visible")
    assert refusal.get_attribute("data-reason") == "illegal_target"
    assert "doesn't go there" in (refusal.text_content() or "")
    page.wait_for_selector(f'{alice.pile("col4")} .card[data-card="2d"]:not(.lifted)')
    page.wait_for_selector(".drag-ghost", state="detached")
    assert page.text_content("#stat-moves") == "3"
    assert alice.state("s.board.columns[3].up") == ["2d"]

    # Bob sees Alice's progress; Alice sees Bob's.
    bob.page.wait_for_selector('#race-standings .bar-row[data-player="p1"] .bar[aria-valuenow="1"]')
    assert "3 moves" in (bob.page.text_content('#race-standings .bar-row[data-player="p1"]') or "")
    bob.page.click(bob.pile("stock"))
    page.wait_for_function(
        "() => document.querySelector('#race-standings .bar-row[data-player=\"p2\"]')"
        ".textContent.match(/\\b1 move\\b/)"
    )
    # A racer never sees the other's board.
    assert alice.state("s.boards") is None
    assert page.locator('[data-player="p2"] .board').count() == 0

    # The spectator sees both boards change.
    grid = watcher.page
    cell = '.grid-cell[data-player="p1"]'
    grid.wait_for_selector(f'{cell} .pile[data-pile="found-c"] [data-card="Ac"]')
    grid.wait_for_selector(f'{cell} .pile[data-pile="col1"] [data-card="Jh"]')
    grid.wait_for_function(
        '() => document.querySelector(\'.grid-cell[data-player="p2"] .pile[data-pile="stock"]'
        " .count').textContent === '23'"
    )
    assert grid.text_content("#watch-count") == "1 watching"
    # the last move is marked on each board: where cards arrived (Alice drew last)
    grid.wait_for_selector(f'{cell} .pile.last-move[data-pile="waste"]')
    assert grid.locator(f'{cell} .pile.last-move[data-pile="col4"]').count() == 0
    watcher.shot(artifacts / "spectator.png")
    alice.shot(artifacts / "race.png")

    # Follow one board large, then back to the grid.
    grid.click('.grid-cell[data-player="p1"]')
    grid.wait_for_selector('#follow-board .pile[data-pile="found-c"] [data-card="Ac"]')
    watcher.shot(artifacts / "spectator-follow.png")
    grid.click("#btn-unfollow")
    grid.wait_for_selector("#watch-grid:not([hidden])")

    # A reload mid-race resumes the same board (the token is in localStorage).
    page.reload()
    alice.screen("race")
    page.wait_for_selector(f'{alice.pile("found-c")} .card[data-card="Ac"]')
    page.wait_for_selector(f'{alice.pile("col1")} .card[data-card="Jh"]')
    assert alice.state("s.board.stock") == 23
    assert page.text_content("#stat-moves") == "3"
    assert alice.state("s.board.waste.fan") == ["8c"]

    # Alice resigns: her game is over, she watches Bob until he is done.
    page.click("#btn-resign")
    page.click("#btn-resign")
    alice.screen("results")
    page.wait_for_selector('#results-boards .grid-cell[data-player="p2"] .board')
    assert "Your game is over" in (page.text_content("#results-title") or "")
    bob.page.click(bob.pile("stock"))
    page.wait_for_function(
        '() => document.querySelector(\'#results-boards .grid-cell[data-player="p2"]'
        " .pile[data-pile=\"stock\"] .count').textContent === '22'"
    )

    # Bob resigns: the race is over; the seed is revealed and checked in the browser.
    bob.page.click("#btn-resign")
    bob.page.click("#btn-resign")
    for p in (alice, bob):
        p.screen("results")
        p.page.wait_for_selector('#reveal-check[data-ok="true"]')
        assert p.page.text_content("#reveal-seed") == SEED
        # the game's replay, from its results
        assert p.page.get_attribute("#results-replay:visible", "href") == f"#/replay/{code}"
    reveal = alice.state("s.room.reveal")
    assert (
        hashlib.sha256(f"{reveal['salt']}:{reveal['deal']}".encode()).hexdigest()
        == (reveal["commitment"])
    )
    assert alice.state("s.commitmentCheck.computed") == reveal["commitment"]
    rows = page.locator("#results-table tbody tr")
    assert rows.count() == 2
    first = rows.nth(0).locator("td").all_text_contents()
    assert first[:4] == ["1", "Alice guest (you)", "1/52", "3"]  # a guest, tagged; her own
    assert first[5] == "resigned"
    assert "(you)" not in rows.nth(1).locator("td").nth(1).inner_text()
    alice.shot(artifacts / "results.png", full_page=True)
    watcher.screen("results")
    assert code in (watcher.page.text_content("#results-sub") or "")

    # Rematch: a new room on the same settings.
    page.click("#btn-rematch")
    alice.screen("room")
    assert page.text_content("#room-code") != code


def test_a_spectator_of_a_rated_race_sees_outlines(players, artifacts) -> None:
    """A public room is rated: its spectator sees each board's outline while the race
    runs (backs and counts, no face-up card, the cards home as one count) and no card
    until the results; the lobby and the watch screen say so."""
    alice, bob = players(), players()
    watcher, visitor = players(viewport={"width": 1280, "height": 900}), players()
    code = start_race(alice, [bob], seed=SEED, watchers=(watcher,))
    alice.drag(alice.card("Jh"), alice.pile("col1"))  # a run of two face-up cards
    alice.page.wait_for_selector(f'{alice.pile("col1")} .card[data-card="Jh"]')
    alice.page.dblclick(alice.card("Ac"))  # home, from column 5: its next card turns up
    alice.page.wait_for_function("() => window.kr.store.state.board.foundation === 1")
    alice.page.click(alice.pile("stock"))
    alice.page.wait_for_function("() => window.kr.store.state.board.moves === 3")
    grid = watcher.page
    cell = '.grid-cell[data-player="p1"]'
    grid.wait_for_function(
        f"() => document.querySelector('{cell} [data-pile=\"waste\"] .count')?.textContent === '1'"
    )
    assert grid.locator("#watch-grid .card[data-card]").count() == 0  # no card named
    assert grid.locator(f"{cell} .board.outline").count() == 1
    assert grid.text_content(f'{cell} [data-pile="found-c"] .count') == "1/52"
    assert grid.text_content(f'{cell} [data-pile="stock"] .count') == "23"
    col5 = f'{cell} [data-pile="col5"]'
    assert grid.locator(f"{col5} .card.back").count() == 3  # 4 down, one turned up
    assert grid.locator(f'{cell} [data-pile^="col"] .card.blank').count() == 0  # no face-up
    col7 = f'{cell} [data-pile="col7"]'
    assert grid.get_attribute(col7, "aria-label") == "Column 7: 6 face down"
    assert grid.is_visible("#watch-note")
    assert "outlines while it runs" in (grid.text_content("#watch-settings") or "")
    watcher.shot(artifacts / "spectator-outline.png")
    grid.click(cell)  # one board large: the same outline
    grid.wait_for_selector('#follow-board [data-pile="found-c"] .card.blank.home')
    assert grid.locator("#follow-board .card[data-card]").count() == 0
    watcher.shot(artifacts / "spectator-outline-follow.png")
    visitor.open()
    listed = f'#live-rooms li:has([data-watch="{code}"])'
    visitor.page.wait_for_selector(listed)
    assert "outlines while it runs: boards at the end" in (visitor.page.text_content(listed) or "")
    # the race ends: the results show every board, cards and all
    for p in (alice, bob):
        p.page.click("#btn-resign")
        p.page.click("#btn-resign")
    watcher.screen("results")
    grid.wait_for_selector('#results-boards .grid-cell[data-player="p1"] [data-card="Ac"]')
    assert grid.locator("#results-boards .board.outline").count() == 0


def test_lobby_keeps_the_name_and_lists_live_races(players, artifacts) -> None:
    host = players()
    code = host.create("Hostess")
    visitor = players()
    visitor.open()
    visitor.set_name("Visitor")
    visitor.page.wait_for_selector(f'#live-rooms [data-watch="{code}"]')
    # the counts at the top of the lobby, and a link down to the live races
    visitor.page.wait_for_selector("#lobby-counts:not([hidden])")
    online = visitor.state("s.counts.online")
    assert isinstance(online, int) and online >= 2  # the host and this visitor, at least
    assert visitor.page.text_content("#count-online") == f"{online} online"
    assert visitor.page.text_content("#count-racing") == "0 racing now"  # the room waits
    assert visitor.page.get_attribute("#count-racing", "href") == "#live-races"
    visitor.page.click("#count-racing")  # scrolls there, the address (the route) unchanged
    assert "live-races" not in visitor.page.url
    box = visitor.page.locator("#live-races").bounding_box()
    assert box is not None and 0 <= box["y"] < visitor.page.viewport_size["height"]
    visitor.shot(artifacts / "lobby.png")
    visitor.page.reload()
    visitor.page.wait_for_selector('#conn-state[data-state="open"]')
    assert visitor.page.input_value("#name") == "Visitor"
    # Join from the list, then leave again.
    visitor.page.click(f'#live-rooms [data-join="{code}"]')
    visitor.screen("room")
    host.page.wait_for_function(
        "() => document.querySelector('#room-players').textContent.includes('Visitor')"
    )
    host.shot(artifacts / "waiting-room.png")
    visitor.page.click("#btn-leave")
    visitor.screen("lobby")
    host.page.wait_for_function(
        "() => !document.querySelector('#room-players').textContent.includes('Visitor')"
    )


def test_keyboard_plays_every_kind_of_action(players) -> None:
    alice, bob = players(), players()
    start_race(alice, [bob], seed=SEED)
    page = alice.page
    page.keyboard.press("d")  # draw
    page.wait_for_selector(f'{alice.pile("waste")} .card[data-card="8c"]')
    page.keyboard.press("3")  # a pick, then W: the waste card picked instead (no move)
    page.wait_for_selector(f"{alice.card('Jh')}.selected")
    page.keyboard.press("w")
    page.wait_for_selector(f"{alice.card('8c')}.selected")
    assert page.locator(".card.selected").count() == 1
    page.keyboard.press("w")  # W again puts it down
    page.wait_for_selector(".card.selected", state="detached")
    assert alice.state("[s.inflight, s.queue.length, s.board.moves]") == [None, 0, 1]
    page.keyboard.press("3")  # pick column 3's top card
    page.wait_for_selector(f"{alice.card('Jh')}.selected")
    page.keyboard.press("1")  # ... and put it on column 1
    page.wait_for_selector(f'{alice.pile("col1")} .card[data-card="Jh"]')
    page.keyboard.press("5")
    page.keyboard.press("f")  # column 5's Ac to its foundation
    page.wait_for_selector(f'{alice.pile("found-c")} .card[data-card="Ac"]')
    # Focus and Enter: pick the 2d, then Enter on column 6 is refused by the server.
    page.focus(alice.card("2d"))
    page.keyboard.press("Enter")
    page.wait_for_selector(f"{alice.card('2d')}.selected")
    page.focus(alice.card("6d"))
    page.keyboard.press("Enter")
    page.locator("#refusal").wait_for(state="visible")
    page.keyboard.press("d")
    page.wait_for_selector(f'{alice.pile("stock")} .count:text-is("22")')
    page.wait_for_selector('#stat-moves:text-is("4")')
    # Focus is visible on cards.
    page.focus(alice.card("Jh"))
    outline = page.evaluate("() => getComputedStyle(document.activeElement).outlineStyle")
    assert outline == "solid"


def double_tap(page: Page, x: float, y: float, apart_s: float, handled_after_s: float) -> None:
    """Two taps on (x, y), ``apart_s`` apart by the times the touch events carry, the
    second dispatched ``handled_after_s`` after the first (Chrome's protocol, which
    Playwright's own taps use, takes each event's time)."""
    cdp = page.context.new_cdp_session(page)

    def tap(at: float) -> None:  # (a finger down for 30 ms)
        touch = {"type": "touchStart", "touchPoints": [{"x": x, "y": y}], "timestamp": at}
        cdp.send("Input.dispatchTouchEvent", touch)
        lift = {"type": "touchEnd", "touchPoints": [], "timestamp": at + 0.03}
        cdp.send("Input.dispatchTouchEvent", lift)

    first = time.time()
    tap(first)
    page.wait_for_timeout(handled_after_s * 1000)
    tap(first + apart_s)
    cdp.detach()


def test_phone_viewport_shows_the_whole_board(players, artifacts) -> None:
    alice = players()
    phone = players(
        viewport=PHONE,
        has_touch=True,
        is_mobile=True,
        device_scale_factor=2,
        reduced_motion="no-preference",
    )  # with the cards' slide animations
    watcher = players(viewport=PHONE, has_touch=True, is_mobile=True)
    start_race(alice, [phone], seed=SEED, watchers=(watcher,))
    page = phone.page
    width = page.evaluate("() => document.documentElement.scrollWidth")
    assert width <= PHONE["width"], width
    board = page.locator("#my-board").bounding_box()
    assert board is not None and board["x"] >= 0 and board["x"] + board["width"] <= PHONE["width"]
    for pile in ("stock", "waste", "found-c", "found-s", "col1", "col7"):
        box = page.locator(phone.pile(pile)).bounding_box()
        assert box is not None and box["x"] >= 0 and box["x"] + box["width"] <= PHONE["width"]
    # Cards stay readable: the corner's rank is at least 11 px.
    size = page.evaluate(
        "() => parseFloat(getComputedStyle(document.querySelector("
        "'#my-board .card.face .rank')).fontSize)"
    )
    assert size >= 11
    # Touch: tap the stock, double-tap the Ac home.
    page.tap(phone.pile("stock"))
    page.wait_for_selector(f'{phone.pile("waste")} .card[data-card="8c"]')
    box = phone.box(phone.card("Ac"))
    spot = (box["x"] + box["width"] / 2, box["y"] + box["height"] / 2)
    # one tap sends it home (its best place), and a double tap's second half changes
    # nothing, even on a busy phone: the taps 100 ms apart, the second handled 600 ms
    # after the first
    double_tap(page, *spot, apart_s=0.1, handled_after_s=0.6)
    page.wait_for_selector(f'{phone.pile("found-c")} .card[data-card="Ac"]')
    page.wait_for_selector('#race-standings .bar-row.me .bar[aria-valuenow="1"]')
    # the double tap's second half did not move the Td the first one uncovered
    page.wait_for_timeout(300)
    assert phone.state("s.board.moves") == 2
    assert page.locator(f'{phone.pile("col5")} .card[data-card="Td"]').count() == 1
    assert page.evaluate("() => document.documentElement.scrollWidth") <= PHONE["width"]
    # The rivals over the board on a phone (the standings are under the tableau): Alice's
    # place, name and cards home, kept as she moves, the board not moved by it; a desktop
    # has the standings beside the board and no strip.
    rival = '#race-rivals li[data-player="p1"]'
    page.wait_for_selector(f'{rival}:has-text("Alice"):has-text("0/52")')
    top = page.locator("#my-board").bounding_box()
    strip = page.locator("#race-rivals").bounding_box()
    assert top is not None and strip is not None and strip["y"] + strip["height"] <= top["y"]
    alice.page.dblclick(alice.card("Ac"))
    page.wait_for_selector(f'{rival}:has-text("1/52")')
    assert page.locator("#my-board").bounding_box() == top
    assert "cards home" in (page.get_attribute(rival, "aria-label") or "")
    assert not alice.page.is_visible("#race-rivals")
    phone.shot(artifacts / "race-phone.png")
    # A spectator on a phone: both boards, one above the other, no horizontal scroll (a
    # rated race: their outlines, the card home as a count)
    watcher.page.wait_for_function(
        '() => document.querySelector(\'.grid-cell[data-player="p2"]'
        " [data-pile=\"found-c\"] .count')?.textContent === '1/52'"
    )
    assert watcher.page.evaluate("() => document.documentElement.scrollWidth") <= PHONE["width"]
    watcher.shot(artifacts / "spectator-phone.png", full_page=True)


FINGER = 44  # CSS px: the least a touch target is, each way (WCAG 2.5.5, Apple's HIG)

RACE_BUTTONS = """(all) => {
  // the race bar's buttons (and Skip to the end) as shown; with "all", every one the
  // race screen may show, each unhidden for the measure and hidden again at once
  const buttons = [...document.querySelectorAll('#screen-race .actions .btn, #btn-skip-finish')];
  const hidden = all ? buttons.filter((b) => b.hidden) : [];
  hidden.forEach((b) => { b.hidden = false; });
  const out = {};
  for (const b of buttons) {
    const r = b.getBoundingClientRect();
    if (r.width && r.height) out[b.id] = [r.width, r.height];
  }
  hidden.forEach((b) => { b.hidden = true; });
  return out;
}"""


def assert_touch_sized(page, every: bool = False) -> dict:
    """The race screen's buttons shown (``every``: all it may show) are at least 44x44."""
    sizes = page.evaluate(RACE_BUTTONS, every)
    assert sizes and "btn-resign" in sizes, sizes
    small = {b: s for b, s in sizes.items() if s[0] < FINGER or s[1] < FINGER}
    assert not small, small
    return sizes


def assert_stock_count_clear(page) -> None:
    """The stock's count badge lies inside the stock's box, clear of column 1's cards."""
    badge = page.locator("#my-board .pile[data-pile='stock'] > .count").bounding_box()
    stock = page.locator("#my-board .pile[data-pile='stock']").bounding_box()
    first = page.locator("#my-board .pile[data-pile='col1'] .card").first.bounding_box()
    assert badge and stock and first, (badge, stock, first)
    assert stock["x"] <= badge["x"] and badge["x"] + badge["width"] <= stock["x"] + stock["width"]
    assert stock["y"] <= badge["y"] and badge["y"] + badge["height"] <= stock["y"] + stock["height"]
    apart = (
        badge["y"] + badge["height"] <= first["y"]
        or first["y"] + first["height"] <= badge["y"]
        or badge["x"] + badge["width"] <= first["x"]
        or first["x"] + first["width"] <= badge["x"]
    )
    assert apart, (badge, first)


@pytest.mark.parametrize("size", [(390, 844), (360, 640)], ids=["390x844", "360x640"])
def test_phone_sizes_fit_the_board_with_cards_big_enough_to_touch(players, artifacts, size) -> None:
    """At both phone sizes: no horizontal scroll, every pile on screen, cards at least
    44 px wide (a finger), and the strips of covered cards grown into the height."""
    width, height = size
    tag = f"{width}x{height}"
    alice = players()
    phone = players(viewport={"width": width, "height": height}, has_touch=True, is_mobile=True)
    watcher = players(viewport={"width": width, "height": height}, has_touch=True, is_mobile=True)
    # every screen at this size: the lobby, the waiting room, the race, watching, results
    phone.open()
    phone.shot(artifacts / f"lobby-phone-{tag}.png", full_page=True)
    # the header in two lines: the name with the deck, sound and connection buttons, then
    # the account's line (it wrapped to three at these widths)
    page = phone.page
    middle = {}
    for part in (".topbar .brand", "#btn-deck", "#btn-sound", "#conn-state", "#account"):
        box = page.locator(part).bounding_box()
        assert box is not None, part
        middle[part] = box["y"] + box["height"] / 2
    first = middle.pop(".topbar .brand")
    account = middle.pop("#account")
    assert all(abs(y - first) < 4 for y in middle.values()), (first, middle)
    assert account > first + 10, (first, account)
    header = page.locator("header.topbar").bounding_box()
    assert header is not None and header["height"] < 100, header
    code = alice.create("Alice", seed=SEED)
    phone.join("Bob", code)
    phone.shot(artifacts / f"room-phone-{tag}.png")
    watcher.watch(code)
    for p in (alice, phone):
        p.ready()
    for p in (alice, phone):
        p.wait_racing()
    page = phone.page
    assert page.evaluate("() => document.documentElement.scrollWidth") <= width
    for pile in ("stock", "waste", "found-c", "found-s", "col1", "col7"):
        box = page.locator(phone.pile(pile)).bounding_box()
        assert box is not None and box["x"] >= 0 and box["x"] + box["width"] <= width
    card = page.locator(phone.card("Qs")).bounding_box()
    assert card is not None and card["width"] >= 44, card
    # column 7: six face-down cards, then the Th; each covered strip grown past 0.1 x card
    tops = page.evaluate(
        "() => [...document.querySelectorAll('#my-board [data-pile=\"col7\"] .card')]"
        ".map((c) => c.getBoundingClientRect().top)"
    )
    assert len(tops) == 7 and tops[1] - tops[0] > 0.1 * card["height"], tops
    assert tops[-1] + card["height"] <= height  # the whole deal on the first screen
    # the board uses the screen's height: the tableau reaches its bottom, the header is one
    # line during the race, and the place in the race shows above the board
    board = page.locator("#my-board").bounding_box()
    assert board is not None and board["height"] >= 0.6 * height, board
    assert height - 40 <= board["y"] + board["height"] <= height, board
    col = page.locator(phone.pile("col7")).bounding_box()
    assert col is not None and col["y"] + col["height"] >= height - 40, col  # a lane
    assert page.locator("#account").is_hidden()
    assert page.text_content("#stat-place") == "1=/2"
    assert page.locator("#btn-help").is_hidden()  # no "Keys" on a touch screen
    assert alice.page.locator("#btn-help").is_visible()  # ... but on a desktop
    # a finger's targets: the race bar's buttons (Resign here) 44x44 at least, and the
    # stock's count inside the stock, off column 1's card (issue 34)
    assert_touch_sized(page)
    assert_stock_count_clear(page)
    phone.shot(artifacts / f"race-phone-{width}x{height}.png")
    page.tap(phone.pile("stock"))
    page.wait_for_selector(f'{phone.pile("waste")} .card[data-card="8c"]')
    # one tap: the card where it goes best (the server's choice), slowly enough apart
    # that no tap is taken as a double tap's second half
    for card, pile, moves in (("Jh", "col1", 2), ("Th", "col2", 3), ("Ac", "found-c", 4)):
        page.wait_for_timeout(450)
        page.tap(phone.card(card))
        page.wait_for_selector(f'{phone.pile(pile)} .card[data-card="{card}"]')
        page.wait_for_function(f"() => window.kr.store.state.board.moves === {moves}")
    page.wait_for_timeout(450)
    page.tap(phone.card("Qs"), position={"x": 12, "y": 6})  # Qs Jh, all column 1: nowhere
    page.wait_for_selector('#refusal[data-reason="no_target"]')
    assert page.text_content("#refusal") == "No move for that card: Q\u2660 has nowhere to go"
    page.wait_for_timeout(450)
    page.tap(phone.card("Ac"))  # a foundation's card: a tap leaves it there
    page.wait_for_timeout(300)
    assert phone.state("s.board.moves") == 4
    assert page.evaluate("() => document.documentElement.scrollWidth") <= width
    watcher.page.wait_for_function(  # a rated race: outlines, the card home as a count
        '() => document.querySelector(\'.grid-cell[data-player="p2"]'
        " [data-pile=\"found-c\"] .count')?.textContent === '1/52'"
    )
    assert watcher.page.evaluate("() => document.documentElement.scrollWidth") <= width
    watcher.shot(artifacts / f"watch-phone-{tag}.png", full_page=True)
    for p in (phone, alice):
        p.page.click("#btn-resign")
        p.page.click("#btn-resign")
    phone.screen("results")
    assert page.evaluate("() => document.documentElement.scrollWidth") <= width
    table = page.locator("#results-table").bounding_box()  # whole, not scrolled sideways
    assert table is not None and table["x"] + table["width"] <= width, table
    phone.shot(artifacts / f"results-phone-{tag}.png", full_page=True)


def test_a_phones_race_buttons_are_finger_sized_and_the_stock_count_clear(
    players, artifacts
) -> None:
    """Issue 34, on the smallest phone (320x568, touch): a practice game, begun at once
    with no name typed and with undo by default (the lobby's Practice box ticked, the
    race form's Undo not), shows Undo, Hint, Finish it for me and Resign, each
    (Auto-complete and Skip to the end too, measured unhidden) at least 44x44 CSS px,
    while the board keeps its height, the header its one line and the page its width;
    the stock's count badge sits inside the stock, clear of column 1's card (it hung 6 px
    below it, over that card, at this size)."""
    width, height = 320, 568
    phone = players(viewport={"width": width, "height": height}, has_touch=True, is_mobile=True)
    phone.open(f"?seed={SEED}")
    assert phone.page.is_checked("#practice-undo")
    assert not phone.page.is_checked('#create-form [name="undo"]')  # a race's: off
    # and a private room's only: a public room's race is rated, and rated races have none
    assert phone.page.is_disabled('#create-form [name="undo"]')
    phone.page.check('#create-form [name="private"]')
    assert phone.page.is_enabled('#create-form [name="undo"]')
    phone.page.uncheck('#create-form [name="private"]')
    phone.page.click("#btn-practice")
    phone.wait_racing()
    assert phone.state("[s.room.players[0].name, s.room.settings.undo]") == ["Guest", True]
    page = phone.page
    for button in ("#btn-undo", "#btn-hint", "#btn-finish", "#btn-resign"):
        page.wait_for_selector(f"{button}:not([hidden])")
    shown = assert_touch_sized(page)
    assert {"btn-undo", "btn-hint", "btn-finish", "btn-resign"} <= shown.keys(), shown
    everything = assert_touch_sized(page, every=True)
    assert {"btn-auto", "btn-skip-finish"} <= everything.keys(), everything
    assert_stock_count_clear(page)
    assert page.evaluate("() => document.documentElement.scrollWidth") <= width
    board = page.locator("#my-board").bounding_box()
    assert board is not None and board["height"] >= 0.6 * height, board
    assert height - 40 <= board["y"] + board["height"] <= height, board
    header = page.locator("header.topbar").bounding_box()
    assert header is not None and header["height"] < 50, header  # one line
    phone.shot(artifacts / "race-phone-320x568-buttons.png")
    page.tap(phone.pile("stock"))  # the stock still takes a tap, its count drawn anew
    page.wait_for_selector(f'{phone.pile("waste")} .card[data-card="8c"]')
    assert page.text_content("#my-board .pile[data-pile='stock'] > .count") == "23"
    assert_stock_count_clear(page)


def test_a_spectators_boards_slide_the_cards_that_moved(players) -> None:
    """A spectator who has not asked for reduced motion sees a racer's card slide to its
    new place on the grid (and the pile it went to marked), not jump there."""
    alice, bob = players(), players()
    watcher = players(viewport={"width": 1280, "height": 900}, reduced_motion="no-preference")
    # unrated: a rated race's spectators see outlines, whose cards have no names to follow
    start_race(alice, [bob], seed=SEED, watchers=(watcher,), checks=("private",))
    grid = '.grid-cell[data-player="p1"]'
    watcher.page.wait_for_selector(f'{grid} .pile[data-pile="col5"] [data-card="Ac"]')
    watcher.page.evaluate(
        """(grid) => {
          window.__slid = [];
          new MutationObserver((changes) => {
            for (const c of changes) {
              if (c.target.classList.contains('sliding')) window.__slid.push(c.target.dataset.card);
            }
          }).observe(document.querySelector(grid), { subtree: true, attributes: true,
                                                    attributeFilter: ['class'] });
        }""",
        grid,
    )
    alice.page.dblclick(alice.card("Ac"))
    watcher.page.wait_for_selector(f'{grid} .pile[data-pile="found-c"] [data-card="Ac"]')
    watcher.page.wait_for_function("() => window.__slid.includes('Ac')")
    watcher.page.wait_for_selector(f'{grid} .pile.last-move[data-pile="found-c"]')


SHARE_SHEET = """
window.__shared = [];
Object.defineProperty(navigator, 'share', { configurable: true, value: async (data) => {
  window.__shared.push(data);
  if (window.__shared.length > 1) throw new DOMException('the player closed it', 'AbortError');
} });
"""


def test_the_share_sheet_where_the_browser_has_one(players) -> None:
    """A phone's share sheet (navigator.share; headless Chromium has none, so the page is
    given one that records what it is asked to share): the room's link goes to it; a
    share the player cancels says nothing. Without one the button is not shown."""
    phone = players(viewport=PHONE, has_touch=True, is_mobile=True, fresh=True)
    phone.context.add_init_script(SHARE_SHEET)
    desktop = players()
    code = phone.create("Alice")
    page = phone.page
    page.click("#btn-share-room")
    page.wait_for_function("() => window.__shared.length === 1")
    shared = page.evaluate("() => window.__shared[0]")
    assert shared["url"] == page.input_value("#room-link") and f"join={code}" in shared["url"]
    assert code in shared["text"]
    page.click("#btn-share-room")  # cancelled this time: no error shown
    page.wait_for_function("() => window.__shared.length === 2")
    page.wait_for_timeout(200)
    assert page.locator('#toast[data-kind="error"]').is_hidden()
    desktop.open()
    assert desktop.page.locator("#btn-share-room").is_hidden()
    assert desktop.page.locator("#btn-share-result").is_hidden()


def test_a_dropped_connection_shows_it_and_resumes(players) -> None:
    alice, bob = players(), players()
    start_race(alice, [bob], seed=SEED)
    page = alice.page
    page.dblclick(alice.card("Ac"))
    page.wait_for_selector(f'{alice.pile("found-c")} .card[data-card="Ac"]')
    # the lag: a move sends a ping along, and its round trip shows beside "online"
    page.wait_for_selector('#conn-state[data-lag="good"]')
    lag = alice.state("s.lag")
    assert isinstance(lag, int) and page.text_content("#conn-state") == f"online \u00b7 {lag} ms"
    # the browser's own console line for a reconnection tried while offline (a busy
    # machine's slow test can reach the client's next try)
    alice.expected.append(re.compile(r"ERR_INTERNET_DISCONNECTED"))
    alice.context.set_offline(True)
    page.evaluate("() => window.kr.net.drop()")
    page.wait_for_selector("#offline", state="visible")
    assert page.get_attribute("#conn-state", "data-state") != "open"
    assert page.get_attribute("#conn-state", "data-lag") == ""  # no lag while not online
    # While offline, Bob plays on.
    bob.page.click(bob.pile("stock"))
    alice.context.set_offline(False)
    page.wait_for_selector('#conn-state[data-state="open"]', timeout=15_000)
    page.wait_for_selector("#offline", state="hidden")
    page.wait_for_selector(f'{alice.pile("found-c")} .card[data-card="Ac"]')
    page.wait_for_selector('#race-standings .bar-row[data-player="p2"]')
    page.wait_for_function(
        "() => document.querySelector('#race-standings .bar-row[data-player=\"p2\"]')"
        ".textContent.match(/\\b1 move\\b/)"
    )
    # Play continues with the right sequence numbers.
    page.click(alice.pile("stock"))
    page.wait_for_function("() => window.kr.store.state.board.moves === 2")


def test_autocomplete_is_offered_by_the_server_and_wins(players, artifacts) -> None:
    ref = near_autocomplete()
    alice, bob = players(), players()
    wire = alice.wire()
    # The server's order (lowest rank first) is swapped for another legal one, highest
    # rank first: the client must play exactly the moves the boards name, in their form.
    swapped: list[tuple[dict, dict]] = []

    def highest_first(msg: dict) -> dict:
        board = msg.get("board")
        if msg.get("type") != "ack" or not board or not board.get("autocomplete_next"):
            return msg
        other = highest_home_move(board)
        swapped.append((board["autocomplete_next"], other))
        return {**msg, "board": {**board, "autocomplete_next": other}}

    wire.rewrite = highest_first
    start_race(alice, [bob], seed=None, cards=ref["cards"])
    page = alice.page
    assert page.locator("#btn-auto").is_hidden()
    alice.play_line(ref["line"])
    assert alice.state("s.board.autocomplete") is True
    page.locator("#btn-auto").wait_for(state="visible")
    to_go = 52 - alice.state("s.board.foundation")
    clicked = len(wire.log)
    assert page.get_attribute("#btn-sound", "aria-pressed") == "false"  # off at first
    page.click("#btn-sound")  # the win chime on
    page.click("#btn-auto")
    # the win moment: the race screen stays a moment, its cards home leaping, then results
    page.wait_for_selector("#screen-race:not([hidden]) #my-board.celebrate", timeout=30_000)
    assert page.evaluate("() => window.kr.chimes()") == 1
    alice.screen("results", timeout=30_000)
    assert alice.state("s.board.status") == "won"
    assert alice.state("s.board.foundation") == 52
    # every move auto-complete sent is the autocomplete_next of the board it had then
    named, played = None, []
    for i, (way, msg) in enumerate(wire.log):
        if way == "in" and msg.get("board"):
            named = msg["board"]["autocomplete_next"]
        elif way == "out" and msg["type"] == "move" and i >= clicked:
            assert named is not None
            assert {k: msg[k] for k in ("from", "to", "count")} == named
            played.append(named)
    assert len(played) == to_go
    assert any(ours != theirs for theirs, ours in swapped)  # the order was not the server's
    row = page.locator('#results-table tbody tr[data-player="p1"] td').all_text_contents()
    assert row[2] == "52/52" and row[5] == "won"
    # Bob, still racing, sees Alice finished; he resigns and the race ends.
    bob.page.wait_for_selector(
        '#race-standings .bar-row[data-player="p1"] .bar[aria-valuenow="52"]'
    )
    bob.page.click("#btn-resign")
    bob.page.click("#btn-resign")
    page.wait_for_selector('#reveal-check[data-ok="true"]')
    alice.shot(artifacts / "results-won.png", full_page=True)


def highest_home_move(board: dict) -> dict | None:
    """A column card that may go home now, the highest ranked (test-side rules only)."""
    best = None
    for i, column in enumerate(board["columns"]):
        if not column["up"]:
            continue
        card = column["up"][-1]
        rank, suit = RANKS.index(card[0]) + 1, card[1]
        top = board["foundations"][suit]
        home = RANKS.index(top[0]) + 1 if top else 0
        if home == rank - 1 and (best is None or rank > best[0]):
            best = (rank, {"from": f"col{i + 1}", "to": f"found-{suit}", "count": 1})
    return best[1] if best else None


def near_autocomplete() -> dict:
    """A Draw 1 deal that reaches auto-complete with the Queens and Kings to go, and the
    69 steps that get there (``line``): the stock holds the Aces to the Sixes of clubs,
    diamonds and hearts in rank order, each sent home as it is turned, and last the Queen
    of spades, laid on the King of hearts (column 1); columns 2-7 hold the other Kings and
    Queens face down at the bottom, under the Six of spades and the Sevens to the Jacks,
    which go home from the columns in order, column by column. (A reference line takes
    162-196 moves to get there.)"""
    stock = [r + s for r in "A2345" for s in "cdhs"] + ["6c", "6d", "6h", "Qs"]
    home = ["6s"] + [r + s for r in "789TJ" for s in "cdhs"]  # the columns' cards, in order
    line: list[object] = []
    for card in stock:
        to = "col1" if card == "Qs" else f"found-{card[1]}"
        line += ["draw", {"from": "waste", "to": to, "count": 1, "card": card}]
    columns = []
    for c, bottom in enumerate(["Kh", "Kc", "Kd", "Ks", "Qc", "Qd", "Qh"], 1):
        above, home = home[: c - 1], home[c - 1 :]
        columns.append([bottom, *reversed(above)])  # bottom to top: the first home on top
        line += [{"from": f"col{c}", "to": f"found-{x[1]}", "count": 1, "card": x} for x in above]
    cards = dealt(columns, stock)
    game = Game(Deal.from_cards(cards), Settings(draw=1))
    for step in line:
        game.play(step_to_move(step))
    assert game.autocomplete_available() and game.found_count == 44 and len(line) == 69
    return {"cards": cards, "draw": 1, "result": "win", "line": line}


@pytest.mark.parametrize(("button", "draw"), [("#btn-quick", 1), ("#btn-quick3", 3)])
def test_quick_match_pairs_two_players_on_one_deal(players, button, draw) -> None:
    ann, ben = players(), players()
    for p, name in ((ann, "Ann"), (ben, "Ben")):
        p.open()
        p.set_name(name)
    # Cancel leaves the queue on the same connection (no reconnection), then Ann queues again
    ann.page.evaluate("() => { window.queuedOn = window.kr.net.ws; }")
    ann.page.click(button)
    ann.screen("queue")
    ann.page.click("#btn-cancel-quick")
    ann.screen("lobby")
    ann.page.wait_for_timeout(300)  # an `unqueued` crossing nothing leaves the lobby shown
    assert ann.page.evaluate("() => window.kr.net.ws === window.queuedOn")
    assert ann.state("s.view") == "lobby"
    ann.page.click(button)
    ann.screen("queue")
    assert ann.state("s.quickDraw") == draw
    ben.page.click(button)
    for p in (ann, ben):
        p.wait_racing()
        assert p.state("s.room.settings.draw") == draw and p.state("s.room.quick") is True
    assert ann.state("s.board.columns") == ben.state("s.board.columns")
    assert ann.state("s.room.code") == ben.state("s.room.code")
    # The quick-matched player kept a token: a reload resumes the race.
    ann.page.reload()
    ann.screen("race")
    ann.page.wait_for_function("() => window.kr.store.state.board !== null")


def test_a_page_over_the_race_keeps_its_keys_and_a_declined_invite_stays_declined(
    players,
) -> None:
    """The game's keys are not read while a page (a profile, a replay) is shown over the
    race; an invitation declined with "Not now" is not joined on a later connection."""
    alice, bob, carol = players(), players(), players()
    code = start_race(alice, [bob], seed=SEED)
    page = alice.page
    who = alice.state("s.room.players.find((p) => p.id === 'p2').who")
    # (a guest who never finished a race has no profile yet: the browser logs the 404)
    alice.expected.append(re.compile(r"status of 404 .* @ .*/api/players/"))
    for route in (f"#/players/{who}", f"#/replay/{code}"):
        page.evaluate(f"() => {{ location.hash = {route!r}; }}")
        page.wait_for_function("() => document.body.dataset.route !== ''")
        page.keyboard.press("d")
        page.wait_for_timeout(300)
        assert alice.state("s.board.moves") == 0 and alice.state("s.inflight") is None
        page.evaluate("() => { history.back(); }")
        page.wait_for_function("() => document.body.dataset.route === ''")
    page.keyboard.press("d")  # on the race itself the key plays
    page.wait_for_selector('#stat-moves:text-is("1")')
    # carol, invited with no name, declines; then a reconnection must not seat her
    wire = carol.wire()
    carol.page.goto(f"{carol.base}?join={code}")
    carol.page.wait_for_selector('#conn-state[data-state="open"]')
    carol.page.click("#btn-invite-no")
    carol.set_name("Carol")  # a name now: a join would go out with it
    carol.page.evaluate("() => window.kr.net.drop()")
    carol.page.wait_for_selector('#conn-state:not([data-state="open"])')
    carol.page.wait_for_selector('#conn-state[data-state="open"]')
    carol.page.wait_for_timeout(800)
    assert carol.state("s.room") is None
    assert len(wire.opened) == 2 and not wire.sent("join"), wire.log
    assert len(alice.state("s.room.players")) == 2


def test_two_tabs_share_the_token_without_taking_each_others_place(players) -> None:
    """Tabs of one browser share kr.session: a tab watching another room watches it again
    after a drop (it does not take over the race), and leaving it keeps the racing tab's
    token (a reload of that tab resumes the race)."""
    alice, bob, carol = players(), players(), players()
    code = start_race(alice, [bob], seed=SEED)
    other = carol.create("Carol")  # a room of carol's, waiting
    tab = alice.context.new_page()
    tab.goto(f"{alice.base}?watch={other}")
    tab.wait_for_selector("#screen-watch:not([hidden])")
    tab.evaluate("() => window.kr.net.drop()")
    tab.wait_for_selector('#conn-state:not([data-state="open"])')
    tab.wait_for_selector('#conn-state[data-state="open"]')
    tab.wait_for_function(
        f"() => window.kr.store.state.role === 'spectator' && window.kr.store.state.room"
        f" && window.kr.store.state.room.code === {other!r}"
    )
    assert "?watch=" in tab.url
    tab.click("#btn-stop-watch")
    tab.wait_for_function("() => window.kr.store.state.room === null")
    tab.close()
    alice.page.reload()
    alice.screen("race")
    assert alice.state("s.room.code") == code and alice.state("s.role") == "player"


def test_keys_pressed_ahead_of_the_answers_play_on_the_board_they_lead_to(players) -> None:
    """30 presses of D at once on a fresh deal: 24 draws, a recycle, 5 draws, every one
    acknowledged (a key read the board before its earlier moves were answered, and sent
    a draw on an empty stock)."""
    alice, bob = players(), players()
    start_race(alice, [bob], seed=SEED)
    page = alice.page
    page.locator("#my-board").click(position={"x": 1, "y": 1})  # the page has the keys
    for _ in range(30):
        page.keyboard.press("d")
    page.wait_for_selector('#stat-moves:text-is("30")', timeout=30_000)
    assert alice.state("s.board.stock") == 24 - 5 and alice.state("s.board.waste.count") == 5
    assert page.locator('#toast[data-kind="error"]').is_hidden()


def test_piles_are_read_with_their_counts_and_the_lag_is_not_announced(players) -> None:
    """Assistive technology reads each pile's label (a group: a label on a plain div is
    not exposed); the connection line, whose lag changes every ping, is no live region
    (the offline banner is the alert); between reconnection attempts it says so."""
    alice, bob = players(), players()
    start_race(alice, [bob], seed=SEED)
    page = alice.page
    column = page.get_by_role("group", name=re.compile(r"^Column 7: 6 face down, Ten of hearts$"))
    assert column.count() == 1
    page.click(alice.pile("stock"))
    page.wait_for_selector('#stat-moves:text-is("1")')
    assert page.get_by_role("group", name="Waste: Eight of clubs", exact=True).count() == 1
    assert page.get_attribute("#conn-state", "role") is None
    assert page.get_attribute("#offline", "role") == "alert"
    # the server gone: between attempts the line says the client is reconnecting
    page.route_web_socket(re.compile(r"/ws$"), lambda ws: ws.close())
    page.evaluate("() => window.kr.net.drop()")
    page.wait_for_selector('#conn-state[data-state="closed"]')
    assert page.text_content("#conn-state") == "reconnecting\u2026"


def test_a_screen_reader_hears_the_piles_the_pick_and_the_move(players) -> None:
    """Issue 34, as the accessibility tree has it (what a screen reader reads): each pile
    named as a whole, its face-down cards counted in its name and hidden one by one (they
    were six "face-down card" images in column 7); the picked card a pressed button and
    the pick said in the live region, then the move; the lobby's second quick match
    named as one. Seed 42: columns Qs, Js, Jh, 2d, Ac, 6d, Th."""
    alice = players()
    alice.open(f"?seed={SEED}")
    page = alice.page
    page.wait_for_selector("#btn-quick3")  # (the lobby shows once its first answers are in)
    assert 'button "Quick match: Draw 3"' in page.locator("#btn-quick3").aria_snapshot()
    page.click("#btn-practice")
    alice.wait_racing()
    board = page.locator("#my-board")
    tree = board.aria_snapshot()
    for line in (
        'button "Stock: 24 cards, draw"',
        'button "Waste: empty"',
        'button "Clubs foundation: empty"',
        'group "Column 1: Queen of spades"',
        'group "Column 7: 6 face down, Ten of hearts"',
    ):
        assert line in tree, tree
    assert "face-down" not in tree and "img" not in tree, tree

    def said() -> str:
        return page.locator("#announce").aria_snapshot()

    page.keyboard.press("3")  # pick column 3's Jack of hearts
    page.wait_for_selector(f"{alice.card('Jh')}.selected")
    assert 'button "Jack of hearts, column 3" [pressed]' in board.aria_snapshot()
    assert said() == "- text: Picked Jack of hearts from column 3"
    page.keyboard.press("1")  # ... onto column 1's Queen of spades
    page.wait_for_selector('#stat-moves:text-is("1")')
    turned = card_words(alice.state("s.board.columns[2].up[0]"))
    assert said() == f"- text: Jack of hearts to column 1, turning up the {turned}"
    tree = board.aria_snapshot()
    assert "[pressed]" not in tree, tree
    assert 'group "Column 1: Queen of spades, Jack of hearts"' in tree, tree
    assert f'group "Column 3: 1 face down, {turned}"' in tree, tree
    page.keyboard.press("5")  # a pick put back is said too
    page.wait_for_selector(f"{alice.card('Ac')}.selected")
    page.keyboard.press("Escape")
    page.wait_for_selector("#my-board .card.selected", state="detached")
    assert said() == "- text: Unpicked Ace of clubs from column 5"
    page.dblclick(alice.card("Ac"))  # home
    page.wait_for_selector('#stat-moves:text-is("2")')
    assert 'group "Clubs foundation: Ace of clubs"' in board.aria_snapshot()


def test_a_new_screen_starts_at_its_top(players) -> None:
    """A landscape phone scrolled down the lobby to Practice: the race opens at its top,
    the stock and the stats in view."""
    ann = players(viewport={"width": 667, "height": 375}, has_touch=True, is_mobile=True)
    ann.open(f"?seed={SEED}")
    ann.set_name("Ann")
    ann.page.locator("#btn-practice").scroll_into_view_if_needed()
    assert ann.page.evaluate("() => window.scrollY") > 0
    ann.page.click("#btn-practice")
    ann.wait_racing()
    assert ann.page.evaluate("() => window.scrollY") == 0
    box = ann.page.locator(ann.pile("stock")).bounding_box()
    assert box is not None and box["y"] >= 0


def test_draw_three_fans_the_waste_and_undo_takes_it_back(players, artifacts) -> None:
    alice, bob = players(), players()
    start_race(alice, [bob], seed=SEED, draw="3", checks=("private", "undo"))
    page = alice.page
    assert page.locator("#btn-undo").is_disabled()
    page.click(alice.pile("stock"))
    fan = page.locator(f"{alice.pile('waste')} .card")
    fan.nth(2).wait_for()
    assert fan.count() == 3
    lefts = [fan.nth(i).bounding_box()["x"] for i in range(3)]
    assert lefts[0] < lefts[1] < lefts[2]  # fanned left to right, top card last
    # said as three cards turned, not as one drawn (found by an outside tester)
    a, b, c = (card_words(name) for name in alice.state("s.board.waste.fan"))
    said = f"Drew three cards: the {a}, the {b} and the {c} on top"
    page.wait_for_selector(f'#announce:text-is("{said}")')
    alice.shot(artifacts / "race-draw3.png")
    page.click("#btn-undo")
    page.wait_for_selector(f"{alice.pile('waste')}:not(:has(.card))")
    page.wait_for_selector('#stat-moves:text-is("2")')


def test_practice_with_a_hint_then_finish_to_a_win(players, artifacts) -> None:
    ref = quick_win()
    alice = players()
    practise(alice, cards_query(ref), "Alice")
    page = alice.page
    assert alice.state("s.room.practice") is True
    assert page.locator("#btn-resign").is_visible()
    board = page.locator("#my-board")
    before = board.bounding_box()
    page.click("#btn-hint")
    page.wait_for_selector("#hint-box:not([hidden])")
    # the hint does not move the board (a line inserted above it pushed it down 45 px) ...
    assert board.bounding_box() == before
    # ... it shows on the cards: the card(s) to move and the pile they go to (or the stock
    # for a draw), as the server named them (the solver's choice, within its budget)
    hint = alice.state("s.hint")
    marked = page.locator("#my-board .hint-from, #my-board .hint-to")
    shown = marked.count()
    if hint.get("action"):
        assert page.locator(f"{alice.pile('stock')}.hint-from").count() == 1
        assert shown == 1
    else:
        src = hint["from"]
        moved = (
            alice.state(f"s.board.columns[{int(src[3:]) - 1}].up.slice(-{hint['count']})")
            if src.startswith("col")
            else [alice.state("s.board.waste.fan.at(-1)")]
            if src == "waste"
            else [alice.state(f"s.board.foundations[{src[-1]!r}]")]
        )
        from_cards = page.locator(f"{alice.pile(hint['from'])} .card.hint-from")
        assert [c.get_attribute("data-card") for c in from_cards.all()] == moved
        assert page.locator(f"{alice.pile(hint['to'])}.hint-to").count() == 1
        assert shown == len(moved) + 1
        assert card_words(moved[0]) in (page.text_content("#hint-box") or "")
    # ... and in words, said in the live region (the hint's line is no live region of
    # its own: a region shown with its words in it is not always read)
    words = page.text_content("#hint-box") or ""
    assert words.startswith("Hint: ") and f"a winning line of {hint['line']} moves" in words
    assert page.text_content("#announce") == words
    assert page.get_attribute("#hint-box", "aria-live") == "off"
    # a refusal meanwhile hides none of it
    page.evaluate("() => window.kr.intent({ from: 'col1', to: 'col1', count: 1 }, null)")
    page.wait_for_selector('#refusal[data-reason="same_pile"]')
    refusal = page.locator("#refusal").bounding_box()
    line = page.locator("#hint-box").bounding_box()
    assert refusal is not None and line is not None
    assert refusal["y"] + refusal["height"] <= line["y"], (refusal, line)
    assert marked.count() == shown and board.bounding_box() == before
    alice.shot(artifacts / "practice-hint.png")
    move = (
        {"action": hint["action"]}
        if hint.get("action")
        else {k: hint[k] for k in ("from", "to", "count")}
    )
    page.evaluate("(move) => window.kr.intent(move, null)", move)  # (the refusal's seq again)
    page.wait_for_selector('#stat-moves:text-is("1")')
    # the next move clears the hint, on the cards and in words
    assert marked.count() == 0 and page.locator("#hint-box").is_hidden()
    assert board.bounding_box() == before
    page.click("#btn-finish")
    # the playback's counter, changing every step, is not said each time
    page.wait_for_selector('#hint-box[aria-live="off"]:has-text("The solver plays its line")')
    page.click("#btn-skip-finish")  # the line is shown move by move: skip to the end
    alice.screen("results", timeout=30_000)
    page.wait_for_selector('#results-title:text-is("Results: finished by the solver")')
    page.wait_for_selector("#analysis:not([hidden])", timeout=30_000)
    par = page.text_content("#analysis-par") or ""
    assert re.fullmatch(
        r"Par: \d+ moves, the shortest winning line the solver found from the deal", par
    ), par
    page.wait_for_selector('#analysis-players li[data-player="p1"][data-result="won"]')
    assert alice.state("s.board.status") == "won"
    # the solver's win is no win moment of the player's
    assert alice.state("s.winMoment") == 0
    assert page.locator("#my-board.celebrate").count() == 0
    alice.shot(artifacts / "practice-results.png", full_page=True)


def test_rematch_prompt_reaches_the_other_player(players) -> None:
    alice, bob = players(), players()
    code = start_race(alice, [bob], seed=SEED)
    for p in (alice, bob):
        p.page.click("#btn-resign")
        p.page.click("#btn-resign")
    for p in (alice, bob):
        p.page.wait_for_selector('#results-sub:has-text("is over")')
    assert alice.page.locator("#results-note").is_visible()  # how a race ranks its players
    assert alice.page.text_content("#btn-rematch") == "Rematch"
    alice.page.click("#btn-rematch")
    alice.screen("room")
    new = alice.page.text_content("#room-code")
    assert new and new != code
    bob.page.wait_for_selector("#btn-rematch-join:not([hidden])")
    assert new in (bob.page.text_content("#rematch-note") or "")
    bob.page.click("#btn-rematch-join")
    bob.screen("room")
    assert bob.page.text_content("#room-code") == new
    alice.page.wait_for_function(
        "() => document.querySelector('#room-players').textContent.includes('Bob')"
    )


def test_a_spectator_with_no_name_joins_the_rematch_after_choosing_one(players) -> None:
    alice, bob, sam = players(), players(), players()
    code = start_race(alice, [bob], seed=SEED, capacity="3")
    sam.watch(code)  # a fresh browser: no name
    for p in (alice, bob):
        p.page.click("#btn-resign")
        p.page.click("#btn-resign")
    alice.page.wait_for_selector('#results-sub:has-text("is over")')
    alice.page.click("#btn-rematch")
    alice.screen("room")
    new = alice.page.text_content("#room-code")
    sam.page.wait_for_selector("#btn-rematch-join:not([hidden])")
    sam.page.click("#btn-rematch-join")
    # the lobby asks for a name, the rematch as its invitation
    sam.page.wait_for_selector("#invite-box:not([hidden])")
    assert sam.page.text_content("#invite-code") == new
    sam.set_name("Sam")
    sam.page.click("#btn-invite-join")
    sam.screen("room")
    assert sam.page.text_content("#room-code") == new and sam.state("s.role") == "player"


def test_finish_after_the_race_continues_in_practice(players) -> None:
    ref = quick_win()
    alice, bob = players(), players()
    code = start_race(alice, [bob], seed=None, cards=ref["cards"])
    page = alice.page
    assert page.locator("#btn-hint").is_hidden() and page.locator("#btn-finish").is_hidden()
    page.click("#btn-resign")
    page.click("#btn-resign")
    alice.screen("results")
    # while Bob races, finishing would show Alice the deal: no Finish
    # (her row shows 0 cards from the start: wait for the resignation itself)
    bob.page.wait_for_selector('#race-standings [data-player="p1"]:has-text("resigned")')
    row = '#race-standings .bar-row[data-player="p1"] .bar[aria-valuenow="0"]'
    assert bob.page.locator(row).count() == 1
    assert page.locator("#btn-finish-results").is_hidden()
    bob.page.click("#btn-resign")
    bob.page.click("#btn-resign")
    page.wait_for_selector('#results-sub:has-text("is over")')
    page.click("#btn-finish-results")
    page.wait_for_function(f"() => window.kr.store.state.room.parent === '{code}'")
    page.click("#btn-skip-finish")  # the line is shown move by move: skip to the end
    alice.screen("results", timeout=30_000)
    page.wait_for_selector('#results-title:text-is("Results: finished by the solver")')
    assert code in (page.text_content("#results-sub") or "")
    # back to the race: Alice resumes as its player (resigned), the race over
    page.click("#btn-back-race")
    page.wait_for_function(f"() => window.kr?.store.state.room?.code === '{code}'")
    assert page.evaluate("() => window.kr.store.state.role") == "player"
    assert page.evaluate("() => window.kr.store.state.board.status") == "resigned"
    assert page.evaluate("() => window.kr.store.state.room.parent") is None


def test_a_room_can_show_its_race_to_spectators_behind_it(players) -> None:
    host, watcher = players(), players()
    code = host.create("Hostess", spectator_delay="30", checks=("private",))  # unrated
    assert host.state("s.room.spectator_delay") == 30
    assert "spectators 30 s behind" in (host.page.text_content("#room-settings") or "")
    watcher.watch(code)
    watcher.page.wait_for_function(
        "() => document.querySelector('#watch-settings').textContent"
        ".includes('spectators 30 s behind')"
    )


def test_a_spectator_behind_the_race_sees_the_time_of_the_boards_shown(players) -> None:
    """Found by an outside tester: a spectator of a race shown 10 s behind saw the live
    race clock beside boards 10 s old. The clock is now the time the boards show, and
    says how far behind it is: a move shows with the clock at the time it was made."""
    alice, bob, watcher = players(), players(), players()
    start_race(  # unrated: rated races show their spectators outlines
        alice, [bob], seed=SEED, watchers=(watcher,), spectator_delay="10", checks=("private",)
    )
    alice.page.dblclick(alice.card("Ac"))  # home
    alice.page.wait_for_function("() => window.kr.store.state.board.foundation === 1")
    moved_ms = alice.state("s.board.reached_ms")  # the race time of the move
    page = watcher.page
    page.wait_for_function(  # the race has run 2.5 s: the boards shown are the deal's
        "() => { const s = window.kr.store.state;"
        " return Date.now() + s.offset - s.room.start_at >= 2500; }"
    )
    assert page.text_content("#watch-phase") == "racing \u00b7 0:00 \u00b7 10 s behind"
    shown = page.wait_for_function(  # the clock on the frame that first shows the move
        "() => document.querySelector("
        '\'.grid-cell[data-player="p1"] [data-pile="found-c"] [data-card="Ac"]\')'
        " && document.querySelector('#watch-phase').textContent",
        timeout=20_000,
    ).json_value()
    m = re.fullmatch(r"racing \u00b7 (\d+):(\d\d) \u00b7 10 s behind", shown)
    assert m, shown
    seconds = int(m[1]) * 60 + int(m[2])
    assert moved_ms // 1000 <= seconds <= moved_ms / 1000 + 1, (shown, moved_ms)


def test_buttons_and_game_over_follow_the_servers_word_in_practice(players) -> None:
    """Hint and Finish show as the server's can_hint / can_finish say, and the game is over
    when the server's board says ``over``: rewritten answers move the client with them.
    First, the lobby below the name waits for its first answers (a box filled by a late
    one moved the buttons under a pointer on its way to them)."""
    alice = players()
    wire = alice.wire()
    page = alice.page
    wire.hold = lambda msg: msg["type"] == "challenges"
    alice.open(f"?seed={SEED}")
    page.wait_for_function("() => window.kr.store.state.arenas && window.kr.store.state.counts")
    assert page.get_attribute("#screen-lobby", "aria-busy") == "true"
    assert not page.is_visible("#btn-practice") and not page.is_visible("#btn-create")
    assert page.is_visible("#name")
    wire.release()
    page.wait_for_selector('#screen-lobby[aria-busy="false"] #btn-practice')
    alice.set_name("Alice")
    page.click("#btn-practice")
    alice.wait_racing()
    page.wait_for_selector("#btn-hint:not([hidden])")
    page.wait_for_selector("#btn-finish:not([hidden])")
    assert alice.state("[s.canHint, s.canFinish]") == [True, True]

    def no_help(msg: dict) -> dict:
        return {**msg, "can_hint": False, "can_finish": False} if msg["type"] == "ack" else msg

    wire.rewrite = no_help  # a practice game on: still no help when the server says so
    page.click(alice.pile("stock"))
    page.wait_for_selector('#stat-moves:text-is("1")')
    page.wait_for_selector("#btn-hint", state="hidden")
    page.wait_for_selector("#btn-finish", state="hidden")
    wire.rewrite = None
    page.click(alice.pile("stock"))
    page.wait_for_selector('#stat-moves:text-is("2")')
    page.wait_for_selector("#btn-hint:not([hidden])")
    page.wait_for_selector("#btn-finish:not([hidden])")

    def over(msg: dict) -> dict:
        return {**msg, "board": {**msg["board"], "over": True}} if msg["type"] == "ack" else msg

    wire.rewrite = over  # a game still playing, but the server's board says it is over
    page.click(alice.pile("stock"))
    alice.screen("results")
    assert alice.state("s.board.status") == "playing"
    wire.rewrite = None
    page.reload()  # the welcome's board is not over: back to the game, which goes on
    alice.screen("race")
    page.wait_for_selector('#stat-moves:text-is("3")')
    page.click(alice.pile("stock"))
    page.wait_for_selector('#stat-moves:text-is("4")')
    assert wire.sent("hint") == [] and wire.sent("finish") == []


def test_the_phase_and_help_follow_the_server_in_a_race(players) -> None:
    """Past start_at the race starts only with the server's start message; Finish it for
    me shows when the server says can_finish (off after resigning while the race runs)."""
    alice, bob = players(), players()
    wire = alice.wire()
    wire.hold = lambda msg: msg["type"] == "start"
    code = alice.create("Alice", seed=SEED)
    bob.join("Bob", code)
    alice.ready()
    bob.ready()
    bob.wait_racing()
    page = alice.page
    page.wait_for_function(
        "() => { const s = window.kr.store.state;"
        " return s.room.start_at && Date.now() + s.offset >= s.room.start_at + 500; }"
    )
    assert alice.state("s.room.phase") == "countdown"
    assert page.locator("#countdown").is_visible()
    assert page.text_content("#countdown-n") == "1"
    assert wire.held and alice.state("s.board") is None
    wire.release()
    alice.wait_racing()
    assert alice.state("s.room.phase") == "racing"
    assert alice.state("[s.canHint, s.canFinish]") == [False, False]
    assert page.locator("#btn-hint").is_hidden() and page.locator("#btn-finish").is_hidden()

    def finish_allowed(msg: dict) -> dict:
        return {**msg, "can_finish": True} if msg["type"] == "ack" else msg

    wire.rewrite = finish_allowed  # a rewritten ack: the client shows what it is told
    page.click("#btn-resign")
    page.click("#btn-resign")
    alice.screen("results")  # the board says over
    assert alice.state("s.board.over") is True
    page.wait_for_selector("#btn-finish-results:not([hidden])")
    wire.rewrite = None
    page.reload()  # the server's welcome: no finish while Bob still races
    alice.screen("results")
    assert alice.state("[s.canHint, s.canFinish]") == [False, False]
    assert page.locator("#btn-finish-results").is_hidden()
    # Bob resigns: the server's room event ends the race for both
    bob.page.click("#btn-resign")
    bob.page.click("#btn-resign")
    for p in (alice, bob):
        p.page.wait_for_selector('#results-sub:has-text("is over")')
        assert p.state("s.room.phase") == "finished"
    page.wait_for_selector("#btn-finish-results:not([hidden])")
    assert bob.state("s.canFinish") is True


def test_resign_is_offered_once_the_race_has_started(players) -> None:
    """The server refuses a resignation in the countdown: until the start message the
    Resign button is off (and says why); from the start it resigns."""
    alice, bob = players(), players()
    wire = alice.wire()
    wire.hold = lambda msg: msg["type"] == "start"  # the countdown lasts until released
    code = alice.create("Alice", seed=SEED)
    bob.join("Bob", code)
    alice.ready()
    bob.ready()
    alice.screen("race")
    page = alice.page
    page.wait_for_selector("#countdown:not([hidden])")
    resign = page.locator("#btn-resign")
    assert resign.is_visible() and resign.is_disabled()
    assert resign.get_attribute("title") == "You can resign once the race has started"
    resign.click(force=True)  # a press does nothing
    resign.click(force=True)
    assert page.text_content("#btn-resign") == "Resign"
    assert alice.state("s.room.phase") == "countdown" and not wire.sent("resign")
    wire.release()
    alice.wait_racing()
    assert resign.is_enabled() and not resign.get_attribute("title")
    resign.click()
    resign.click()
    alice.screen("results")
    assert [m["seq"] for m in wire.sent("resign")] == [1]
    assert alice.state("s.board.status") == "resigned"


RESIGN_OFF = (
    "() => { const b = document.querySelector('#btn-resign');"
    " return document.body.dataset.view === 'race' && b.disabled"
    " && b.title === 'Your game is over'; }"
)


def test_resign_is_off_once_the_players_own_game_is_over(players) -> None:
    """Found by an outside tester: in a race, during the win moment after one's own win,
    Resign stayed on (a first press asked "Really resign?", a second did nothing); in a
    practice game won, it was off but said "You can resign once the race has started".
    Whenever the player's own game is over it is off, and says so."""
    ref = quick_win()
    alice, bob, carol = players(), players(), players()
    wire = alice.wire()
    start_race(alice, [bob], seed=None, cards=ref["cards"])
    alice.play_line(ref["line"])  # Alice wins; Bob races on
    alice.page.wait_for_function(RESIGN_OFF, timeout=2000)  # within the win moment
    for _ in range(2):
        alice.page.locator("#btn-resign").click(force=True)
    assert alice.page.text_content("#btn-resign") == "Resign"
    alice.screen("results")
    assert wire.sent("resign") == []
    assert alice.state("s.board.status") == "won"
    # a practice game won (by the solver: its line being shown), its room finished: the same
    practise(carol, cards_query(ref), "Carol")
    carol.page.click("#btn-finish")
    carol.page.wait_for_function(
        "() => { const s = window.kr.store.state; return s.playback && s.board.over"
        " && s.room.phase === 'finished'; }",
        timeout=30_000,
    )
    carol.page.wait_for_function(RESIGN_OFF)


SESSION_GONE = "() => !JSON.parse(localStorage.getItem('kr.session') || 'null')"


def opens_in_the_lobby(player: Player) -> None:
    """The page, just (re)opened, gave up the old practice game: the lobby, no room, no
    session kept, nothing under "Your races"."""
    player.page.wait_for_selector('#conn-state[data-state="open"]')
    player.page.wait_for_function(SESSION_GONE)
    player.page.wait_for_timeout(300)  # the resume's answer, its effects drawn
    player.screen("lobby")
    assert player.state("s.room") is None
    assert player.page.is_hidden("#screen-results")
    assert player.page.is_hidden("#your-rooms-box")


def test_a_practice_game_over_reopens_in_the_lobby(players) -> None:
    """Issue 34: once a practice game was over, a reload (or the site opened again in
    the same browser) resumed it and landed on its old results. Won (here by the solver,
    the quickest way to a won board) or resigned, the page opens in the lobby; a practice
    game still on comes back, and so does a race the player is still in (the reload
    tests of the race above and test_the_phase_and_help_follow_the_server_in_a_race)."""
    alice = players()
    practise(alice, cards_query(quick_win()), "Alice")
    alice.page.click("#btn-finish")  # won by the solver, its line skipped to the end
    alice.page.click("#btn-skip-finish")
    alice.screen("results", timeout=30_000)
    alice.page.wait_for_function(  # (the room's end may come a moment after the results)
        "() => { const s = window.kr.store.state;"
        " return s.board.status === 'won' && s.room.phase === 'finished'; }"
    )
    alice.page.reload()
    opens_in_the_lobby(alice)
    # resigned, then the site opened again in a new tab of the same browser
    practise(alice)
    alice.page.click("#btn-resign")
    alice.page.click("#btn-resign")
    alice.screen("results")
    tab = Player(alice.context, alice.base)
    tab.open()
    opens_in_the_lobby(tab)
    tab.check_errors()
    # and a practice game still on comes back after a reload, as a race does
    practise(alice)
    alice.page.click(alice.pile("stock"))
    alice.page.wait_for_selector('#stat-moves:text-is("1")')
    alice.page.reload()
    alice.screen("race")
    alice.page.wait_for_selector('#stat-moves:text-is("1")')
    # her own name in the standings: her profile, under that name, though she has only
    # practised (issue 34: "No such player"); Back to her game
    alice.page.click("#race-standings .bar-row.me a.profile-link")
    alice.page.wait_for_selector('#profile-view:not([hidden])[data-state="ok"]')
    assert alice.page.text_content("#profile-title") == "Alice guest"
    assert "No races yet." in (alice.page.text_content("#profile-body") or "")
    alice.page.click("#profile-back")
    alice.screen("race")


def test_the_four_colour_deck_is_a_choice_kept_by_the_browser(players) -> None:
    alice, bob = players(), players()
    alice.open()
    alice.page.click("#btn-sound")  # Alice's sound on (kept by her browser), Bob's off
    start_race(alice, [bob], seed=SEED)
    page = alice.page
    # the race's start heard by Alice alone (test_feel.py hears the other sounds)
    sounds = "() => window.kr.sounds().start"
    assert (page.evaluate(sounds), bob.page.evaluate(sounds)) == (1, 0)

    def colour(card: str) -> str:
        found = f"document.querySelector('{alice.card(card)}')"
        return page.evaluate(f"() => getComputedStyle({found}).color")

    assert (colour("2d"), colour("Ac")) == ("rgb(200, 16, 46)", "rgb(22, 24, 29)")
    assert page.get_attribute("#btn-deck", "aria-pressed") == "false"
    # the header's buttons stay put as the connection's round trip changes ("online · 3
    # ms", "online · 120 ms"): a pong moved a button from under a click on its way
    boxes = []
    for lag in (3, 120, 9999, None):
        page.evaluate("(lag) => window.kr.store.update((s) => { s.lag = lag; })", lag)
        boxes.append(page.locator("#btn-deck").bounding_box())
    assert boxes[1:] == boxes[:-1], boxes
    page.click("#btn-deck")  # diamonds blue, clubs green
    assert (colour("2d"), colour("Ac")) == ("rgb(11, 92, 196)", "rgb(8, 122, 52)")
    assert colour("Jh") == "rgb(200, 16, 46)"  # hearts stay red, spades black
    assert page.get_attribute("#btn-deck", "aria-pressed") == "true"
    # the table's theme and the card back, from the header's preferences: each changes
    # the table (the root's background) or the stock's back, the cards' faces kept
    looks = (
        "() => [getComputedStyle(document.documentElement).backgroundImage, getComputedStyle("
        "document.querySelector('#my-board .pile[data-pile=\"stock\"] .card.back'))"
        ".backgroundImage]"
    )
    seen = {"green": page.evaluate(looks)}
    page.click("#btn-prefs")
    for theme in ("dark", "light"):
        page.check(f'#prefs-panel input[name="pref-theme"][value="{theme}"]')
        seen[theme] = page.evaluate(looks)
        # the text and the muted text readable on every shade of the new tables (4.5:1)
        ink = colours(page.evaluate("() => getComputedStyle(document.body).color"))[0]
        muted = page.evaluate(
            "() => getComputedStyle(document.body).getPropertyValue('--muted').trim()"
        )
        for felt in page.evaluate(FELT):
            for text in (ink, hex_rgb(muted)):
                assert contrast(text, hex_rgb(felt)) >= 4.5, (theme, text, felt)
    page.check('#prefs-panel input[name="pref-back"][value="red"]')
    seen["red"] = page.evaluate(looks)
    tables = {seen[t][0] for t in ("green", "dark", "light")}
    assert len(tables) == 3, seen
    assert seen["green"][1] == seen["dark"][1] == seen["light"][1] != seen["red"][1], seen
    assert seen["red"][0] == seen["light"][0], seen
    assert colour("2d") == "rgb(11, 92, 196)"  # the four-colour deck on the light table
    assert colour("Jh") == "rgb(200, 16, 46)"
    page.keyboard.press("Escape")  # the preferences close (not a key of the game)
    page.wait_for_selector("#prefs-panel", state="hidden")
    page.reload()  # kept by this browser
    page.wait_for_selector(alice.card("2d"))
    assert colour("2d") == "rgb(11, 92, 196)"
    assert page.evaluate(looks) == seen["red"]  # the light table and the red back
    assert page.get_attribute("body", "data-theme") == "light"
    assert page.is_checked('#prefs-panel input[name="pref-back"][value="red"]')
    page.click("#btn-deck")
    assert colour("2d") == "rgb(200, 16, 46)"


def test_a_game_resigned_in_another_tab_ends_it_in_this_one(players) -> None:
    """Two tabs of one browser hold the same seat (one guest); the player resigns in the
    second: the first shows the game as over, with the opponent's board, as the second
    does, rather than a board that no move can change any more."""
    alice, bob = players(), players()
    code = start_race(alice, [bob], seed=SEED)
    tab = alice.context.new_page()
    tab.goto(f"{alice.base}?join={code}")
    tab.wait_for_selector("#screen-race:not([hidden])")
    tab.wait_for_function("() => window.kr.store.state.player === 'p1'")
    tab.click("#btn-resign")
    tab.click("#btn-resign")
    tab.wait_for_selector("#screen-results:not([hidden])")
    alice.screen("results")
    page = alice.page
    page.wait_for_selector('#results-boards .grid-cell[data-player="p2"] .board')
    assert "Your game is over" in (page.text_content("#results-title") or "")
    assert alice.state("s.board.status") == "resigned"
    bob.page.click(bob.pile("stock"))  # the opponent's moves reach it with boards
    page.wait_for_function(
        '() => document.querySelector(\'#results-boards .grid-cell[data-player="p2"]'
        " .pile[data-pile=\"stock\"] .count').textContent === '23'"
    )
    tab.close()


def test_a_held_key_plays_every_move_within_the_servers_rate(players) -> None:
    """70 presses of D as fast as the keyboard sends them (a held key repeats at about
    30 a second): every one is played, in order, on the same connection. The client keeps
    under the server's message rate (20 a second, 40 at once): it sent a ping with nearly
    every move, and a held key got the connection closed (1008) and presses lost."""
    alice, bob = players(), players()
    start_race(alice, [bob], seed=SEED)
    page = alice.page
    sockets: list[object] = []
    page.on("websocket", lambda ws: sockets.append(ws))
    page.locator("#my-board").click(position={"x": 1, "y": 1})  # the page has the keys
    for _ in range(70):
        page.keyboard.press("d")
    page.wait_for_selector('#stat-moves:text-is("70")', timeout=30_000)
    assert sockets == [], "the connection was made again"
    assert page.locator('#toast[data-kind="error"]').is_hidden()
