"""A keyboard player's focus (outside testers): a new screen puts the focus on that
screen (not on <body>, from where Tab starts again at the header), never taking it from
a field being typed in."""

from __future__ import annotations

from .conftest import start_race

SEED = "42"

# what has the focus: its id, or its data-key on the board ("stock", "col1:0"), or BODY
FOCUSED = (
    "() => { const a = document.activeElement;"
    " return a === document.body ? 'BODY' : a.id || a.dataset.key || a.tagName; }"
)


def focused(page) -> str:
    return page.evaluate(FOCUSED)


def press(page, selector: str, times: int = 1) -> None:
    """A keyboard player's press of a control: focused, then Enter."""
    page.focus(selector)
    for _ in range(times):
        page.keyboard.press("Enter")


def test_each_new_screen_takes_the_focus_at_its_top(players) -> None:
    alice = players()
    page = alice.page
    alice.open(f"?seed={SEED}")
    alice.set_name("Alice")
    press(page, "#btn-practice")
    alice.wait_racing()
    # the race: the board has the focus; the next Tab is the stock, not the header
    page.wait_for_function(f"() => ({FOCUSED})() === 'my-board'")
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
