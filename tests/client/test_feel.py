"""The feel of a game (issue 15): a connection that dies without closing, input during
a card's slide, the server's own refusal reasons, the solver's line played at a
watchable speed, the results' place, an invitation without a name, the layout.

Every test drives real Chromium against the real server (seed 42, Draw 1: columns show
Qs Js Jh 2d Ac 6d Th and the first card drawn is 8c)."""

from __future__ import annotations

from collections.abc import Iterator

import pytest

from tests.servers import ServerProcess

from .stall import StallProxy

SEED = "42"
RECONNECTING = '#conn-state:text-is("reconnecting\u2026")'


@pytest.fixture
def proxy(server: ServerProcess) -> Iterator[StallProxy]:
    p = StallProxy(server.port).start()
    yield p
    p.stop()


def practice(player, query: str = "") -> None:
    player.open(f"?seed={SEED}{query}")
    player.set_name("Alice")
    player.page.click("#btn-practice")
    player.wait_racing()


def test_a_stalled_connection_is_noticed_and_its_moves_are_sent_again(
    proxy, players, artifacts
) -> None:  # the proxy first: the pages close before it stops
    alice = players()
    practice(alice, f"&ws={proxy.ws_url}")
    page = alice.page
    # The whole path goes dead, nothing closes: the draw waits, shown pending, and the
    # missing pong says "reconnecting" within a few seconds.
    proxy.freeze()
    page.click(alice.pile("stock"))
    page.wait_for_selector(RECONNECTING, timeout=9_000)
    page.wait_for_selector(f"{alice.pile('stock')}.pending")
    page.wait_for_selector("#pending-note:not([hidden])")
    page.wait_for_selector("#offline:not([hidden])")
    assert alice.state("s.board.stock") == 24  # nothing played yet
    alice.shot(artifacts / "stalled.png")
    # The network comes back: the client resumes and sends the draw again.
    proxy.thaw()
    page.wait_for_selector('#conn-state[data-state="open"]', timeout=15_000)
    page.wait_for_selector(f'{alice.pile("waste")} .card[data-card="8c"]')
    page.wait_for_selector("#pending-note", state="hidden")
    assert alice.state("[s.board.moves, s.seq]") == [1, 1]
    # Only the answers are lost: the move is stored but its ack never comes. After the
    # resume it is not played a second time (its number is stored).
    proxy.freeze(("down",))
    page.dblclick(alice.card("Ac"))
    page.wait_for_selector(RECONNECTING, timeout=9_000)
    page.wait_for_selector(f"{alice.card('Ac')}.pending")
    proxy.thaw()
    page.wait_for_selector('#conn-state[data-state="open"]', timeout=15_000)
    page.wait_for_selector(f'{alice.pile("found-c")} .card[data-card="Ac"]')
    page.wait_for_selector("#pending-note", state="hidden")
    assert alice.state("[s.board.moves, s.seq, s.board.stock]") == [2, 2, 23]
    # Play goes on with the right numbers.
    page.click(alice.pile("stock"))
    page.wait_for_function("() => window.kr.store.state.board.moves === 3")
    assert alice.state("s.board.stock") == 22
