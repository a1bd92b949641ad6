"""Every reference winning line replays through the checked API and ends in a win."""

from __future__ import annotations

import pytest

from klondike_race.engine import PLAYING, WON, Deal, Game, Settings, parse_card
from tests.conftest import reference_deals, step_to_move

WINS = [d for d in reference_deals() if d["result"] == "win"]


def test_corpus_has_every_line() -> None:
    assert len(reference_deals()) == 600
    assert len(WINS) == 277 + 256


@pytest.mark.parametrize("ref", WINS, ids=lambda d: f"{d['id']}-draw{d['draw']}")
def test_reference_line_replays_as_a_win(ref: dict) -> None:
    game = Game(Deal.from_cards(ref["cards"]), Settings(draw=ref["draw"]))
    for i, step in enumerate(ref["line"]):
        move = step_to_move(step)
        if move.kind == 0:  # the named card is the one that moves
            src = game.columns[move.src] if move.src < 7 else None
            if src is not None:
                assert src[-move.count] == parse_card(step["card"]), f"step {i}"
        assert game.status != WON, f"won before step {i}"
        game.play(move)
    assert game.status == WON
    assert game.found_count == 52
    assert game.moves == ref["steps"]


@pytest.mark.parametrize("ref", WINS, ids=lambda d: f"{d['id']}-draw{d['draw']}")
def test_every_step_of_a_winning_line_is_offered_and_the_game_never_sticks(ref: dict) -> None:
    """A position on a winning line is never stuck, legal_moves() offers each step, and
    auto-complete, once available, finishes the game."""
    game = Game(Deal.from_cards(ref["cards"]), Settings(draw=ref["draw"]))
    finished = False
    for step in ref["line"]:
        assert game.status == PLAYING
        move = step_to_move(step)
        assert move in game.legal_moves()
        game.play(move)
        if not finished and game.autocomplete_available():
            finish = game.copy()
            for auto in game.autocomplete_moves():
                finish.play(auto)
            assert finish.status == WON
            assert finish.moves == game.moves + 52 - game.found_count
            finished = True
    assert game.status == WON
