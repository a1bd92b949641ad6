"""bench/draw3_fraction.py: the bounds of the winnable fraction, the comparison with the
published figure, and a run that is stopped and started again."""

from __future__ import annotations

import json
from pathlib import Path

import pytest
from bench.draw3_fraction import PUBLISHED, main, summary


def rows(win: int, lose: int, unknown: int) -> list[dict[str, object]]:
    results = ["win"] * win + ["lose"] * lose + ["unknown"] * unknown
    return [{"seed": i, "result": r} for i, r in enumerate(results)]


def test_the_bounds_count_unknown_deals_as_either() -> None:
    s = summary(rows(800, 150, 50))
    assert (s["deals"], s["win"], s["lose"], s["unknown"]) == (1000, 800, 150, 50)
    assert s["low"] == pytest.approx(0.80) and s["high"] == pytest.approx(0.85)
    assert s["low_error"] == pytest.approx(1.96 * (0.8 * 0.2 / 1000) ** 0.5)
    assert s["low"] < PUBLISHED < s["high"] and s["agrees"]


@pytest.mark.parametrize(("win", "lose"), [(9000, 1000), (7000, 3000)])
def test_a_fraction_far_from_the_published_one_disagrees(win: int, lose: int) -> None:
    assert summary(rows(win, lose, 0))["agrees"] is False


def test_a_run_resumes_where_it_stopped(tmp_path: Path) -> None:
    out = tmp_path / "draw3.jsonl"
    args = ["--start", "2000000", "--states", "3000", "--out", str(out)]
    main([*args, "--count", "2"])
    first = [json.loads(line) for line in out.read_text().splitlines()]
    assert [r["seed"] for r in first] == [2000000, 2000001]
    assert all(r["result"] in ("win", "lose", "unknown") for r in first)
    main([*args, "--count", "3"])  # only the third seed is solved
    again = [json.loads(line) for line in out.read_text().splitlines()]
    assert again[:2] == first and [r["seed"] for r in again] == [2000000, 2000001, 2000002]


def test_a_retry_searches_the_unknown_deals_again(tmp_path: Path) -> None:
    out = tmp_path / "draw3.jsonl"
    args = ["--start", "2000000", "--count", "6", "--out", str(out)]
    main([*args, "--states", "30"])
    first = [json.loads(line) for line in out.read_text().splitlines()]
    unknown = [r["seed"] for r in first if r["result"] == "unknown"]
    assert unknown  # 30 positions decide few deals
    main([*args, "--retry", "5000"])
    lines = [json.loads(line) for line in out.read_text().splitlines()]
    assert lines[:6] == first
    assert [r["seed"] for r in lines[6:]] == unknown  # only those, once each
    assert all(r["states"] >= 30 for r in lines[6:])
    main([*args, "--retry", "5000"])  # nothing left below 5,000 positions: no new line
    assert len(out.read_text().splitlines()) == len(lines)
    answers = {r["seed"]: r["result"] for r in lines}  # the last line of each seed
    assert summary([{"seed": s, "result": r} for s, r in answers.items()])["deals"] == 6
