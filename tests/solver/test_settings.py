"""Settings that change the answer. The deals were found by a throwaway search over the
reference corpus and frozen here; the foundation-to-column position is built by hand
(every reference deal whose line moves a card off a foundation can also be won without)."""

from __future__ import annotations

import pytest

from klondike_race.engine import Deal, Game, Settings, parse_card
from klondike_race.solver import solve

from .helpers import BUDGET, assert_line_wins, reference, reference_game


@pytest.mark.parametrize(("deal_id", "draw"), [(1, 1), (4, 1), (7, 1)])
def test_unlimited_passes_win_one_pass_loses(deal_id: int, draw: int) -> None:
    ref = reference(deal_id, draw)
    assert ref["result"] == "win"
    game = reference_game(ref)
    assert_line_wins(game, solve(game, max_seconds=BUDGET))
    three = reference_game(ref, passes=3)
    assert_line_wins(three, solve(three, max_seconds=BUDGET))
    one = reference_game(ref, passes=1)
    assert solve(one, max_seconds=BUDGET).result == "lose"


@pytest.mark.parametrize(("deal_id", "draw"), [(42, 1), (61, 1), (120, 1)])
def test_any_card_in_an_empty_column_turns_a_loss_into_a_win(deal_id: int, draw: int) -> None:
    ref = reference(deal_id, draw)
    assert ref["result"] == "lose"
    assert solve(reference_game(ref), max_seconds=BUDGET).result == "lose"
    game = reference_game(ref, empty="any")
    assert_line_wins(game, solve(game, max_seconds=BUDGET))


def position(settings: Settings, columns: list[str], found: dict[str, int]) -> Game:
    """A game in an explicit position: ``columns`` as text, ``[Xx]`` face down, bottom
    first (e.g. ``"[3h] 4h"``); ``found`` the cards on each suit's foundation; stock and
    waste empty. The deal is only a placeholder (the solver reads the position)."""
    game = Game(Deal.from_seed(0), settings)
    game.columns, game.down = [], []
    for text in columns:
        cards = text.split()
        game.columns.append([parse_card(c.strip("[]")) for c in cards])
        game.down.append(sum(c.startswith("[") for c in cards))
    game.columns += [[] for _ in range(7 - len(columns))]
    game.down += [0] * (7 - len(columns))
    game.found = [found.get(s, 0) for s in "cdhs"]
    game.found_count = sum(game.found)
    game.stock, game.waste = [], []
    cards = [c for col in game.columns for c in col]
    cards += [s * 13 + r for s, n in enumerate(game.found) for r in range(n)]
    assert sorted(cards) == list(range(52))
    return game


# The 3h lies face down under the 4h; the black fives are home and only a King may fill
# an empty column. The one way to turn the 3h: take the 5c off its foundation onto the 6h,
# move the 4h onto it.
NEEDS_F2C = (
    ["[3h] 4h", "6h", "Kc Qh Jc Th 9c 8h 7c", "Kh Qc Jh Tc 9h 8c 7h 6c 5h"],
    {"c": 5, "d": 13, "h": 2, "s": 13},
)


@pytest.mark.parametrize("draw", [1, 3])
def test_foundation_to_column_is_searched_and_can_be_needed(draw: int) -> None:
    allowed = position(Settings(draw=draw), *NEEDS_F2C)
    solution = solve(allowed, max_seconds=BUDGET)
    assert_line_wins(allowed, solution)
    assert any(m.src >= 8 and m.dst < 7 for m in solution.line)  # a card off a foundation
    forbidden = position(Settings(draw=draw, foundation_to_column=False), *NEEDS_F2C)
    assert solve(forbidden, max_seconds=BUDGET).result == "lose"
    # with any card allowed into an empty column, the 4h can go there instead
    any_empty = position(Settings(draw=draw, foundation_to_column=False, empty="any"), *NEEDS_F2C)
    assert_line_wins(any_empty, solve(any_empty, max_seconds=BUDGET))


def test_foundation_to_column_forbidden_on_a_reference_deal_still_agrees() -> None:
    """A reference win whose line lifts a card off a foundation is still won without."""
    ref = reference(7, 3)
    game = reference_game(ref, foundation_to_column=False)
    solution = solve(game, max_seconds=BUDGET)
    assert_line_wins(game, solution)
    assert not any(m.src >= 8 and m.dst < 7 for m in solution.line)
