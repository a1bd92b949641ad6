"""The daily challenge in the browser, against a real server whose clock is shifted so
that today's daily closes about half a minute after it starts (conftest's
``daily_server``): an attempt played to its end, its place on the live leaderboard, the
share line, "done" on the home screen after a reload; before the challenge is final,
whoever asks (a throwaway second player who attempted and resigned included), no practice
of the deal, no finish it for me, no watching of others' attempts and no replay, one's
own included (the server's ``not_yet``), the page saying when they open; and once final
(the close, then the attempts' time limit) the archive with the final standings, the
reveal checked against the commitment and the replay links; the second identity's attempt
from the same address flagged on its row, in words. And two browser profiles on a server
of the real clock (``today_server``): a fresh guest asking for everything of another's
ended attempt."""

from __future__ import annotations

import re
import time
from collections.abc import Iterator
from datetime import UTC, date, datetime, timedelta
from pathlib import Path
from typing import Any

import pytest

from klondike_race.service.embedded import EmbeddedRedis
from tests.client.conftest import (
    COUNTDOWN_MS,
    DAILY_LIMIT_S,
    PHONE,
    Contexts,
    DailyServer,
    Player,
    player_factory,
)
from tests.conftest import ROOT
from tests.servers import ServerProcess

DAILY = re.compile(r"^daily-(\d{4}-\d{2}-\d{2})-draw1$")


@pytest.fixture(scope="module")
def today_server(tmp_path_factory: pytest.TempPathFactory) -> Iterator[ServerProcess]:
    """A server of its own (its own Redis) on the real clock with today's dailies, Draw 1
    and Draw 3 (the package's server has none: each would prepare its deals with the
    solver as it starts)."""
    redis = EmbeddedRedis(tmp_path_factory.mktemp("redis-today"), appendfsync="always").start()
    srv = ServerProcess(
        redis.url,
        KR_COUNTDOWN_MS=str(COUNTDOWN_MS),
        KR_ATTEMPTS_PER_ADDRESS="1000",  # every browser here is 127.0.0.1
        KR_CLIENT_DIR=str(ROOT / "client"),
        KR_DAILY_DRAWS="1,3",
    ).start()
    yield srv
    srv.stop()
    redis.stop()


@pytest.fixture
def today_players(
    contexts: Contexts, today_server: ServerProcess, request: pytest.FixtureRequest
) -> Iterator[Any]:
    yield from player_factory(contexts, today_server, request)


def today(player: Player) -> str:
    """The id of today's (open) daily, from the server's `challenges` list."""
    player.page.wait_for_selector("#daily-list li[data-challenge]")
    got = player.page.get_attribute("#daily-list li[data-challenge]", "data-challenge")
    assert got and DAILY.match(got), got
    return got


def attempt_and_resign(player: Player, name: str) -> None:
    """From the home screen: Play, read the notice, start, draw once; from the home
    screen again (the page's own session forgotten, as on another device), Continue to the
    same attempt; resign."""
    player.set_name(name)
    player.page.click("#daily-list [data-attempt]")
    confirm = player.page.locator(".attempt-confirm")
    confirm.wait_for()
    assert "clock starts as soon as the deal is shown" in confirm.inner_text()
    player.page.click("[data-attempt-go]")
    player.wait_racing()
    player.play_line(["draw"])
    player.page.evaluate("() => localStorage.removeItem('kr.session')")
    player.open()
    player.page.wait_for_selector('#daily-list [data-state="playing"]')
    player.page.click("#daily-list [data-continue]")
    player.wait_racing()
    assert player.state("s.seq") == 1  # the same attempt, its move kept
    player.page.click("#btn-resign")
    player.page.click("#btn-resign")
    player.screen("results")


def opens_text(player: Player, challenge: str) -> str:
    """When the challenge is final, as the page says it ("2026-12-06 00:30 UTC")."""
    ms = player.state(f"s.challenges.find((c) => c.id === '{challenge}').final_at")
    return datetime.fromtimestamp(ms / 1000, UTC).strftime("%Y-%m-%d %H:%M UTC")


def sealed_results(player: Player, challenge: str) -> None:
    """A resigned attempt's results while the challenge is open: no finish it for me, no
    practice of the deal, and the note says when they open."""
    player.page.wait_for_selector("#attempt-reveal-note[data-opens-at]:not([data-opens-at=''])")
    note = player.page.text_content("#attempt-reveal-note") or ""
    assert "open once the challenge is final" in note, note
    assert f"at {opens_text(player, challenge)}" in note, note
    assert player.page.is_hidden("#btn-finish-results")
    assert player.page.is_hidden("#results-replay")  # one's own replay waits too
    assert player.page.is_disabled("#btn-attempt-practice")


def no_sideways_scroll(player: Player) -> None:
    assert player.page.evaluate(
        "() => document.documentElement.scrollWidth <= window.innerWidth + 1"
    ), "the page scrolls sideways"


def test_daily_attempt_leaderboard_share_watch_and_archive(
    daily_players: Any, daily_server: DailyServer, artifacts: Path
) -> None:
    ann: Player = daily_players()
    ann.open()
    challenge = today(ann)
    matched = DAILY.match(challenge)
    assert matched
    day = matched.group(1)
    entry = ann.page.locator(f'#daily-list li[data-challenge="{challenge}"]')
    assert entry.locator('[data-state="new"]').is_visible()
    assert "one ranked attempt" in entry.inner_text()
    # the day's end, counted on the server's clock (shifted: the browser's is real)
    left = ann.page.text_content("#daily-left") or ""
    m = re.search(r"close in (\d+):(\d\d)$", left)
    assert m and 0 < int(m.group(1)) * 60 + int(m.group(2)) <= 40, left
    ann.shot(artifacts / "daily-home.png")

    # the attempt: the race screen with the challenge's title, limit and leaderboard
    ann.set_name("Ann")
    ann.page.click("#daily-list [data-attempt]")
    ann.page.locator(".attempt-confirm").wait_for()
    ann.page.click("[data-attempt-go]")
    ann.wait_racing()
    line = ann.page.text_content("#race-challenge") or ""
    assert f"Daily {day} Draw 1" in line and f"{DAILY_LIMIT_S}-second limit" in line, line
    assert ann.page.is_hidden("#race-standings")
    ann.page.wait_for_selector("#race-live li.me")
    assert "1 player" in (ann.page.text_content("#race-live .live-count") or "")
    ann.play_line(["draw", "draw", "draw"])
    # no card home: her row says 0/52 and no "0 moves" (issue 34: it read 0 moves)
    assert (ann.page.text_content("#race-live li.me") or "").endswith("(you) \u00b7 0/52")
    ann.shot(artifacts / "daily-attempt.png")
    ann.page.click("#btn-resign")
    ann.page.click("#btn-resign")
    ann.screen("results")

    # rank and the share line
    ann.page.wait_for_selector('#attempt-rank[data-rank="1"]')
    assert ann.page.text_content("#attempt-rank") == "Rank 1 of 1"
    share = ann.page.input_value("#share-line")
    link = f"{daily_server.url}?challenge={challenge}"
    assert re.fullmatch(
        rf"Klondike Race daily {day} Draw 1: \d+/52 in \d+ moves, \d+:\d\d, rank 1 of 1 "
        rf"\(resigned\) {re.escape(link)}",
        share,
    ), share
    assert ann.page.is_hidden("#btn-rematch")
    sealed_results(ann, challenge)
    code = ann.state("s.room.code")
    ann.shot(artifacts / "daily-results.png")

    # the live leaderboard: her row highlighted, the players count, not final yet
    ann.page.click("#btn-attempt-board")
    ann.page.wait_for_selector("#daily-view:not([hidden]) tr.me")
    me = ann.page.locator("#daily-view tr.me")
    assert "Ann" in me.inner_text() and "(you)" in me.inner_text()
    assert me.locator("td").first.inner_text() == "1"
    # the columns say what ranks a row (issue 34: "Moves 0" for her 3-move attempt): the
    # moves and time it took to reach its cards home, none before a card has gone home
    head = ann.page.locator("#daily-view .challenge-table thead th").all_text_contents()
    assert head[3:5] == ["Moves to reach", "Reached at"], head
    title = ann.page.get_attribute("#daily-view thead th:nth-child(4) abbr", "title")
    assert title is not None and "moves it took to get this many cards home" in title, title
    assert me.locator("td").all_inner_texts()[2:5] == ["0/52", "\u2013", "\u2013"]
    assert ann.page.locator("#daily-view tr.me .tag.guest").count() == 1
    assert ann.page.get_attribute(
        "#daily-view tr.me a.profile-link", "href"
    ) == "#/players/" + ann.state("s.identity.player.id")
    assert "1 player" in (ann.page.text_content("#daily-view .players-count") or "")
    assert ann.page.get_attribute("#daily-view .board-state", "data-final") == "false"
    # no replay of her ended attempt before the challenge is final, not even hers: no
    # link, and asked by its address the viewer says when it opens
    assert me.locator("a.replay-link").count() == 0
    ann.page.goto(f"{daily_server.url}#/replay/{code}")
    ann.page.wait_for_selector('#replay-error[data-error="not_yet"]')
    assert f"It opens at {opens_text(ann, challenge)}." in (
        ann.page.text_content("#replay-error") or ""
    )
    ann.shot(artifacts / "daily-own-replay-not-yet.png")
    ann.page.click("#replay-back")
    ann.page.wait_for_selector("#daily-view:not([hidden]) tr.me")
    ann.page.click("#daily-back")
    ann.screen("results")
    sealed_results(ann, challenge)

    # back home, a reload: "done" with the rank
    ann.page.click("#btn-lobby")
    ann.screen("lobby")
    ann.open()
    done = ann.page.locator(f'#daily-list li[data-challenge="{challenge}"] [data-state="done"]')
    done.wait_for()
    assert "rank 1 of 1" in done.inner_text() and "resigned" in done.inner_text()

    # a second player, on a phone: no Watch while the challenge is not final; asked
    # anyway, the server says not_yet and the page says so
    bob: Player = daily_players(viewport=PHONE, has_touch=True, is_mobile=True)
    bob.expected.append(re.compile(r"not_yet|still playing this deal"))
    bob.open()
    today(bob)
    bob.page.goto(f"{daily_server.url}?challenge={challenge}")
    bob.page.wait_for_selector("#daily-view:not([hidden]) tr[data-who]")
    assert bob.page.locator("[data-watch-attempt]").count() == 0
    assert bob.page.is_visible("#daily-view .watch-note")
    # the phone's table: its moves column named what it shows, Ann's row a dash (the time
    # column is left out under 560 px)
    row = bob.page.locator("#daily-view tr[data-who]").first
    assert bob.page.locator("#daily-view thead th").nth(3).text_content() == "Moves to reach"
    assert row.locator("td").nth(3).inner_text() == "\u2013"
    no_sideways_scroll(bob)
    bob.shot(artifacts / "daily-leaderboard-phone.png")
    bob.open(f"?watch={code}")
    bob.page.wait_for_selector("#toast:not([hidden])")
    assert "still playing this deal" in (bob.page.text_content("#toast") or "")
    bob.screen("lobby")

    # after his own attempt (a throwaway identity's, perhaps): its results offer nothing of
    # the deal, and still no Watch, no replay
    attempt_and_resign(bob, "Bob")
    sealed_results(bob, challenge)
    bob.shot(artifacts / "daily-results-sealed-phone.png")
    bob.page.click("#btn-lobby")
    bob.screen("lobby")
    bob.page.goto(f"{daily_server.url}#/challenges/{challenge}")
    bob.page.wait_for_selector("#daily-view:not([hidden]) tr[data-who] >> nth=1")
    assert bob.page.locator("[data-watch-attempt]").count() == 0
    assert bob.page.locator("#daily-view a.replay-link").count() == 0
    assert bob.page.is_visible("#daily-view .watch-note")
    # his is the second attempt from this machine's address: flagged, said in words
    flags = bob.page.locator("#daily-view tr[data-who] .tag.flag")
    assert flags.all_inner_texts() == ["flagged: shared address"]
    flagged = bob.page.locator("#daily-view tr[data-who]", has=bob.page.locator(".tag.flag"))
    assert "Bob" in flagged.inner_text()
    note = bob.page.text_content("#daily-view .flags-note") or ""
    assert "came from the same network address before this one" in note, note

    # final (the close, then the attempts' time limit): the archive of that day, the final
    # standings, the reveal checked
    wait = daily_server.closes_at + 1.5 - time.time()
    assert wait > 0, f"the steps before the close took {-wait:.1f} s too long"
    print(f"{wait:.1f} s to spare before the close")
    wait += DAILY_LIMIT_S
    time.sleep(wait)
    ann.open()
    ann.page.click("#daily-archive")
    ann.page.wait_for_selector(f'#daily-view:not([hidden]) a[href="#/challenges/{challenge}"]')
    assert ann.page.text_content("#daily-title") == f"Dailies of {day}"
    before = (date.fromisoformat(day) - timedelta(days=1)).isoformat()
    assert ann.page.get_attribute("#archive-prev", "href") == f"#/archive/{before}"
    ann.page.click(f'a[href="#/challenges/{challenge}"]')
    ann.page.wait_for_selector('#daily-view .challenge-check[data-ok="true"]')
    body = ann.page.text_content("#daily-view") or ""
    assert "Final standings" in body and "the commitment matches" in body
    assert re.search(r"\d+ moves, the shortest winning line the solver found", body), body
    rows = ann.page.locator("#daily-view tbody tr")
    assert rows.count() == 2
    # no card home for either, so nothing reached and one place shared: both say "1="
    assert rows.locator("td:first-child").all_inner_texts() == ["1=", "1="]
    assert (
        ann.page.get_attribute(f'#daily-view a.replay-link[href="#/replay/{code}"]', "href")
        == f"#/replay/{code}"
    )
    assert ann.page.locator("#daily-view tr.me").count() == 1
    seed = ann.page.text_content("#daily-view .reveal-seed") or ""
    assert re.fullmatch(r"[0-9a-f]{16}", seed), seed
    ann.shot(artifacts / "daily-archive.png", full_page=True)


RACE_WORD = re.compile(r"\brace\b", re.IGNORECASE)
SAID = """(sel) => {
  const root = document.querySelector(sel);
  return [root.innerText, ...[...root.querySelectorAll('[title], [aria-label]')]
    .flatMap((e) => [e.title, e.getAttribute('aria-label') || ''])];
}"""


def says_attempt_not_race(player: Player, screen: str) -> None:
    """An attempt's screen calls it an attempt: no "race" in its text, titles or labels."""
    said = [w for w in player.page.evaluate(SAID, screen) if RACE_WORD.search(w)]
    assert not said, said


def players_text(n: int) -> str:
    return f"{n} player{'' if n == 1 else 's'}"


def test_the_home_screen_counts_the_players_and_the_profile_shows_the_dailies(
    today_players,
) -> None:
    """Found by an outside tester, on a server of the real clock (today's dailies, Draw 1
    and Draw 3): the home screen said "0 playing" before any attempt and
    "1 playing" once the only attempt had ended, where the challenge page said "1 player"
    (the players who made an attempt); and its two Leaderboard links had one name between
    them, where the Play buttons beside them name their daily. And the profile of a player
    who only played dailies read "No rated races yet ... No races yet", leaving out the
    `daily` of the server's profile JSON."""
    eve: Player = today_players()
    eve.open()
    page = eve.page
    page.wait_for_selector("#daily-list li[data-challenge] >> nth=1")
    listed = eve.state(
        "s.challenges.filter((c) => c.phase === 'open' && c.daily)"
        ".map((c) => [c.id, c.title, c.deals[0].players])"
    )
    assert len(listed) == 2, listed
    for cid, title, count in listed:
        entry = page.locator(f'#daily-list li[data-challenge="{cid}"]')
        assert entry.locator(".daily-title").inner_text() == f"{title} {players_text(count)}"
        # the link names its daily, as the Play button beside it does
        assert entry.get_by_role("button", name=f"Play {title}", exact=True).count() == 1
        assert entry.get_by_role("link", name=f"Leaderboard of {title}", exact=True).count() == 1

    # an attempt at the Draw 1 daily, ended at once
    cid, title, count = next(c for c in listed if c[0].endswith("draw1"))
    eve.set_name("Eve")
    page.click(f'[data-attempt="{cid}/0"]')
    page.click("[data-attempt-go]")
    eve.wait_racing()
    eve.play_line(["draw"])
    code = eve.state("s.room.code")
    # the attempt is called one, not a race: its screens' words (issue 34), a refusal's too
    says_attempt_not_race(eve, "#screen-race")
    assert page.get_attribute("#race-side", "aria-label") == "Attempt standings"
    assert (
        page.evaluate(
            "async () => (await import('./js/cards.js')).reasonText('race_over', null, 'attempt')"
        )
        == "The attempt is over"
    )
    page.click("#btn-resign")
    page.click("#btn-resign")
    eve.screen("results")
    page.wait_for_selector('#attempt-rank[data-rank]:not([data-rank=""])')
    says_attempt_not_race(eve, "#screen-results")
    assert "the attempt time" in (page.text_content("#results-note") or "")
    page.click("#btn-lobby")
    eve.screen("lobby")
    entry = page.locator(f'#daily-list li[data-challenge="{cid}"]')
    entry.locator('[data-state="done"]').wait_for()
    assert entry.get_by_role("button", name=re.compile("watch", re.IGNORECASE)).count() == 0
    assert entry.locator(".daily-title").inner_text() == f"{title} {players_text(count + 1)}"
    entry.get_by_role("link", name=f"Leaderboard of {title}").click()
    page.wait_for_selector("#daily-view:not([hidden]) tr.me")
    assert page.locator("#daily-view .players-count").inner_text() == players_text(count + 1)
    # the time left counts down in its place: the page's links are not made anew each
    # second (a click landing as the row was replaced went nowhere). Her row as it stays:
    page.locator("#daily-view tr.me", has_text="resigned").wait_for()
    left = page.locator("#challenge-when [data-until]")
    before = left.inner_text()
    assert before.startswith("Open: closes in "), before
    page.eval_on_selector("#daily-view tr.me a.profile-link", "a => { a.dataset.kept = '1'; }")
    page.wait_for_function(
        "(was) => document.querySelector('#challenge-when [data-until]').textContent !== was",
        arg=before,
    )
    assert page.get_attribute("#daily-view tr.me a.profile-link", "data-kept") == "1"

    # her profile, from her row: the daily streak and the day, linked
    page.click("#daily-view tr.me a.profile-link")
    page.wait_for_selector('#profile-view:not([hidden])[data-state="ok"]')
    # the name she typed, tagged a guest (it read "A guest" and the key: issue 34)
    assert page.text_content("#profile-title") == "Eve guest"
    dailies = page.locator("#profile-view .dailies")
    text = dailies.inner_text()
    assert "Daily streak\n1 day" in text and "Best streak\n1 day" in text, text
    row = dailies.locator(f'tbody tr[data-challenge="{cid}"]')
    cells = row.locator("td").all_inner_texts()
    assert cells[0] == cid.removeprefix("daily-").removesuffix("-draw1"), cells
    assert cells[1:5] == ["Draw 1", "resigned", "0/52", "1"], cells
    assert row.get_by_role("link", name="replay").get_attribute("href") == f"#/replay/{code}"
    # the day goes to its challenge's page
    row.locator("td").first.get_by_role("link").click()
    page.wait_for_selector("#daily-view:not([hidden]) tr.me")
    assert page.url.endswith(f"#/challenges/{cid}")


def test_a_challenge_that_ranks_accounts_shows_its_guests_apart(players) -> None:
    """The challenge page of a challenge that ranks accounts only (`"ranks": "accounts"`,
    the server's KR_CHALLENGE_RANKING; test_challenge_results.py has the server's side):
    its guests under their own heading with their own places, flags said in words."""
    player: Player = players()
    player.open()
    html = player.page.evaluate(
        """async () => {
          const daily = await import('./js/daily.js');
          const row = (name, who, guest, flags) => ({rank: 1, who, name, guest, code: 'ABCDEF',
            foundation: 3, reached_moves: 4, reached_ms: 5000, status: 'resigned',
            score: null, flags, flagged: flags.length > 0});
          const c = {id: 'daily-2026-12-05-draw1', title: 'Daily 2026-12-05 Draw 1',
            daily: true, phase: 'closed', ranks: 'accounts', opens: 0, closes: 1000,
            final_at: 2000, time_limit: 1800,
            deals: [{index: 0, settings: {draw: 1}, players: 1, guests: 1, commitment: null,
              rows: [row('Ann', 'a-' + '1'.repeat(32), false, [])],
              guest_rows: [row('Gus', 'g-' + '2'.repeat(32), true, ['address'])]}]};
          const out = document.createElement('div');
          out.innerHTML = daily.challengeHtml(c, {now: 3000, me: null, live: null,
            checks: {}, mayWatch: () => false});
          const guests = out.querySelector('.guests-list');
          return {heading: guests.querySelector('h4').textContent,
                  names: [...guests.querySelectorAll('tbody tr')].map((tr) => tr.textContent),
                  ranked: [...out.querySelectorAll('.challenge-deal > .table-scroll tbody tr')]
                    .map((tr) => tr.textContent)};
        }"""
    )
    assert html["heading"] == "Guests, listed apart"
    assert len(html["names"]) == 1 and "Gus" in html["names"][0]
    assert "flagged: shared address" in html["names"][0]
    assert len(html["ranked"]) == 1 and "Ann" in html["ranked"][0]


def test_watch_is_offered_only_for_an_attempt_still_being_played(players) -> None:
    """Issue 34: a live challenge page where watching is open (the server's list says the
    challenge is final, while the page's own copy still says open) offered Watch on every
    other row, an attempt that had ended included, beside its replay link. An ended
    attempt offers its replay and no Watch; one still being played, Watch; one's own row,
    no Watch (its replay once ended). Where watching is not open, neither (test above)."""
    player: Player = players()
    player.open()
    rows = player.page.evaluate(
        """async () => {
          const daily = await import('./js/daily.js');
          const row = (rank, name, code, status) => ({rank, who: 'g-' + String(rank).repeat(32),
            name, guest: true, code, foundation: 3, reached_moves: 4, reached_ms: 5000,
            status, flags: [], flagged: false});
          const rows = [row(1, 'Ann', 'AAAAAA', 'playing'), row(2, 'Bob', 'BBBBBB', 'resigned'),
            row(3, 'Cat', 'CCCCCC', 'won'), row(4, 'Me', 'DDDDDD', 'resigned'),
            row(5, 'Mo', 'EEEEEE', 'playing')];
          const c = {id: 'daily-2026-12-05-draw1', title: 'Daily 2026-12-05 Draw 1',
            daily: true, phase: 'open', ranks: 'everyone', opens: 0, closes: 1000,
            final_at: 2000, time_limit: 1800,
            deals: [{index: 0, settings: {draw: 1}, players: 5, guests: 0, commitment: null,
              rows}]};
          const live = {challenge: c.id, deal: 0, rows, players: 5, guests: 0, final: true,
            you: [], youGuests: false};
          const page = (watch, me) => {
            const out = document.createElement('div');
            out.innerHTML = daily.challengeHtml(c, {now: 3000, me, live, checks: {},
              mayWatch: () => watch});
            return Object.fromEntries([...out.querySelectorAll('tbody tr')].map((tr) => [
              tr.children[1].textContent.split(' ')[0],
              [...tr.querySelectorAll('[data-watch-attempt], a.replay-link')]
                .map((e) => e.textContent)]));
          };
          return {open: page(true, 'g-' + '4'.repeat(32)), sealed: page(false, null)};
        }"""
    )
    assert rows["open"] == {
        "Ann": ["Watch"],
        "Bob": ["replay"],
        "Cat": ["replay"],
        "Me": ["replay"],
        "Mo": ["Watch"],
    }, rows
    assert all(links == [] for links in rows["sealed"].values()), rows


def test_a_second_profile_gets_nothing_of_the_deal_before_final(today_players) -> None:
    """Two browser profiles (two guests) on today's daily, on a server of the real clock
    (the daily is open). A plays an attempt and resigns: A's results show A's
    own result and board, and no replay link, no finish it for me, no practice before the
    challenge is final, saying when. B, a fresh guest, asks for everything of the deal:
    watching A's attempt, its replay, a ghost of it (the replay viewer's button, which B
    never gets, asked on B's connection as the button would) and practice of the deal
    (A's button, asked the same way): each refused by the server (not_yet), the page
    naming the time it opens, and B still in the lobby with no attempt of its own."""
    ann: Player = today_players()
    ann.open()
    page = ann.page
    page.wait_for_selector("#daily-list li[data-challenge] >> nth=1")
    cid = ann.state(
        "s.challenges.find((c) => c.daily && c.phase === 'open' && c.id.endsWith('draw1')).id"
    )
    ann.set_name("Ann")
    page.click(f'[data-attempt="{cid}/0"]')
    page.click("[data-attempt-go]")
    ann.wait_racing()
    ann.play_line(["draw"])
    code = ann.state("s.room.code")
    page.click("#btn-resign")
    page.click("#btn-resign")
    ann.screen("results")
    sealed_results(ann, cid)  # no replay link, no finish, no practice: the time said
    page.wait_for_selector('#attempt-rank[data-rank]:not([data-rank=""])')
    assert "(resigned)" in page.input_value("#share-line")  # her own result
    rows = page.locator("#results-table tbody tr")
    assert rows.count() == 1 and "Ann" in rows.inner_text() and "resigned" in rows.inner_text()
    assert page.locator("#results-boards .grid-cell").count() == 0  # no other game's board
    assert page.is_hidden("#reveal") and page.is_hidden("#analysis")  # nothing of the deal
    opens = opens_text(ann, cid)

    bea: Player = today_players()
    wire = bea.wire()
    bea.expected.append(re.compile(r"not_yet|still playing this deal|403"))
    bea.open()
    bea.page.wait_for_selector(f'#daily-list [data-attempt="{cid}/0"]')  # no attempt of hers

    def refused(about: str) -> None:
        """The server refused B's request (not_yet) and the page says when it opens."""
        bea.page.wait_for_function(
            "(o) => (document.querySelector('#toast').textContent || '').includes(o)",
            arg=f"They open at {opens}.",
        )
        errors = [m for way, m in wire.log if way == "in" and m.get("about") == about]
        assert errors and errors[-1]["reason"] == "not_yet", (about, errors)

    # watching A's attempt: by its address (the challenge page offers no Watch)
    bea.open(f"?watch={code}")
    refused("watch")
    bea.screen("lobby")
    # A's replay: refused, the time named, and no ghost button in it
    bea.page.goto(f"{bea.base}#/replay/{code}")
    bea.page.wait_for_selector('#replay-error[data-error="not_yet"]')
    assert f"It opens at {opens}." in (bea.page.text_content("#replay-error") or "")
    assert bea.page.locator("#replay-view [data-ghost]").count() == 0
    bea.page.click("#replay-back")
    # a ghost of it and practice of the deal, asked as their buttons would ask
    for about, message in (
        ("ghost", {"type": "ghost", "code": code, "player": "p1", "name": "Bea"}),
        (
            "attempt",
            {"type": "attempt", "challenge": cid, "deal": 0, "name": "Bea", "practice": True},
        ),
    ):
        bea.page.evaluate("() => { document.querySelector('#toast').textContent = ''; }")
        bea.page.evaluate("(m) => window.kr.net.send(m)", message)
        refused(about)
    assert bea.state("s.room") is None  # nothing was entered, nothing made
    bea.open()
    bea.page.wait_for_selector(f'#daily-list [data-attempt="{cid}/0"]')  # still no attempt
    # the challenge page: A's row, no Watch, no replay link
    bea.page.goto(f"{bea.base}#/challenges/{cid}")
    bea.page.wait_for_selector('#daily-view:not([hidden]) tr[data-who] >> text="Ann"')
    assert bea.page.locator("[data-watch-attempt]").count() == 0
    assert bea.page.locator("#daily-view a.replay-link").count() == 0
    assert bea.page.is_visible("#daily-view .watch-note")
