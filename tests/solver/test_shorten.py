"""Par: the solver's line shortened (solver/shorten.py): always a real win the engine plays
from the deal, never longer than the line given, strictly shorter where there is
something to cut, the same on every run."""

from __future__ import annotations

import pytest

from klondike_race.engine import WON, Game
from klondike_race.engine.errors import EngineError
from klondike_race.engine.moves import DRAW_MOVE, RECYCLE_MOVE, Move
from klondike_race.solver import PAR_WORK, analyse, jobs, solve
from klondike_race.solver.jobs import analyse_job, solve_job
from klondike_race.solver.shorten import position_key, shorten
from tests.solver.helpers import reference, reference_game

STATES = 200_000  # a state budget: the same first line on every machine


def first_line(game: Game) -> list[Move]:
    solution = solve(game, max_seconds=None, max_states=STATES)
    assert solution.result == "win" and solution.line is not None
    return solution.line


def replays_to_a_win(game: Game, line: list[Move]) -> bool:
    replay = game.copy()
    for move in line:
        assert replay.status != WON
        replay.play(move)  # the checked entry: an illegal move raises
    return replay.status == WON


@pytest.mark.parametrize(
    ("deal_id", "draw", "settings"),
    [
        (0, 1, {}),
        (1, 1, {}),
        (2, 1, {}),
        (0, 3, {}),
        (4, 3, {}),
        (1, 3, {"passes": 3}),
        (3, 1, {"passes": 3}),
        (5, 1, {"empty": "any"}),
    ],
)
def test_the_shortened_line_is_a_win_never_longer(deal_id, draw, settings) -> None:
    game = reference_game(reference(deal_id, draw), **settings)
    line = first_line(game)
    short = shorten(game, line, PAR_WORK)
    assert replays_to_a_win(game, short.line)
    assert len(short.line) <= len(line)
    assert game.moves == 0  # the game given is not changed
    again = shorten(game, line, PAR_WORK)
    assert again.line == short.line and again.work == short.work  # deterministic


@pytest.mark.parametrize("deal_id", [0, 1, 2, 3])
def test_draw_1_lines_get_shorter(deal_id) -> None:
    """In Draw 1 the solver's line goes round the stock for each card it plays from the
    waste; cards it passed on the way and could already have played are played then."""
    game = reference_game(reference(deal_id, 1))
    line = first_line(game)
    short = shorten(game, line, PAR_WORK)
    assert len(short.line) < len(line) - 10, (len(line), len(short.line))
    assert replays_to_a_win(game, short.line)


def there_and_back(game: Game, line: list[Move]) -> tuple[int, Move, Move]:
    """The first point of ``line`` where a card moved from one column to another can be
    moved back to the same position."""
    replay = game.copy()
    for i, move in enumerate(line):
        for there in replay.legal_moves():
            if there.src < 7 and there.dst < 7:
                after = replay.copy()
                after.play(there)
                back = Move(there.kind, there.dst, there.src, there.count)
                try:
                    after.play(back)
                except EngineError:
                    continue
                if position_key(after) == position_key(replay):
                    return i, there, back
        replay.play(move)
    raise AssertionError("no move there and back")


def test_a_cycle_is_cut() -> None:
    """A whole pass through the stock, and a card moved and moved back, put into the line:
    both cycles are cut, and the result is what the line alone gives."""
    game = reference_game(reference(0, 3))
    line = first_line(game)
    stock = len(game.stock)
    passes = [DRAW_MOVE] * ((stock + 2) // 3) + [RECYCLE_MOVE]
    after = game.copy()
    for move in passes:
        after.play(move)
    assert position_key(after) == position_key(game)  # a cycle indeed
    i, there, back = there_and_back(game, line)
    padded = passes + line[:i] + [there, back] + line[i:]
    assert replays_to_a_win(game, padded)
    short = shorten(game, padded, PAR_WORK)
    assert len(short.line) < len(padded)
    assert short.line == shorten(game, line, PAR_WORK).line
    assert replays_to_a_win(game, short.line)


def test_the_budget_bounds_the_work() -> None:
    game = reference_game(reference(1, 1))
    line = first_line(game)
    assert shorten(game, line, 0).line == line
    small = shorten(game, line, 400)
    assert small.work <= 401
    assert replays_to_a_win(game, small.line) and len(small.line) <= len(line)
    full = shorten(game, line, 1_000_000)
    assert full.work < 1_000_000  # it ends by itself
    assert len(full.line) <= len(small.line)


def test_a_line_that_does_not_win_is_refused() -> None:
    game = reference_game(reference(0, 1))
    line = first_line(game)
    with pytest.raises(ValueError):
        shorten(game, line[:-1], PAR_WORK)


def test_a_won_game_and_a_line_from_midway() -> None:
    ref = reference(2, 1)
    game = reference_game(ref)
    line = first_line(game)
    midway = game.copy()
    for move in line[:60]:
        midway.play(move)
    rest = first_line(midway)
    short = shorten(midway, rest, PAR_WORK)
    assert replays_to_a_win(midway, short.line) and len(short.line) <= len(rest)
    won = game.copy()
    for move in line:
        won.play(move)
    assert shorten(won, [], PAR_WORK).line == []


def test_par_is_the_shortened_line() -> None:
    """analyse's par and the jobs' lines: shortened unless told not to; a hint's or a
    finish's search (solve, solve_job) is not shortened unless asked."""
    game = reference_game(reference(1, 1))
    line = first_line(game)
    plain = analyse([game], max_seconds=None, max_states=STATES, shorten_work=0)
    assert plain.par == len(line)
    analysis = analyse([game], max_seconds=None, max_states=STATES)
    assert analysis.deal.line == shorten(game, line, PAR_WORK).line
    assert analysis.par is not None and analysis.par < len(line)
    cards = reference(1, 1)["cards"]
    out = analyse_job(cards, {"draw": 1}, [], max_seconds=None, max_states=STATES)
    assert out["par"] == analysis.par
    assert solve_job(cards, {"draw": 1}, max_seconds=None, max_states=STATES)["moves"] == len(line)
    asked = solve_job(
        cards, {"draw": 1}, max_seconds=None, max_states=STATES, shorten_work=PAR_WORK
    )
    assert asked["moves"] == analysis.par
    assert replays_to_a_win(game, [Move.parse(m) for m in asked["line"]])


def test_a_worker_keeps_its_deals_analyses() -> None:
    """analyse_job searches a deal once per budget in a worker: the next race on it gets
    the same par without a search (the deal's solution is the kept one)."""
    cards = reference(2, 3)["cards"]
    jobs._deals.clear()
    first = analyse_job(cards, {"draw": 3}, [[]], max_seconds=None, max_states=STATES)
    assert len(jobs._deals) == 1
    (kept,) = jobs._deals.values()
    again = analyse_job(cards, {"draw": 3}, [["d"]], max_seconds=None, max_states=STATES)
    assert again["par"] == first["par"] == kept.to_json()["moves"]
    assert again["deal"] == kept.to_json() and len(jobs._deals) == 1
    analyse_job(cards, {"draw": 3}, [[]], max_seconds=None, max_states=STATES, shorten_work=0)
    assert len(jobs._deals) == 2  # another budget: searched again
    jobs._deals.clear()
    for n in range(jobs.DEALS_KEPT):
        jobs._deals[str(n)] = kept
    analyse_job(cards, {"draw": 1}, [[]], max_seconds=None, max_states=STATES)
    assert len(jobs._deals) == jobs.DEALS_KEPT and "0" not in jobs._deals  # the oldest went
    jobs._deals.clear()
