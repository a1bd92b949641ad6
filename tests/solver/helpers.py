"""Shared helpers for the solver tests."""

from __future__ import annotations

from klondike_race.engine import WON, Deal, Game, Settings
from klondike_race.solver import Solution
from tests.conftest import reference_deals

# generous: a test deal that comes back "unknown" fails (only the budget tests want it)
BUDGET = 120.0


def reference(deal_id: int, draw: int) -> dict:
    return next(r for r in reference_deals() if r["id"] == deal_id and r["draw"] == draw)


def reference_game(ref: dict, **settings: object) -> Game:
    return Game(Deal.from_cards(ref["cards"]), Settings(draw=ref["draw"], **settings))


def uses_foundation_to_column(ref: dict) -> bool:
    return any(isinstance(s, dict) and s["from"].startswith("found-") for s in ref["line"] or ())


def assert_line_wins(game: Game, solution: Solution) -> None:
    """The solution is a win whose line the checked API accepts, ending in a win; the
    game itself is left unchanged."""
    assert solution.result == "win", solution
    assert solution.line is not None
    before = (game.moves, game.found_count, [c[:] for c in game.columns])
    replay = game.copy()
    for i, move in enumerate(solution.line):
        assert replay.status != WON, f"won before move {i}"
        replay.play(move)
    assert replay.status == WON
    assert (game.moves, game.found_count, [c[:] for c in game.columns]) == before
