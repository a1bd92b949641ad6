"""Positions from the middle of a game, the passes already used, and finished games."""

from __future__ import annotations

import pytest

from klondike_race.engine import RECYCLE_MOVE, WON, Deal, Game, Settings
from klondike_race.engine.moves import DRAW_MOVE
from klondike_race.solver import solve
from tests.conftest import step_to_move

from .helpers import BUDGET, assert_line_wins, reference, reference_game


@pytest.mark.parametrize(("deal_id", "draw"), [(0, 1), (5, 1), (0, 3), (7, 3), (12, 3)])
@pytest.mark.parametrize("fraction", [0.2, 0.5, 0.8])
def test_positions_along_a_reference_line_are_won(deal_id: int, draw: int, fraction: float) -> None:
    ref = reference(deal_id, draw)
    game = reference_game(ref)
    for step in ref["line"][: int(len(ref["line"]) * fraction)]:
        game.play(step_to_move(step))
    assert game.moves > 0
    solution = solve(game, max_seconds=BUDGET)
    assert_line_wins(game, solution)


def test_mid_game_waste_and_stock_are_kept() -> None:
    """Some cards turned (Draw 3: the waste top decides what can be played next)."""
    ref = reference(2, 3)
    game = reference_game(ref)
    for _ in range(3):
        game.play(DRAW_MOVE)
    assert game.waste and game.stock
    solution = solve(game, max_seconds=BUDGET)
    assert solution.result == ref["result"]
    if solution.result == "win":
        assert_line_wins(game, solution)


@pytest.mark.parametrize("deal_id", [41, 42])
def test_a_lost_deal_stays_lost_after_some_moves(deal_id: int) -> None:
    ref = reference(deal_id, 1)
    assert ref["result"] == "lose"
    game = reference_game(ref)
    for move in game.legal_moves()[:1] + [DRAW_MOVE] * 5:
        if move in game.legal_moves():
            game.play(move)
    assert solve(game, max_seconds=BUDGET).result == "lose"


def test_a_won_game_is_a_win_with_an_empty_line() -> None:
    ref = reference(0, 1)
    game = reference_game(ref)
    for step in ref["line"]:
        game.play(step_to_move(step))
    assert game.status == WON
    solution = solve(game)
    assert solution.result == "win"
    assert solution.line == []


def test_a_resigned_game_is_searched_as_if_play_went_on() -> None:
    ref = reference(0, 1)
    game = reference_game(ref)
    game.resign()
    solution = solve(game, max_seconds=BUDGET)
    assert solution.result == "win"
    assert game.ended == "resigned"  # the game itself is unchanged


def test_a_hint_is_the_first_move_of_a_winning_line() -> None:
    """The service's hint: the first move of solve()'s line, and the game stays won."""
    game = reference_game(reference(1, 1))
    line = solve(game, max_seconds=BUDGET).line
    assert line
    assert line[0] in game.legal_moves()
    game.play(line[0])
    assert solve(game, max_seconds=BUDGET).result == "win"


def test_lose_and_unknown_carry_no_line() -> None:
    lost = reference_game(reference(104, 1))
    solution = solve(lost, max_seconds=BUDGET)
    assert (solution.result, solution.line) == ("lose", None)
    # a state budget far too small to decide anything: unknown
    solution = solve(lost, max_states=10, max_seconds=None)
    assert (solution.result, solution.line) == ("unknown", None)


def test_budget_runs_out_as_unknown() -> None:
    game = reference_game(reference(104, 1))
    solution = solve(game, max_seconds=None, max_states=2000)
    assert solution.result == "unknown"
    assert solution.line is None
    assert solution.states == 2000
    clock = iter(range(0, 10**9, 1)).__next__  # one "second" per reading
    solution = solve(game, max_seconds=2, clock=clock)  # two turns: 3,072 positions
    assert solution.result == "unknown"


def test_passes_used_so_far_are_part_of_the_position() -> None:
    """Going through the stock twice with three passes leaves the position the same as a
    fresh deal with one pass (nothing played)."""
    deal_id, draw = PASSES_DEAL
    ref = reference(deal_id, draw)
    settings = Settings(draw=draw, passes=3)
    game = Game(Deal.from_cards(ref["cards"]), settings)
    assert solve(game, max_seconds=BUDGET).result == "win"
    for _ in range(2):
        while game.stock:
            game.play(DRAW_MOVE)
        game.play(RECYCLE_MOVE)
    assert game.recycles == 2
    assert solve(game, max_seconds=BUDGET).result == "lose"
    one_pass = Game(Deal.from_cards(ref["cards"]), Settings(draw=draw, passes=1))
    assert solve(one_pass, max_seconds=BUDGET).result == "lose"


# a reference deal winnable with unlimited passes and with three, lost with one
# (found by a search over the corpus, see test_settings.py)
PASSES_DEAL = (1, 1)


def test_the_bare_search_runs_to_the_end_or_raises_budget() -> None:
    """search.Search without solve(): no clock, a state budget."""
    from klondike_race.solver.search import Budget, Search

    game = reference_game(reference(104, 1))

    def search(**budget: object) -> Search:
        return Search(
            game.columns,
            game.down,
            game.found,
            game.waste + game.stock[::-1],
            0,
            0,
            draw=1,
            recycles_allowed=None,
            any_empty=False,
            foundation_to_column=True,
            **budget,
        )

    assert search().run() is False
    small = search(max_states=50)
    with pytest.raises(Budget):
        small.run()
    assert small.states == 50
    steps = search()
    assert steps.advance(10) is None
    assert steps.states == 10


@pytest.mark.parametrize("draw", [1, 3])
def test_a_deadlock_of_face_down_cards_is_a_loss_without_searching(draw: int) -> None:
    """Deal 41: cards that can never leave their columns (docs/solver.md, "Deadlocked
    face-down cards") prove the loss before any position is searched; with the 'any'
    empty column rule the test does not apply and the search runs."""
    game = reference_game(reference(41, draw))
    solution = solve(game, max_seconds=BUDGET)
    assert (solution.result, solution.states) == ("lose", 0)
    loose = Game(Deal.from_cards(reference(41, draw)["cards"]), Settings(draw=draw, empty="any"))
    assert solve(loose, max_seconds=None, max_states=500).states > 0


def test_pointer_dominance_keeps_draw_three_exact() -> None:
    """Draw 3 from a position with cards already turned (the pointer off the cycle): the
    result matches the reference and the line replays."""
    ref = reference(0, 3)
    game = reference_game(ref)
    game.play(DRAW_MOVE)
    solution = solve(game, max_seconds=BUDGET)
    assert solution.result == ref["result"]
    if solution.result == "win":
        assert_line_wins(game, solution)
