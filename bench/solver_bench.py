"""Solver speed and agreement over the 300 reference deals (tests/data/deals.jsonl), per draw mode.

    .venv/bin/python bench/solver_bench.py [--draw 1|3] [--budget 10] [--first N]
                                           [--ids 6,32] [--jobs 1] [--csv FILE]

Prints, per draw mode: the fraction decided within the budget, median / p90 / max
seconds, states per second, the peak memory of a search (tracemalloc is not used: it
slows Python down; the figure is the growth of the process's peak RSS, so run with
``--jobs 1`` for a clean figure), and every disagreement with the reference, loudly. A
``win`` whose line does not replay would raise in the solver itself (SolverError).
Figures only: this is not a timed test.
"""

from __future__ import annotations

import argparse
import json
import resource
import statistics
import sys
import time
from concurrent.futures import ProcessPoolExecutor
from pathlib import Path

from klondike_race.engine import Deal, Game, Settings
from klondike_race.solver import solve

DEALS = Path(__file__).resolve().parent.parent / "tests" / "data" / "deals.jsonl"


def _peak_mb() -> float:
    return resource.getrusage(resource.RUSAGE_SELF).ru_maxrss / 1024


def run_one(ref: dict, budget: float) -> dict:
    before = _peak_mb()
    game = Game(Deal.from_cards(ref["cards"]), Settings(draw=ref["draw"]))
    t0 = time.perf_counter()
    solution = solve(game, max_seconds=budget)
    seconds = time.perf_counter() - t0
    return {
        "id": ref["id"],
        "draw": ref["draw"],
        "reference": ref["result"],
        "result": solution.result,
        "seconds": seconds,
        "states": solution.states,
        "moves": len(solution.line) if solution.line else None,
        "peak_mb": _peak_mb(),
        "peak_growth_mb": _peak_mb() - before,
    }


def pct(values: list[float], q: float) -> float:
    values = sorted(values)
    return values[min(len(values) - 1, int(q * len(values)))]


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--draw", type=int, choices=(1, 3), action="append")
    parser.add_argument("--budget", type=float, default=10.0)
    parser.add_argument("--first", type=int, default=300, help="only deals 0..N-1")
    parser.add_argument("--ids", help="comma-separated deal ids")
    parser.add_argument("--jobs", type=int, default=1)
    parser.add_argument("--csv", help="write one line per deal here")
    parser.add_argument("--verbose", action="store_true")
    args = parser.parse_args()
    draws = args.draw or [1, 3]
    refs = [json.loads(line) for line in DEALS.open()]
    ids = {int(x) for x in args.ids.split(",")} if args.ids else None
    refs = [
        r for r in refs
        if r["draw"] in draws and r["id"] < args.first and (ids is None or r["id"] in ids)
    ]  # fmt: skip
    rows: list[dict] = []
    if args.jobs > 1:
        with ProcessPoolExecutor(args.jobs) as pool:
            rows = list(pool.map(run_one, refs, [args.budget] * len(refs)))
    else:
        for ref in refs:
            row = run_one(ref, args.budget)
            rows.append(row)
            if args.verbose:
                print(json.dumps(row), flush=True)
    if args.csv:
        with open(args.csv, "w") as f:
            for row in rows:
                f.write(json.dumps(row) + "\n")
    bad = 0
    for draw in draws:
        mine = [r for r in rows if r["draw"] == draw]
        if not mine:
            continue
        decided = [r for r in mine if r["result"] != "unknown"]
        secs = [r["seconds"] for r in mine]
        states = sum(r["states"] for r in mine)
        wins = sum(r["result"] == "win" for r in mine)
        loses = sum(r["result"] == "lose" for r in mine)
        print(
            f"draw {draw}: {len(mine)} deals, decided {len(decided)}/{len(mine)} "
            f"({100 * len(decided) / len(mine):.1f}%) within {args.budget:g} s "
            f"[win {wins}, lose {loses}, unknown {len(mine) - len(decided)}]"
        )
        print(
            f"  seconds: median {statistics.median(secs):.3f}  p90 {pct(secs, 0.9):.3f}  "
            f"max {max(secs):.3f}  total {sum(secs):.1f}"
        )
        print(
            f"  states: {states} in {sum(secs):.1f} s = {states / max(sum(secs), 1e-9):,.0f}/s; "
            f"most in one search {max(r['states'] for r in mine):,}"
        )
        print(
            f"  memory: peak RSS {max(r['peak_mb'] for r in mine):.0f} MB, "
            f"largest growth in one search {max(r['peak_growth_mb'] for r in mine):.0f} MB"
        )
        undecided = [r["id"] for r in mine if r["result"] == "unknown"]
        if undecided:
            print(f"  undecided ids: {' '.join(map(str, undecided))}")
        for r in mine:
            if r["result"] != "unknown" and r["result"] != r["reference"]:
                bad += 1
                print(
                    f"  !!! DISAGREEMENT deal {r['id']} draw {draw}: solver {r['result']}, "
                    f"reference {r['reference']}"
                )
    if bad:
        print(f"!!! {bad} DISAGREEMENT(S) WITH THE REFERENCE !!!")
        return 1
    print("no disagreement with the reference")
    return 0


if __name__ == "__main__":
    sys.exit(main())
