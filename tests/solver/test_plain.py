"""The plain search (``Search(prune=False)``: no obligations, no pointer dominance) that
bench/solver_bench.py uses to check the full solver's losses: it agrees with the
reference on a few quick deals."""

from __future__ import annotations

import pytest

from klondike_race.engine import Deal, Game, Settings
from klondike_race.solver.search import Search

from .helpers import reference, reference_game


def plain(game: Game) -> Search:
    settings = game.settings
    return Search(game.columns, game.down, game.found, game.waste + game.stock[::-1],
                  len(game.waste), game.recycles, draw=settings.draw,
                  recycles_allowed=settings.recycles_allowed, any_empty=settings.empty == "any",
                  foundation_to_column=settings.foundation_to_column, max_states=2_000_000,
                  deck_first=True, deadlock_test=False, prune=False)  # fmt: skip


@pytest.mark.parametrize(("deal_id", "draw"), [(0, 1), (1, 3), (2, 3), (42, 1), (25, 3), (6, 3)])
def test_the_plain_search_agrees_with_the_reference(deal_id: int, draw: int) -> None:
    ref = reference(deal_id, draw)
    assert plain(reference_game(ref)).run() is (ref["result"] == "win")


def test_the_plain_search_wins_eval_deal_1000074() -> None:
    """Seed 1,000,074 in Draw 1 is won: the plain search finds it (the full search's
    answer on it is wrong today: docs/solver.md, "What is doubtful")."""
    search = plain(Game(Deal.from_seed(1_000_074), Settings(draw=1)))
    assert search.run() is True
