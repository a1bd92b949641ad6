"""The plain search (``Search(prune=False)``: no obligations, no pointer dominance) that
bench/solver_bench.py uses to check the full solver's losses: it agrees with the
reference on a few quick deals."""

from __future__ import annotations

import pytest

from klondike_race.engine import Deal, Game, Settings
from klondike_race.solver import search as search_module
from klondike_race.solver import search_of, solve
from klondike_race.solver.search import Search

from .helpers import assert_line_wins, reference, reference_game


def plain(game: Game) -> Search:
    return search_of(
        game,
        search_module,
        max_states=2_000_000,
        deck_first=True,
        deadlock_test=False,
        prune=False,
    )


@pytest.mark.parametrize(("deal_id", "draw"), [(0, 1), (1, 3), (2, 3), (42, 1), (25, 3), (6, 3)])
def test_the_plain_search_agrees_with_the_reference(deal_id: int, draw: int) -> None:
    ref = reference(deal_id, draw)
    assert plain(reference_game(ref)).run() is (ref["result"] == "win")


def test_the_plain_search_wins_eval_deal_1000074() -> None:
    """Seed 1,000,074 in Draw 1 is won: the plain search finds it."""
    search = plain(Game(Deal.from_seed(1_000_074), Settings(draw=1)))
    assert search.run() is True


def test_the_full_solver_wins_eval_deal_1000074() -> None:
    """The full solver once answered lose on this won deal: two parking moves with one
    use (docs/solver.md, "Parking moves: obligations"). It finds a win (in about 110,000
    positions), and the line replays."""
    game = Game(Deal.from_seed(1_000_074), Settings(draw=1))
    solution = solve(game, max_seconds=None, max_states=300_000)
    assert_line_wins(game, solution)
