"""The solver against the reference corpus (tests/data/deals.jsonl): a fast subset here; the full
600-deal agreement check is bench/solver_bench.py."""

from __future__ import annotations

import pytest

from klondike_race.engine import WON
from klondike_race.solver import solve
from tests.conftest import reference_deals, step_to_move

from .helpers import (
    BUDGET,
    assert_line_wins,
    reference,
    reference_game,
    uses_foundation_to_column,
)

# Losses the solver proves quickly (Draw 1 losses are the slowest searches of all).
LOSSES = {1: [41, 42], 3: [6, 25, 30, 39, 42, 48]}
# The slowest searches (several seconds each; bench/solver_bench.py covers them).
SLOW = {1: {6, 32, 36}, 3: {13, 32, 36, 41}}
# Wins whose reference line moves a card off a foundation.
F2C_WINS = {
    draw: [
        r["id"]
        for r in reference_deals()
        if r["draw"] == draw and uses_foundation_to_column(r) and r["id"] not in SLOW[draw]
    ][:8]
    for draw in (1, 3)
}


def _subset(draw: int) -> list[int]:
    """40 deals per draw mode: the losses above, the foundation-to-column wins, and the
    first deals (up to 40 in all)."""
    ids = LOSSES[draw] + [i for i in F2C_WINS[draw] if i not in LOSSES[draw]]
    for ref in reference_deals():
        if len(ids) >= 40:
            break
        if ref["draw"] == draw and ref["id"] not in ids and ref["id"] not in SLOW[draw]:
            ids.append(ref["id"])
    return ids


CASES = [(draw, deal_id) for draw in (1, 3) for deal_id in _subset(draw)]


def test_subset_has_losses_and_foundation_to_column_wins() -> None:
    for draw in (1, 3):
        refs = [reference(i, draw) for i in _subset(draw)]
        assert len(refs) == 40
        assert sum(r["result"] == "lose" for r in refs) >= 2
        assert sum(uses_foundation_to_column(r) for r in refs) >= 5


@pytest.mark.parametrize(("draw", "deal_id"), CASES, ids=lambda v: str(v))
def test_solver_agrees_with_reference(draw: int, deal_id: int) -> None:
    ref = reference(deal_id, draw)
    game = reference_game(ref)
    solution = solve(game, max_seconds=BUDGET)
    assert solution.result == ref["result"], f"deal {deal_id} draw {draw}"
    if solution.result == "win":
        assert_line_wins(game, solution)
    else:
        assert solution.line is None
    # a deadlock of face-down cards proves a loss before any position is searched
    assert solution.states > 0 or solution.result == "lose"
    assert solution.seconds >= 0


@pytest.mark.parametrize(
    "ref",
    [r for r in reference_deals() if r["result"] == "win"],
    ids=lambda r: f"{r['id']}-draw{r['draw']}",
)
def test_reference_lines_replay_as_wins(ref: dict) -> None:
    """Every reference line replays through the checked API and ends in a win."""
    game = reference_game(ref)
    for step in ref["line"]:
        game.play(step_to_move(step))
    assert game.status == WON


PLAN_CASES = [(draw, deal_id, plan) for draw, deal_id in CASES[::4] for plan in (1, 2, 3)]


@pytest.mark.parametrize(("draw", "deal_id", "plan"), PLAN_CASES, ids=lambda v: str(v))
def test_every_plan_agrees_with_reference(draw: int, deal_id: int, plan: int) -> None:
    """The plans of the workers that join a search (solver.PLANS; plan 3 is plan 1 with
    other restart seeds) are searches of the same graph: the same answers."""
    ref = reference(deal_id, draw)
    game = reference_game(ref)
    solution = solve(game, max_seconds=BUDGET, plan=plan)
    assert solution.result == ref["result"], f"deal {deal_id} draw {draw} plan {plan}"
    if solution.result == "win":
        assert_line_wins(game, solution)
