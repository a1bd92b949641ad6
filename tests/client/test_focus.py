"""A keyboard player's focus (outside testers): a new screen puts the focus on that
screen (not on <body>, from where Tab starts again at the header), never taking it from
a field being typed in."""

from __future__ import annotations

import re

from .conftest import practise, start_race

SEED = "42"

# what has the focus: its id, or its data-key on the board ("stock", "col1:0"), or BODY
FOCUSED = (
    "() => { const a = document.activeElement;"
    " return a === document.body ? 'BODY' : a.id || a.dataset.key || a.tagName; }"
)


def focused(page) -> str:
    return page.evaluate(FOCUSED)


def press(page, selector: str, times: int = 1) -> None:
    """A keyboard player's press of a control: focused once shown (the lobby's are out of
    sight and reach until its first answers are in), then Enter."""
    page.wait_for_selector(selector)
    page.focus(selector)
    for _ in range(times):
        page.keyboard.press("Enter")


def practise_by_keyboard(player) -> None:
    """A practice game begun from the keyboard (Enter on Practice), running: at once,
    no name typed (issue 34), under the default one."""
    player.open(f"?seed={SEED}")
    press(player.page, "#btn-practice")
    player.wait_racing()
    assert player.state("s.room.players[0].name") == "Guest"


def test_each_new_screen_takes_the_focus_at_its_top(players) -> None:
    alice = players()
    page = alice.page
    practise_by_keyboard(alice)
    # the race: the board has the focus; the next Tab is the stock, not the header
    page.wait_for_function(f"() => ({FOCUSED})() === 'my-board'")
    board = page.get_by_role("region", name="Your board")  # what a screen reader says
    assert board.evaluate("(el) => el === document.activeElement")
    assert page.evaluate("() => window.scrollY") == 0
    page.keyboard.press("Tab")
    assert focused(page) == "stock"
    page.keyboard.press("d")  # the keys still play
    page.wait_for_selector('#stat-moves:text-is("1")')

    press(page, "#btn-resign", times=2)  # resign asks first: twice
    alice.screen("results")
    page.wait_for_function(f"() => ({FOCUSED})() === 'results-title'")
    assert page.evaluate("() => window.scrollY") == 0

    # a page over the screen (the replay), and Back from it
    code = alice.state("s.room.code")
    page.evaluate("(code) => { location.hash = `#/replay/${code}`; }", code)
    page.wait_for_selector('#replay-view[data-state="ready"]')
    page.wait_for_function(f"() => ({FOCUSED})() === 'replay-title'")
    press(page, "#replay-back")
    page.wait_for_selector("#replay-view", state="hidden")
    alice.screen("results")
    page.wait_for_function(f"() => ({FOCUSED})() === 'results-title'")

    press(page, "#btn-lobby")
    alice.screen("lobby")
    page.wait_for_function(f"() => ({FOCUSED})() === 'lobby-title'")
    assert page.evaluate("() => window.scrollY") == 0
    page.keyboard.press("Tab")  # on from the lobby's top: its first control
    assert page.evaluate("() => document.activeElement.closest('#screen-lobby') !== null")


def test_a_page_opened_by_its_address_takes_the_focus(players) -> None:
    """Found by an outside tester: a replay or a profile loaded at its address
    (`#/replay/CODE`, `#/players/WHO`) left the focus on <body>, where opening it from
    inside the app focuses it. Each page here is a fresh load of its address."""
    alice = players()
    practise(alice, f"?seed={SEED}", "Alice")
    alice.page.click("#btn-resign")
    alice.page.click("#btn-resign")
    alice.screen("results")
    code = alice.state("s.room.code")
    key = "a-" + "1" * 32
    viewer = players()
    viewer.context.route(
        f"**/api/players/{key}",
        lambda route: route.fulfill(
            status=200,
            json={
                "id": key,
                "name": "Ann",
                "guest": False,
                "variants": {},
                "history": [],
                "daily": None,
            },
        ),
    )
    page = viewer.page
    for address, ready, target in (
        (f"#/replay/{code}", '#replay-view[data-state="ready"]', "replay-title"),
        (f"#/players/{key}", '#profile-view[data-state="ok"]', "profile-view"),
        ("#/archive", "#daily-view:not([hidden]) #archive-prev", "daily-view"),
    ):
        page.goto("about:blank")
        page.goto(viewer.base + address)
        page.wait_for_selector(ready)
        page.wait_for_function(f"() => ({FOCUSED})() === '{target}'")


def test_a_new_screen_leaves_the_focus_in_a_field_being_typed_in(players) -> None:
    """A spectator typing their name into the account panel when the race ends: the
    results open, and the field keeps the focus and what was typed."""
    alice, bob, carol = players(), players(), players()
    start_race(alice, [bob], seed=SEED, watchers=(carol,))
    page = carol.page
    page.click("#btn-signin")
    field = '#signin-form [name="name"]'
    page.wait_for_function(f"() => document.activeElement === document.querySelector('{field}')")
    page.keyboard.type("Car")
    for p in (alice, bob):
        p.page.click("#btn-resign")
        p.page.click("#btn-resign")
    carol.screen("results")
    page.wait_for_selector('#results-sub:has-text("is over")')
    page.keyboard.type("ol")
    assert page.evaluate(f"() => document.activeElement === document.querySelector('{field}')")
    assert page.input_value(field) == "Carol"


RGB = re.compile(r"rgba?\(([^)]*)\)")


def colours(css: str) -> list[tuple[float, ...]]:
    """The rgb() colours of a computed style value, in order."""
    return [tuple(float(v) for v in m.split(",")[:3]) for m in RGB.findall(css)]


def contrast(a: tuple[float, ...], b: tuple[float, ...]) -> float:
    """WCAG's contrast ratio of two sRGB colours."""

    def lum(c: tuple[float, ...]) -> float:
        lin = [(v / 255 / 12.92) if v <= 10.31 else ((v / 255 + 0.055) / 1.055) ** 2.4 for v in c]
        return 0.2126 * lin[0] + 0.7152 * lin[1] + 0.0722 * lin[2]

    hi, lo = sorted((lum(a), lum(b)), reverse=True)
    return (hi + 0.05) / (lo + 0.05)


LOOK = """(el) => { const c = getComputedStyle(el); const r = el.getBoundingClientRect();
  return {bg: c.backgroundImage, color: c.color, shadow: c.boxShadow, transform: c.transform,
    outline: c.outlineStyle, outlineColor: c.outlineColor, outlineWidth: parseFloat(c.outlineWidth),
    offset: parseFloat(c.outlineOffset), left: r.left, right: r.right}; }"""
FELT = """() => { const c = getComputedStyle(document.documentElement);
  return ['--felt', '--felt-dark', '--felt-light'].map((v) => c.getPropertyValue(v).trim()); }"""


def hex_rgb(value: str) -> tuple[float, ...]:
    return tuple(float(int(value[i : i + 2], 16)) for i in (1, 3, 5))


def test_the_picked_card_and_the_keyboard_focus_look_different_at_320_px(
    players, artifacts
) -> None:
    """Seed 42: column 1 is the Qs alone, column 2 the Js, column 3 the Jh. 1 picks the
    Qs, the right arrow moves the focus to the Js: the pick is raised and filled gold,
    the focus a ring of its own colour, each readable on the felt and on the cards."""
    alice = players(viewport={"width": 320, "height": 640})
    page = alice.page
    practise_by_keyboard(alice)
    page.wait_for_function(f"() => ({FOCUSED})() === 'my-board'")
    page.keyboard.press("1")
    page.wait_for_selector(f"{alice.card('Qs')}.selected")
    page.keyboard.press("ArrowRight")
    assert focused(page) == "col2:0"
    picked = page.eval_on_selector(alice.card("Qs"), LOOK)
    focus = page.eval_on_selector(alice.card("Js"), LOOK)
    plain = page.eval_on_selector(alice.card("Jh"), LOOK)
    alice.shot(artifacts / "pick-and-focus-320.png")

    # the pick: raised, filled (not the plain card's face), no focus ring
    assert picked["transform"] != "none" and focus["transform"] == "none"
    assert picked["bg"] != plain["bg"] and focus["bg"] == plain["bg"]
    assert picked["outline"] == "none"
    # the focus: a ring whose colour is none of the pick's
    assert focus["outline"] == "solid" and focus["outlineWidth"] >= 2
    ring = colours(focus["outlineColor"])[0]
    assert ring not in colours(picked["shadow"]), (focus, picked)
    # contrast: the ring on the felt, its dark inner ring on a white card (3:1, non-text);
    # the picked card's rank and suit on its fill (4.5:1), a black card and a red one
    for felt in page.evaluate(FELT):
        assert contrast(ring, hex_rgb(felt)) >= 3, felt
    inner = colours(focus["shadow"])[0]
    assert contrast(inner, (255, 255, 255)) >= 3
    page.keyboard.press("Escape")
    page.wait_for_selector("#my-board .card.selected", state="detached")
    page.keyboard.press("3")
    page.wait_for_selector(f"{alice.card('Jh')}.selected")
    red = page.eval_on_selector(alice.card("Jh"), LOOK)
    for card in (picked, red):
        for fill in colours(card["bg"]):
            assert contrast(colours(card["color"])[0], fill) >= 4.5, card
    page.keyboard.press("Escape")
    page.wait_for_selector("#my-board .card.selected", state="detached")  # drawn unpicked

    # on a 320 px screen the ring of the outermost columns is whole on the screen
    for key in ("ArrowLeft", "ArrowLeft"):  # from column 3: column 2, then column 1 ...
        page.keyboard.press(key)
    assert focused(page) == "col1:0"
    for column, card in (("col1:0", "Qs"), ("col7:0", "Th")):
        if column == "col7:0":
            page.keyboard.press("ArrowLeft")  # ... and round to column 7
        assert focused(page) == column
        look = page.eval_on_selector(alice.card(card), LOOK)
        reach = look["offset"] + look["outlineWidth"]
        assert look["left"] - reach >= 0 and look["right"] + reach <= 320, (column, look)
