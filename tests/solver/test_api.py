"""The solver's API beyond solve(): winnable seeds, analysis, plain-data jobs."""

from __future__ import annotations

import pytest

from klondike_race.engine import Deal, Game, NotationError, Settings
from klondike_race.solver import (
    Solution,
    analyse,
    find_winnable_seed,
    seed_sequence,
    solve,
)
from klondike_race.solver.jobs import (
    analyse_job,
    make_game,
    solve_job,
    winnable_seed_job,
)
from tests.conftest import step_to_move

from .helpers import BUDGET, assert_line_wins, reference, reference_game


def test_solution_json() -> None:
    solution = solve(reference_game(reference(0, 1)), max_seconds=BUDGET)
    data = solution.to_json()
    assert data["result"] == "win"
    assert data["moves"] == len(data["line"]) == len(solution.line)
    assert all(isinstance(m, str) for m in data["line"])
    assert isinstance(data["states"], int)
    with pytest.raises(AttributeError):
        solution.result = "lose"  # type: ignore[misc]  # frozen


def test_seed_sequence_is_documented() -> None:
    seq = seed_sequence(41)
    assert [next(seq) for _ in range(3)] == [41, 42, 43]
    seq = seed_sequence("daily-2026-11-29")
    assert [next(seq) for _ in range(3)] == [
        "daily-2026-11-29",
        "daily-2026-11-29/1",
        "daily-2026-11-29/2",
    ]


def test_find_winnable_seed_is_deterministic_and_proven() -> None:
    settings = Settings(draw=3)
    first = find_winnable_seed(100, settings, max_seconds=None, max_states=200_000)
    again = find_winnable_seed(100, settings, max_seconds=None, max_states=200_000)
    assert first is not None and again is not None
    assert (first.seed, first.tried) == (again.seed, again.tried)
    assert first.seed == 100 + first.tried - 1
    game = Game(Deal.from_seed(first.seed), settings)
    assert_line_wins(game, first.solution)


def test_find_winnable_seed_gives_up_after_max_tries() -> None:
    assert find_winnable_seed(1, max_seconds=None, max_states=1, max_tries=3) is None


def test_analyse_a_race() -> None:
    ref = reference(0, 1)
    won = reference_game(ref)
    for step in ref["line"]:
        won.play(step_to_move(step))
    midway = reference_game(ref)
    for step in ref["line"][:40]:
        midway.play(step_to_move(step))
    lost_ref = reference(41, 1)
    analysis = analyse([won, midway], max_seconds=BUDGET)
    assert analysis.players == ["won", "win"]
    assert analysis.deal.result == "win"
    assert analysis.par == len(analysis.deal.line)
    lost = analyse([reference_game(lost_ref)], max_seconds=BUDGET)
    assert lost.players == ["lose"]
    assert lost.par is None
    with pytest.raises(ValueError):
        analyse([])


def test_jobs_take_plain_data() -> None:
    ref = reference(0, 1)
    moves = [str(step_to_move(s)) for s in ref["line"][:30]]
    game = make_game(ref["cards"], {"draw": 1}, moves)
    assert game.moves == 30
    out = solve_job(ref["cards"], {"draw": 1}, moves, max_seconds=BUDGET)
    assert out["result"] == "win"
    replay = make_game(ref["cards"], {"draw": 1}, moves + out["line"])
    assert replay.status == "won"
    assert make_game("42").deal.seed == "42"
    assert make_game({"seed": 42}).deal.seed == "42"
    with pytest.raises(NotationError):
        make_game(ref["cards"][:51])


def test_seed_and_analysis_jobs() -> None:
    found = winnable_seed_job(7, {"draw": 1}, max_seconds=None, max_states=200_000)
    assert found is not None
    assert found["solution"]["result"] == "win"
    game = make_game(found["seed"], {"draw": 1}, found["solution"]["line"])
    assert game.status == "won"
    out = analyse_job(
        found["seed"], {"draw": 1}, [[], found["solution"]["line"][:10]], max_seconds=BUDGET
    )
    assert out["players"] == ["win", "win"]
    assert out["par"] == found["solution"]["moves"]
    assert out["deal"]["result"] == "win"


def test_solution_is_a_frozen_dataclass() -> None:
    s = Solution("unknown", None, 3, 0.5)
    assert s.to_json() == {
        "result": "unknown",
        "line": None,
        "moves": None,
        "states": 3,
        "seconds": 0.5,
    }
