"""The solver against a naive oracle on late-game positions, under every setting.

The oracle searches the engine's own ``legal_moves()`` (draws and recycles included, no
pruning, no abstraction, every concrete position kept) until a win or until no new
position is left. It is slow, so the positions are late ones: a reference winning line
played most of the way, then some seeded random moves, which often spoil the win. Each
position is rebuilt under other settings (passes, empty columns, foundation to column) by
writing the position into a new game. This checks the solver's pruning and position
classes (docs/solver.md) against plain search, for wins and losses alike.
"""

from __future__ import annotations

import random

import pytest

from klondike_race.engine import WON, Deal, Game, Settings
from klondike_race.solver import solve
from tests.conftest import step_to_move

from .helpers import BUDGET, assert_line_wins, reference

CAP = 20_000  # oracle positions; a position needing more is left out (and counted)


def oracle(game: Game) -> bool | None:
    limited = game.settings.recycles_allowed is not None
    root = game.copy()
    root.log, root.times = [], []

    def key(g: Game) -> tuple:
        return (
            tuple(map(tuple, g.columns)),
            tuple(g.down),
            tuple(g.stock),
            tuple(g.waste),
            tuple(g.found),
            g.recycles if limited else 0,
        )

    seen = {key(root)}
    stack = [root]
    while stack:
        g = stack.pop()
        if g.found_count == 52:
            return True
        for move in g.legal_moves():
            h = g.copy()
            h.log, h.times = [], []
            h.apply(move)
            k = key(h)
            if k not in seen:
                seen.add(k)
                stack.append(h)
        if len(seen) > CAP:
            return None
    return False


def late_position(deal_id: int, draw: int, fraction: float, noise: int, seed: int) -> Game:
    ref = reference(deal_id, draw)
    game = Game(Deal.from_cards(ref["cards"]), Settings(draw=draw))
    for step in ref["line"][: int(len(ref["line"]) * fraction)]:
        game.play(step_to_move(step))
    rng = random.Random(seed)
    for _ in range(noise):
        moves = game.legal_moves()
        if not moves or game.status == WON:
            break
        game.play(rng.choice(moves))
    return game


def rebuilt(game: Game, settings: Settings) -> Game:
    """The same position under other settings (no recycle used yet)."""
    other = Game(game.deal, settings)
    other.columns = [c[:] for c in game.columns]
    other.down = game.down[:]
    other.stock, other.waste = game.stock[:], game.waste[:]
    other.found = game.found[:]
    other.found_count = game.found_count
    return other


# Foundation to column multiplies the positions the oracle must visit (cards go home and
# come back) beyond what it can search here: the oracle runs with it forbidden
# (test_settings.py and the reference corpus cover it allowed).
SETTINGS = [
    {"foundation_to_column": False},
    {"foundation_to_column": False, "passes": 1},
    {"foundation_to_column": False, "passes": 3},
    {"foundation_to_column": False, "empty": "any"},
    {"foundation_to_column": False, "empty": "any", "passes": 1},
]
POSITIONS = [
    (deal_id, draw, fraction, seed)
    for draw, deal_id, fraction, seed in [
        (1, 0, 0.8, 0),
        (1, 16, 0.8, 16),
        (1, 18, 0.8, 18),
        (1, 19, 0.8, 19),
        (1, 24, 0.8, 24),
        (3, 0, 0.8, 0),
        (3, 3, 0.8, 3),
        (3, 2, 0.8, 2),
    ]
]


@pytest.mark.parametrize(("deal_id", "draw", "fraction", "seed"), POSITIONS)
def test_solver_agrees_with_the_oracle(deal_id: int, draw: int, fraction: float, seed: int) -> None:
    base = late_position(deal_id, draw, fraction, 12, seed)
    compared = 0
    for values in SETTINGS:
        game = rebuilt(base, Settings(draw=draw, **values))
        if game.status == WON:
            continue
        truth = oracle(game)
        solution = solve(game, max_seconds=BUDGET)
        assert solution.result != "unknown"
        if solution.result == "win":
            assert_line_wins(game, solution)
        if truth is not None:
            compared += 1
            assert solution.result == ("win" if truth else "lose"), values
    assert compared >= 1, "no setting small enough for the oracle"
