"""Players in the browser: a guest by device identity on the first visit, claiming a name,
signing in and out, sessions across reloads and devices, guests marked and profile links
in lists and leaderboards, the #/players/WHO view (docs/protocol.md, "Players: guests and
accounts"; docs/client.md).

The server's account limits are per client address and every test here comes from
127.0.0.1: at most 5 account creations (or attempts) per hour and 20 sign-ins per 10
minutes over this package's server, so each test spends few.
"""

from __future__ import annotations

import json
import re
import time
from typing import Any

from .conftest import PHONE, Player

SEED = "42"
DEVICE = re.compile(r"^[A-Za-z0-9_-]{32,64}$")
GUEST = re.compile(r"^g-[0-9a-f]{32}$")
ACCOUNT = re.compile(r"^a-[0-9a-f]{32}$")
NOBODY = "a-" + "0" * 32  # a well-formed key no player has
# Chromium's own console line for a resource answered with 404 (the profile route)
NOT_FOUND = re.compile(r"status of 404 .* @ .*/api/players/")

PROFILE: dict[str, Any] = {
    "id": "a-3f9c0d1e2b4a59687c6d5e4f3a2b1c0d",
    "name": "Ann <b>",
    "guest": False,
    "variants": {
        "draw1": {
            "rating": 1612, "provisional": False, "races": 12, "wins": 5, "win_rate": 0.417,
            "solved": 4, "best_time_ms": 183000, "fewest_moves": 96, "average_foundation": 31.5,
            "streak": 2, "best_streak": 3,
            "rating_history": [
                {"at": 1795964400000, "rating": 1500}, {"at": 1795968000000, "rating": 1531},
            ],
        },
        "draw3": {
            "rating": 1500, "provisional": True, "races": 1, "wins": 0, "win_rate": 0.0,
            "solved": 0, "best_time_ms": None, "fewest_moves": None, "average_foundation": 12.0,
            "streak": 0, "best_streak": 0, "rating_history": [],
        },
    },
    "history": [
        {"code": "K7QW2M", "at": 1795964400000, "variant": "draw1", "rank": 1, "players": 3,
         "result": "won", "rated": True, "rating_before": 1500, "rating_after": 1531,
         "replay": "/replay/K7QW2M"},
        {"code": "Q2WXYZ", "at": 1795968000000, "variant": "draw1", "rank": 2, "players": 2,
         "result": "resigned", "rated": True, "rating_before": 1531, "rating_after": 1519,
         "replay": "javascript:alert(1)"},
    ],
    "daily": {"streak": 3, "best_streak": 5, "days": [
        {"day": "2026-12-02", "challenge": "daily-2026-12-02-draw3", "code": "Q2MK7W",
         "status": "won", "foundation": 52, "moves": 131, "time_ms": 251000},
        {"day": "2026-12-01", "challenge": "daily-2026-12-01-draw1", "code": "javascript:x",
         "status": "out_of_time", "foundation": 30, "moves": 99, "time_ms": 600000},
    ]},
}  # fmt: skip


def identity(p: Player) -> dict:
    p.page.wait_for_function("() => window.kr.store.state.identity")
    return p.state("s.identity")


def stored(p: Player, key: str) -> Any:
    raw = p.page.evaluate("(k) => localStorage.getItem(k)", key)
    return None if raw is None else json.loads(raw)


def signed_in(p: Player, name: str) -> None:
    p.page.wait_for_selector('#account[data-state="account"]')
    assert p.page.text_content("#me-name") == name


def as_guest(p: Player) -> None:
    p.page.wait_for_selector('#account[data-state="guest"]')


def account_form(p: Player, form: str, **fields: str) -> None:
    """Fill and submit one of the account forms (opening the panel first)."""
    if p.page.locator("#account-panel").is_hidden():
        opener = {"register": "#btn-claim", "signin": "#btn-signin", "password": "#btn-account"}
        p.page.click(opener[form])
    for field, value in fields.items():
        p.page.fill(f'#{form}-form [name="{field}"]', value)
    p.page.click(f'#{form}-form button[type="submit"]')


def account_error(p: Player, reason: str) -> str:
    p.page.wait_for_selector(f'#account-error[data-reason="{reason}"]:not([hidden])')
    return p.page.text_content("#account-error") or ""


def test_a_guest_claims_a_name_signs_out_and_in(players) -> None:
    dora = players()
    wire = dora.wire()
    dora.open()
    guest = identity(dora)["player"]
    assert GUEST.match(guest["id"]) and guest["guest"] is True
    device = stored(dora, "kr.device")
    assert DEVICE.match(device)
    assert dora.page.text_content("#me-name") == "Guest"
    dora.set_name("Dora")
    assert dora.page.text_content("#me-name") == "Dora"
    assert dora.page.is_visible("#me-guest")

    # A reload is the same guest: the device identity is kept, said first on each connection.
    dora.page.reload()
    dora.page.wait_for_selector('#conn-state[data-state="open"]')
    assert identity(dora)["player"]["id"] == guest["id"]
    assert stored(dora, "kr.device") == device
    assert wire.firsts() == [{"type": "hello", "device": device}] * 2

    # Claim the name: the form offers the one she plays under (issue 34); once claimed,
    # the header shows it, the name field is the account's.
    dora.page.click("#btn-claim")
    assert dora.page.input_value('#register-form [name="name"]') == "Dora"
    password = "correct horse 1"
    account_form(dora, "register", name="Dora Tester", password=password)
    signed_in(dora, "Dora Tester")
    assert ACCOUNT.match(identity(dora)["player"]["id"])
    assert dora.page.input_value("#name") == "Dora Tester"
    assert dora.page.get_attribute("#name", "readonly") is not None
    assert dora.page.is_hidden("#account-panel")
    session = stored(dora, "kr.account")
    assert isinstance(session, str) and session
    kept = dora.page.evaluate("() => JSON.stringify({...localStorage})")
    assert password not in kept and password not in dora.page.url

    # A reload is still signed in: hello carries the session.
    dora.page.reload()
    signed_in(dora, "Dora Tester")
    assert wire.firsts()[-1] == {"type": "hello", "device": device, "session": session}

    # A new password: a new session. Before it, the form says what changing it does (an
    # outside tester read "Your other devices are signed out." before anything had
    # happened); once done, a toast says it happened.
    dora.page.click("#btn-account")
    note = dora.page.locator("#password-form > p")
    assert note.inner_text() == "Changing your password signs your other devices out."
    new_password = "staple 4 ever"
    account_form(dora, "password", password=password, new_password=new_password)
    dora.page.wait_for_selector(
        '#toast:not([hidden]):text-is("Password changed: every other device is signed out")'
    )
    dora.page.wait_for_function(
        "(old) => JSON.parse(localStorage.getItem('kr.account')) !== old", arg=session
    )
    signed_in(dora, "Dora Tester")

    # Sign out: the device's guest again, the session forgotten, the typed name back.
    dora.page.click("#btn-account")
    dora.page.click("#btn-signout")
    as_guest(dora)
    assert identity(dora)["player"]["id"] == guest["id"]
    assert stored(dora, "kr.account") is None
    assert dora.page.text_content("#me-name") == "Dora"
    assert dora.page.get_attribute("#name", "readonly") is None

    # A wrong password, then a name already claimed (case folded): the server's words.
    account_form(dora, "signin", name="dora tester", password="not the password")
    assert "wrong name or password" in account_error(dora, "bad_credentials")
    as_guest(dora)
    account_form(dora, "register", name="DORA TESTER", password="whatever 123")
    assert "taken" in account_error(dora, "name_taken")
    account_form(dora, "register", name="Dora  Two", password="whatever 123")
    assert "space" in account_error(dora, "bad_name")

    # Sign in with the new password, then sign out everywhere.
    account_form(dora, "signin", name="dora tester", password=new_password)
    signed_in(dora, "Dora Tester")
    dora.page.click("#btn-account")
    dora.page.click("#btn-signout-all")
    as_guest(dora)

    # A session that has ended (here: never was): forgotten, and the device's guest plays.
    dora.page.evaluate("() => localStorage.setItem('kr.account', JSON.stringify('ended-session'))")
    dora.page.reload()
    as_guest(dora)
    assert identity(dora)["player"]["id"] == guest["id"]
    assert stored(dora, "kr.account") is None
    hellos = wire.firsts()[-1:] + wire.sent("hello")[-1:]
    assert hellos == [
        {"type": "hello", "device": device, "session": "ended-session"},
        {"type": "hello", "device": device},
    ]


def test_a_name_typed_before_the_identity_arrives_is_kept(players) -> None:
    """The server's identity may come while a guest types their name (before the field's
    change event stores it): the field keeps what they typed, and the room they create
    seats them under it."""
    ann = players()
    wire = ann.wire()
    wire.hold = lambda m: m.get("type") == "identity"
    ann.open()
    ann.page.fill("#name", "Ann")  # typed, not yet changed (no blur)
    wire.release()
    identity(ann)
    assert ann.page.input_value("#name") == "Ann"
    ann.page.click("#btn-create")
    ann.screen("room")
    assert [s["name"] for s in ann.state("s.room.players")] == ["Ann"]


def test_too_many_failed_sign_ins_count_down(players) -> None:
    eve = players(viewport=PHONE, is_mobile=True, has_touch=True)
    eve.open()
    for _ in range(5):
        account_form(eve, "signin", name="Nobody Here", password="guess guess")
        account_error(eve, "bad_credentials")
        eve.page.wait_for_selector('#signin-form button[type="submit"]:not([disabled])')
    account_form(eve, "signin", name="Nobody Here", password="guess guess")
    first = account_error(eve, "rate_limited")
    assert re.search(r"try again in (\d+:\d\d|\d+ s)$", first), first
    assert eve.page.is_disabled('#signin-form button[type="submit"]')
    eve.page.wait_for_function(
        "(t) => document.querySelector('#account-error').textContent !== t", arg=first, timeout=3000
    )
    # the account area fits a phone
    assert eve.page.evaluate("() => document.documentElement.scrollWidth <= window.innerWidth")


def test_another_device_rejoins_the_same_seat_and_guests_are_marked(players) -> None:
    ann = players()
    ann.open(f"?seed={SEED}")
    account_form(ann, "register", name="Ann Racer", password="ann's password")
    signed_in(ann, "Ann Racer")
    ann_key = identity(ann)["player"]["id"]
    ann.page.click("#btn-create")
    ann.screen("room")
    code = ann.page.text_content("#room-code") or ""

    bob = players()
    bob.expected.append(NOT_FOUND)
    bob.join("Bob", code)
    bob_key = identity(bob)["player"]["id"]
    assert GUEST.match(bob_key)
    # the waiting room: Ann's name links to her profile, Bob is tagged a guest
    ann.page.wait_for_selector('#room-players li[data-player="p2"] .tag.guest')
    assert ann.page.locator('#room-players li[data-player="p1"] .tag').count() == 0
    link = ann.page.get_attribute('#room-players li[data-player="p1"] a', "href")
    assert link == f"#/players/{ann_key}"

    # Ann's second device: signing in lists the unfinished room; Rejoin is the same seat.
    other = players()
    other.open()
    assert other.page.is_hidden("#your-rooms-box")
    account_form(other, "signin", name="ann racer", password="ann's password")
    signed_in(other, "Ann Racer")
    rejoin = other.page.locator(f'#your-rooms [data-rejoin="{code}"]')
    rejoin.wait_for()
    assert f"You are in a race: {code}" in (other.page.text_content("#your-rooms") or "")
    # ... and the public list marks the guest in it
    live = other.page.locator(f"#live-rooms li:has-text('{code}')")
    live.locator(".tag.guest").wait_for()
    assert "Bob" in (live.locator(".pname:has(.tag.guest)").text_content() or "")
    rejoin.click()
    other.screen("room")
    assert other.state("s.player") == ann.state("s.player") == "p1"
    assert other.state("s.room.players.length") == 2
    assert other.page.is_hidden("#your-rooms-box")

    # The race: the leaderboard beside the board marks the guest and links the names.
    other.ready()
    bob.ready()
    for p in (ann, other, bob):
        p.wait_racing()
    bob_row = '#race-standings .bar-row[data-player="p2"]'
    ann.page.wait_for_selector(f"{bob_row} .tag.guest")
    assert ann.page.get_attribute(f"{bob_row} a", "href") == f"#/players/{bob_key}"
    ann_row = '#race-standings .bar-row[data-player="p1"]'
    assert bob.page.locator(f"{ann_row} .tag").count() == 0

    # A profile link goes to #/players/WHO and shows the server's profile (an account
    # with no race finished yet); Back returns to the race.
    bob.page.click(f"{ann_row} a")
    bob.page.wait_for_selector('#profile-view:not([hidden])[data-state="ok"]')
    assert bob.page.text_content("#profile-title") == "Ann Racer"
    assert bob.page.url.endswith(f"#/players/{ann_key}")
    assert bob.page.is_hidden("#screen-race")
    bob.page.click("#profile-back")
    bob.screen("race")
    assert "#/players/" not in bob.page.url
    # A key no player has: no such player.
    bob.page.evaluate("(k) => { location.hash = '#/players/' + k; }", NOBODY)
    bob.page.wait_for_selector('#profile-view[data-state="missing"]:not([hidden])')
    assert bob.page.text_content("#profile-title") == "No such player"
    bob.page.click("#profile-back")
    bob.screen("race")


def test_the_profile_view_renders_the_profile_shape(players, artifacts) -> None:
    """The renderer of the documented 200 shape, fed hostile values no real server
    sends (markup in a name, a javascript: replay path) at phone width: every figure
    shown, names escaped, only the server's own replay paths linked. The real route's
    answers are rendered in the other tests and in test_profile_after_a_race."""
    key = PROFILE["id"]
    viewer = players(viewport=PHONE, is_mobile=True, has_touch=True)
    viewer.context.route(
        f"**/api/players/{key}",
        lambda route: route.fulfill(status=200, json=PROFILE),
    )
    viewer.open(f"#/players/{key}")
    page = viewer.page
    page.wait_for_selector('#profile-view[data-state="ok"]:not([hidden])')
    assert page.text_content("#profile-title") == "Ann <b>"
    assert page.locator("#profile-title b").count() == 0
    draw1 = page.locator('#profile-view .variant[data-variant="draw1"]')
    text = draw1.text_content() or ""
    for figure in ("Draw 1", "1612", "12", "5 (41.7%)", "3:03", "96", "31.5/52", "2 (best 3)"):
        assert figure in text, figure
    assert draw1.locator("svg.spark").count() == 1
    assert "(provisional)" in (page.text_content('.variant[data-variant="draw3"]') or "")
    rows = page.locator("#profile-view table.history tbody tr")
    assert rows.count() == 2
    first = rows.nth(0).locator("td").all_text_contents()
    assert first[1:6] == ["K7QW2M", "Draw 1", "1 of 3", "won", "1531 (+31)"]
    assert rows.nth(0).locator("a").get_attribute("href") == "#/replay/K7QW2M"
    assert "1519 (\u221212)" in (rows.nth(1).text_content() or "")
    assert rows.nth(1).locator("a").count() == 0  # not a path of the server's: no link
    # the dailies: the streak, and each day linked to its challenge and its replay
    dailies = page.locator("#profile-view .dailies")
    for figure in ("Daily streak3 days", "Best streak5 days", "Days played2 (last 30 days)"):
        assert figure in (dailies.locator("dl").text_content() or ""), figure
    days = dailies.locator("tbody tr")
    assert days.nth(0).locator("td").all_text_contents() == [
        "2026-12-02",
        "Draw 3",
        "won",
        "52/52",
        "131",
        "4:11",
        "replay",
    ]
    assert [a.get_attribute("href") for a in days.nth(0).locator("a").all()] == [
        "#/challenges/daily-2026-12-02-draw3",
        "#/replay/Q2MK7W",
    ]
    assert days.nth(1).locator("td").all_text_contents()[2] == "out of time"
    assert days.nth(1).locator("a").count() == 1  # no replay link for a code not of the form
    assert page.evaluate("() => document.documentElement.scrollWidth <= window.innerWidth")
    viewer.shot(artifacts / "profile-phone.png", full_page=True)
    # opened at this address, Back goes to the lobby
    page.click("#profile-back")
    viewer.screen("lobby")


# each of a profile's tables: its box's widths, its edge's fade, and the lines of its
# dates (the distinct tops of the date's text)
TABLES = """() => [...document.querySelectorAll('#profile-view .table-scroll')].map((box) => ({
  box: box.clientWidth, table: box.scrollWidth,
  fade: getComputedStyle(box).getPropertyValue('--fade-end'),
  dates: [...box.querySelectorAll('td.date')].map((td) => {
    const range = document.createRange();
    range.selectNodeContents(td);
    return new Set([...range.getClientRects()].map((r) => Math.round(r.top))).size;
  }),
}))"""


def test_the_profiles_tables_on_a_phone(players) -> None:
    """Found by an outside tester: on a 390 px phone the profile's history table cut off
    its replay column, with no cue that it scrolled, and its dates wrapped
    ("2026-/12-02"). At 390 px both tables (dailies, races) now show every column, each
    date on one line; on a 320 px phone, where they are still wider than the screen,
    their edge fades until scrolled to the end."""
    key = PROFILE["id"]

    def tables(width: int) -> tuple[Player, list[dict]]:
        viewer = players(viewport={"width": width, "height": 800}, is_mobile=True, has_touch=True)
        viewer.context.route(
            f"**/api/players/{key}", lambda route: route.fulfill(status=200, json=PROFILE)
        )
        viewer.open(f"#/players/{key}")
        viewer.page.wait_for_selector('#profile-view[data-state="ok"] table.history')
        return viewer, viewer.page.evaluate(TABLES)

    _, got = tables(390)
    assert len(got) == 2, got
    for t in got:
        assert t["table"] <= t["box"] and t["fade"] == "0px", got  # all shown, no fade
        assert t["dates"] == [1, 1], got
    viewer, got = tables(320)
    for t in got:
        assert t["table"] > t["box"] and t["fade"] == "36px", got
    viewer.page.evaluate(
        "() => document.querySelectorAll('#profile-view .table-scroll')"
        ".forEach((box) => { box.scrollLeft = box.scrollWidth; })"
    )
    viewer.page.wait_for_function(f"() => ({TABLES})().every((t) => t.fade === '0px')")


def test_profile_after_a_race(players) -> None:
    """A race between an account and a guest, both resigning: the server's own profile
    route shows the race in each player's figures and history (rated: a public race of
    two, from two client addresses; a second race from one address is unrated, and
    says why)."""
    cid = players()
    cid.open(f"?seed={SEED}")
    account_form(cid, "register", name="Cid Racer", password="cid's password")
    signed_in(cid, "Cid Racer")
    cid_key = identity(cid)["player"]["id"]
    cid.page.click("#btn-create")
    cid.screen("room")
    code = cid.page.text_content("#room-code") or ""
    # Dee's browser elsewhere: the server trusts its balancer's X-Forwarded-For
    dee = players(extra_http_headers={"X-Forwarded-For": "198.51.100.7"})
    dee.join("Dee", code)
    dee_key = identity(dee)["player"]["id"]
    for p in (cid, dee):
        p.ready()
    for p in (cid, dee):
        p.wait_racing()
    # one draw, then both resign: no foundation card, each reached 0 at move 0 and time
    # 0, so they tie for first (docs/rules.md) and a tie moves equal ratings by nothing
    cid.page.click(cid.pile("stock"))
    cid.page.wait_for_function("() => window.kr.store.state.board.moves === 1")
    for p in (cid, dee):
        p.page.click("#btn-resign")
        p.page.click("#btn-resign")
    for p in (cid, dee):
        p.screen("results")
    # the rating is applied when the race finishes; the profile reads it back
    for viewer, key, name, rank in (
        (dee, cid_key, "Cid Racer", "1 of 2"),
        (cid, dee_key, "Dee guest", "1 of 2"),  # a guest: her seat's name, tagged
    ):
        viewer.page.evaluate("(k) => { location.hash = '#/players/' + k; }", key)
        viewer.page.wait_for_selector('#profile-view:not([hidden])[data-state="ok"]')
        # the rating is applied by a task after the race's last commit, so a load may come
        # before it (on a loaded machine, more than one): load again until the race shows
        deadline = time.monotonic() + 20
        while viewer.page.locator("#profile-view table.history tbody tr").count() == 0:
            assert time.monotonic() < deadline, "the race never reached the profile"
            viewer.page.wait_for_timeout(300)
            viewer.page.reload()
            viewer.page.wait_for_selector('#profile-view:not([hidden])[data-state="ok"]')
        title = viewer.page.text_content("#profile-title") or ""
        assert title == name, title  # (not "A guest": issue 34)
        row = viewer.page.locator("#profile-view table.history tbody tr").nth(0)
        cells = row.locator("td").all_text_contents()
        assert cells[1:6] == [code, "Draw 1", rank, "won", "1500 (+0)"], cells
        assert row.locator("a").get_attribute("href") == f"#/replay/{code}"
        # the replay opens over the profile, and Back returns to the profile
        row.locator("a").click()
        viewer.page.wait_for_function("() => document.body.dataset.route === 'replay'")
        viewer.page.click("#replay-back")
        viewer.page.wait_for_selector('#profile-view:not([hidden])[data-state="ok"]')
        assert viewer.page.url.endswith(f"#/players/{key}")
        draw1 = viewer.page.text_content('#profile-view .variant[data-variant="draw1"]') or ""
        assert "Draw 1" in draw1 and "(provisional)" in draw1
    # the same entry had the two seats come from one address (docs/protocol.md, flags)
    cells = cid.page.evaluate(
        """async (key) => {
            const { profileHtml } = await import(new URL('js/profile.js', location.href));
            const data = await (await fetch('/api/players/' + key)).json();
            data.history = data.history.map(
                (h) => ({ ...h, rated: false, rating_after: h.rating_before, flags: ['address'] }));
            const box = document.createElement('div');
            box.innerHTML = profileHtml(data);
            const cells = box.querySelectorAll('table.history tbody tr td');
            return [...cells].map((td) => td.textContent);
        }""",
        dee_key,
    )
    assert cells[5] == "unrated: shared address", cells
