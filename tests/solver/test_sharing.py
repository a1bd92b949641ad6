"""What the searches share: positions proven lost (Tarjan's components), and the Draw 1
relaxation (docs/solver.md, "Sharing what is proven lost" and "The Draw 1 relaxation")."""

from __future__ import annotations

import pytest

from klondike_race.engine import Deal, Game, Settings
from klondike_race.engine.moves import DRAW_MOVE, RECYCLE_MOVE
from klondike_race.solver import search as search_module
from klondike_race.solver import search_of, solve
from klondike_race.solver.search import TEST_MAX, Budget, Relaxation, Search

from .helpers import BUDGET, assert_line_wins, reference, reference_game


def bare(game: Game, **options: object) -> Search:
    return search_of(
        game,
        search_module,
        **options,
    )


@pytest.mark.parametrize(("deal_id", "draw"), [(11, 1), (35, 1), (10, 1), (16, 3), (12, 3)])
@pytest.mark.parametrize("first", [300, 3500])
def test_a_search_using_what_another_proved_lost_still_finds_the_win(
    deal_id: int, draw: int, first: int
) -> None:
    """The other move order runs a while (not to the end) and proves some positions
    lost; a search that skips them still wins."""
    ref = reference(deal_id, draw)
    assert ref["result"] == "win"
    game = reference_game(ref)
    lost: set[bytes] = set()
    assert bare(game, deck_first=True, lost=lost).advance(first) is None
    assert bare(game, lost=lost).run() is True


def test_a_loss_proven_by_one_search_is_known_to_the_other() -> None:
    """Deal 104 (Draw 1, lost): once one search has proven it, the start position is in
    the shared set and the other search answers at once."""
    game = reference_game(reference(104, 1))
    lost: set[bytes] = set()
    first = bare(game, lost=lost)
    assert first.run() is False
    assert first.key() in lost
    second = bare(game, deck_first=True, lost=lost)
    assert second.advance(1) is False
    assert second.states == 0


def test_the_draw_one_relaxation_proves_a_draw_three_loss() -> None:
    """Deal 219 is lost in Draw 1, so in Draw 3 too: the Draw 1 search of the whole
    position proves it in far fewer positions than the Draw 3 searches need alone."""
    ref = reference(219, 3)
    assert ref["result"] == "lose" and reference(219, 1)["result"] == "lose"
    solution = solve(reference_game(ref), max_seconds=None, max_states=40_000)
    assert solution.result == "lose"
    # limited passes, with a recycle already used: still lost (the relaxation drops the
    # pass count and the recycles used)
    game = reference_game(ref, passes=3)
    while game.stock:
        game.play(DRAW_MOVE)
    game.play(RECYCLE_MOVE)
    assert game.recycles == 1
    assert solve(game, max_seconds=BUDGET).result == "lose"


def test_the_relaxation_tests_cut_a_draw_three_loss_short() -> None:
    """Deal 220 is won in Draw 1 and lost in Draw 3: the relaxation of the whole deal
    finds a Draw 1 win (proving nothing), but many positions of the Draw 3 search are
    lost even in Draw 1; testing those whose moves cost many positions cuts off what was
    searched from them."""
    assert reference(220, 1)["result"] == "win"
    ref = reference(220, 3)
    assert ref["result"] == "lose"
    game = reference_game(ref)
    plain = bare(game, max_states=45_000)
    tested = bare(game, max_states=45_000, relaxation=Relaxation())
    assert tested.run() is False
    assert tested.cuts > 0
    assert tested.relaxation is not None and tested.relaxation.lost
    with pytest.raises(Budget):
        plain.run()


@pytest.mark.parametrize(("deal_id", "draw", "passes"), [(0, 3, 0), (7, 3, 3), (1, 1, 3)])
def test_wins_survive_the_relaxation_tests(deal_id: int, draw: int, passes: int) -> None:
    """A win (limited passes included) is still found, and its line replays."""
    ref = reference(deal_id, draw)
    game = Game(Deal.from_cards(ref["cards"]), Settings(draw=draw, passes=passes))
    assert bare(game, relaxation=Relaxation()).run() is True
    assert_line_wins(game, solve(game, max_seconds=BUDGET))


@pytest.mark.parametrize("deal_id", [148, 142])
def test_wins_survive_the_cuts(deal_id: int) -> None:
    """A test that proves a position lost cuts off everything searched from it that is
    not finished: all of it is reachable from a lost position, so lost too. Won Draw 3
    deals where the tests cut many times are still won, and their lines replay."""
    ref = reference(deal_id, 3)
    assert ref["result"] == "win"
    game = reference_game(ref)
    search = bare(game, deck_first=True, relaxation=Relaxation())
    assert search.run() is True
    assert search.cuts > 0
    assert_line_wins(game, solve(game, max_seconds=BUDGET))


def test_the_other_search_skips_what_the_tests_proved_lost() -> None:
    """The second search runs no test of its own but looks up the Draw 1 keys the first
    one's tests proved lost: the same loss in fewer positions."""
    game = reference_game(reference(220, 3))
    relax = Relaxation()
    assert bare(game, relaxation=relax).run() is False
    plain = bare(game, deck_first=True)
    assert plain.run() is False
    looking = bare(game, deck_first=True, relaxation=relax, tests=False)
    assert looking.run() is False
    assert looking.relaxed_states == 0
    assert looking.states < plain.states


@pytest.mark.parametrize(("deal_id", "draw"), [(104, 1), (219, 3), (16, 3), (12, 3)])
def test_a_search_in_a_random_order_reaches_the_same_answer(deal_id: int, draw: int) -> None:
    """Move order decides only how soon: a search in a random order is as complete as the
    fixed ones (it proves the same losses), and the same seed gives the same search."""
    ref = reference(deal_id, draw)
    game = reference_game(ref)
    expected = ref["result"] == "win"
    runs = [bare(game, shuffle=seed, max_states=400_000) for seed in (1, 2, 1)]
    assert [run.run() for run in runs] == [expected] * 3
    assert runs[0].states == runs[2].states
    assert runs[0].path == runs[2].path


def test_restarts_in_random_orders_find_a_win_the_fixed_orders_miss() -> None:
    """Deal 166 (Draw 3) is won, but neither fixed move order finds the win in 100,000
    positions; with the restarts the solver finds it in fewer, and a shared proven-lost
    set stays sound with them."""
    ref = reference(166, 3)
    assert ref["result"] == "win"
    game = reference_game(ref)
    for deck_first in (False, True):
        assert bare(game, deck_first=deck_first).advance(100_000) is None
    solution = solve(game, max_seconds=None, max_states=60_000)
    assert solution.result == "win"
    assert_line_wins(game, solution)


def test_a_state_budget_is_kept_up_to_one_test_and_gives_the_same_answer_twice() -> None:
    """Restarts, tests and cuts read no clock: with a state budget the search is the same
    every time, and it stops within one relaxation test of the budget."""
    game = reference_game(reference(182, 3))
    first = solve(game, max_seconds=None, max_states=150_000)
    second = solve(game, max_seconds=None, max_states=150_000)
    assert first.result == "unknown"
    assert 150_000 <= first.states <= 150_000 + TEST_MAX
    assert (second.result, second.states) == (first.result, first.states)
