"""Undo: off by default (undo_disabled); on, each undo is a move and restores the
position and the score."""

from __future__ import annotations

import pytest

from klondike_race.engine import UNDO_MOVE, Deal, Game, Move, Settings, board_view
from tests.conftest import reference_deals
from tests.engine.helpers import board, check_invariants, position, refused

DEAL0 = Deal.from_cards(reference_deals()[0]["cards"])


# Deal 0 (tests/data/README.md): two column moves turning cards, draws, waste to
# column and to foundation, a foundation move from a column, and a recycle.
LINES = {
    1: ["6>1", "3>2"] + ["d"] * 16 + ["w>s", "2>s", "7>2"] + ["d"] * 8 + ["r", "d"],
    3: ["6>1", "3>2", "d", "d", "d", "w>6", "d", "w>3", "d", "d", "d", "d", "r", "d"],
}


def test_undo_off_is_refused() -> None:
    game = Game(DEAL0)
    refused(game, "u", "undo_disabled")
    game.play("d")
    refused(game, "u", "undo_disabled")
    assert board_view(game)["can_undo"] is False


def test_nothing_to_undo_at_the_start() -> None:
    game = Game(DEAL0, Settings(undo=True))
    refused(game, "u", "nothing_to_undo")
    assert board_view(game)["can_undo"] is False


@pytest.mark.parametrize("scoring", ["none", "standard", "vegas"])
@pytest.mark.parametrize("draw", [1, 3])
def test_each_undo_is_a_move_and_restores_position_and_score(scoring, draw) -> None:
    game = Game(DEAL0, Settings(draw=draw, scoring=scoring, passes=0, undo=True))
    line = LINES[draw]
    positions, scores, fans = [], [], []
    for move in line:
        positions.append(board(game))
        scores.append(game.score)
        fans.append(game.fan)
        game.play(move)
    assert board_view(game)["can_undo"] is True
    for k in range(len(line)):
        game.play("u", at_ms=1000 + k)
        assert board(game) == positions[-1 - k]
        assert game.score == scores[-1 - k]
        assert game.fan == fans[-1 - k]
        assert game.moves == len(line) + k + 1
        check_invariants(game)
    assert game.log == [Move.parse(m) for m in line] + [UNDO_MOVE] * len(line)
    assert game.times[-1] == 1000 + len(line) - 1
    refused(game, "u", "nothing_to_undo")
    assert game.score == (-52 if scoring == "vegas" else 0)


def test_undo_a_recycle_and_a_foundation_move() -> None:
    settings = Settings(scoring="standard", undo=True)
    game = position(["5c | Ah", "| Kc"], waste="9s", fill=2, settings=settings, score=300)
    game.play("r", at_ms=10)
    assert game.score == 200 and game.recycles == 1
    game.play("u", at_ms=20)
    assert game.score == 300 and game.recycles == 0 and game.waste != []
    game.play("1>h", at_ms=30)
    assert game.score == 315 and game.found_count == 1 and game.down[0] == 0
    assert (game.reached_moves, game.reached_ms) == (3, 30)
    game.play("u", at_ms=40)
    assert game.score == 300 and game.found_count == 0 and game.down[0] == 1
    # the foundation count changed with the undo: it is reached at the undo
    assert (game.reached_moves, game.reached_ms) == (4, 40)
    assert game.moves == 4


def test_undo_after_the_game_is_over_is_refused() -> None:
    game = position(["| Ks"], found=(13, 13, 13, 12), settings=Settings(undo=True))
    game.play("1>s")
    refused(game, "u", "game_over")
    other = position(["| Ks"], found=(13, 13, 13, 12), stock="", settings=Settings(undo=True))
    other.resign()
    refused(other, "u", "game_over")


def test_undo_on_a_copy_leaves_the_original_alone() -> None:
    game = Game(DEAL0, Settings(undo=True))
    game.play("6>1")
    game.play("3>2")
    before = board(game)
    other = game.copy()
    other.play("u")
    other.play("7>2")  # changes columns restored by the copy's undo
    other.play("d")
    assert board(game) == before
    game.play("u")
    fresh = Game(DEAL0)
    fresh.play("6>1")
    assert board(game) == board(fresh)
