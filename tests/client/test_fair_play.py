"""The daily's fair play in the browser, against a server of its own that ranks accounts
only (``KR_CHALLENGE_RANKING=accounts``) and takes two attempts at a deal from one address
(``KR_ATTEMPTS_PER_ADDRESS=2``; every browser here is 127.0.0.1): a guest's attempt shows
its place on the guests' list, the second guest's row is flagged in words under the
guests' own heading, and a third guest's attempt is refused with the server's message."""

from __future__ import annotations

from collections.abc import Iterator
from pathlib import Path
from typing import Any

import pytest

from klondike_race.service.embedded import EmbeddedRedis
from tests.client.conftest import COUNTDOWN_MS, Player
from tests.client.test_daily import today
from tests.conftest import ROOT
from tests.servers import ServerProcess


@pytest.fixture(scope="module")
def server(tmp_path_factory: pytest.TempPathFactory) -> Iterator[ServerProcess]:
    """This module's server (``players`` are its players), with a Redis of its own."""
    redis = EmbeddedRedis(tmp_path_factory.mktemp("redis-fair"), appendfsync="always").start()
    srv = ServerProcess(
        redis.url,
        KR_COUNTDOWN_MS=str(COUNTDOWN_MS),
        KR_CLIENT_DIR=str(ROOT / "client"),
        KR_CHALLENGE_RANKING="accounts",
        KR_ATTEMPTS_PER_ADDRESS="2",
        KR_DAILY_DRAWS="1",
        KR_SOLVER_CHALLENGE_S="3",
    ).start()
    yield srv
    srv.stop()
    redis.stop()


def start_attempt(player: Player, name: str) -> None:
    """From the home screen: the name, Play, and Start my attempt."""
    player.set_name(name)
    player.page.click("#daily-list [data-attempt]")
    player.page.locator(".attempt-confirm").wait_for()
    player.page.click("[data-attempt-go]")


def resign(player: Player) -> None:
    player.page.click("#btn-resign")
    player.page.click("#btn-resign")
    player.screen("results")


def test_guests_listed_apart_a_flag_in_words_and_the_address_limit(
    players: Any, artifacts: Path
) -> None:
    ann: Player = players()
    ann.open()
    challenge = today(ann)
    start_attempt(ann, "Ann")
    ann.wait_racing()
    # the attempt's live board: no account ranked yet, her place on the guests' list
    mine = ann.page.locator("#race-live li.me")
    mine.wait_for()
    assert mine.inner_text().startswith("guest place 1: Ann"), mine.inner_text()
    count = ann.page.text_content("#race-live .live-count") or ""
    assert count == "0 players ranked \u00b7 1 guest listed apart", count
    resign(ann)
    ann.page.wait_for_selector('#attempt-rank[data-rank="1"]')
    assert ann.page.text_content("#attempt-rank") == "Guest place 1 of 1"
    assert ", guest place 1 of 1 (resigned) " in ann.page.input_value("#share-line")

    # a second guest from the same address: the row flagged, said in words
    bob: Player = players()
    bob.open()
    start_attempt(bob, "Bob")
    bob.wait_racing()
    own = bob.page.locator("#race-live li.me")
    own.wait_for()  # the attempt's live board says the flag too, after the name
    assert own.locator(".tag.flag").all_inner_texts() == ["flagged: shared address"]
    assert "Bob guest flagged: shared address (you)" in own.inner_text(), own.inner_text()
    resign(bob)
    bob.page.wait_for_selector('#attempt-rank[data-rank="1"]')  # no card home: a tie
    assert bob.page.text_content("#attempt-rank") == "Guest place 1 of 2"
    bob.page.click("#btn-attempt-board")
    guests = bob.page.locator("#daily-view .guests-list")
    guests.locator("tr[data-who] >> nth=1").wait_for()
    assert guests.locator("h4").first.inner_text() == "Guests, listed apart"
    guests.locator("tr.me", has_text="resigned").wait_for()  # his end, pushed live
    header = bob.page.inner_text("#daily-view .challenge-deal > p.muted")
    assert "0 players ranked \u00b7 2 guests listed apart \u00b7 live" in header, header
    ranked = bob.page.locator("#daily-view .challenge-deal > .table-scroll")
    assert ranked.count() == 0 and "No attempts yet." in bob.page.inner_text("#daily-view")
    flagged = guests.locator("tr[data-who]", has=bob.page.locator(".tag.flag"))
    assert flagged.count() == 1 and "Bob" in flagged.inner_text()
    assert flagged.locator(".tag.flag").all_inner_texts() == ["flagged: shared address"]
    note = guests.locator(".flags-note").inner_text()
    assert "came from the same network address before this one" in note, note
    bob.shot(artifacts / "daily-guests-apart.png", full_page=True)

    # a third: refused, the server's words kept on the day's entry
    cat: Player = players()
    cat.open()
    start_attempt(cat, "Cat")
    entry = cat.page.locator(f'#daily-list li[data-challenge="{challenge}"]')
    refused = entry.locator('[data-state="refused"]')
    refused.wait_for()
    words = refused.inner_text()
    assert words.startswith("Not played: 2 attempts at this deal came from your address"), words
    assert "at most 2 from one address, each deal of a challenge" in words, words
    assert entry.locator("[data-attempt]").count() == 0
    cat.screen("lobby")
