"""Par: how much shorter the solver's line gets, and what it costs (docs/benchmarks.md, "Par").

    .venv/bin/python bench/par_bench.py [--first 40] [--draw 1|3] [--work 5000]
        [--states 200000]

For the first N won deals of the reference corpus (tests/data/deals.jsonl) per draw mode:
the length of the solver's first line (``solve`` with a state budget, the same on every
machine), of that line shortened (``shorten`` within ``--work`` engine moves), of the
reference solver's replay-verified line, and the time each of the solver's steps took.
Printed per draw mode: medians of the lengths, the median ratios shortened/first and
shortened/reference, the median and largest time of the search and of the shortening,
and the work spent. Every shortened line is replayed through ``Game.play`` here and must
win and be no longer than the first (else the exit status is 1). Figures only: this is
not a timed test.
"""

from __future__ import annotations

import argparse
import json
import statistics
import sys
import time
from pathlib import Path

from klondike_race.engine import WON, Deal, Game, Settings
from klondike_race.solver import PAR_WORK, solve
from klondike_race.solver.shorten import shorten

DEALS = Path(__file__).resolve().parent.parent / "tests" / "data" / "deals.jsonl"


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--first", type=int, default=40, help="won deals per draw mode")
    parser.add_argument("--draw", type=int, choices=(1, 3), action="append")
    parser.add_argument("--work", type=int, default=PAR_WORK, help="shortening budget")
    parser.add_argument("--states", type=int, default=200_000, help="search budget")
    args = parser.parse_args()
    with DEALS.open() as f:
        records = [json.loads(line) for line in f]
    failures = 0
    for draw in args.draw or (1, 3):
        wins = [r for r in records if r["draw"] == draw and r["result"] == "win"][: args.first]
        rows = []
        for ref in wins:
            game = Game(Deal.from_cards(ref["cards"]), Settings(draw=draw))
            began = time.perf_counter()
            solution = solve(game, max_seconds=None, max_states=args.states)
            searched = time.perf_counter() - began
            if solution.result != "win" or solution.line is None:
                continue  # not found within the state budget: no par
            began = time.perf_counter()
            short = shorten(game, solution.line, args.work)
            shortened = time.perf_counter() - began
            replay = game.copy()
            for move in short.line:
                replay.play(move)
            if replay.status != WON or len(short.line) > len(solution.line):
                print(f"FAILED: deal {ref['id']} draw {draw}", file=sys.stderr)
                failures += 1
            rows.append(
                {
                    "first": len(solution.line),
                    "short": len(short.line),
                    "ref": len(ref["line"]),
                    "search": searched,
                    "shorten": shortened,
                    "work": short.work,
                }
            )

        def median(name: str, rows: list[dict[str, float] | dict[str, int]] = rows) -> float:
            return statistics.median(r[name] for r in rows)

        def ratio(a: str, b: str, rows: list[dict[str, float] | dict[str, int]] = rows) -> float:
            return statistics.median(r[a] / r[b] for r in rows)

        print(
            f"Draw {draw}: {len(rows)} deals; moves median: first {median('first'):g}, "
            f"shortened {median('short'):g}, reference {median('ref'):g}; "
            f"shortened/first {ratio('short', 'first'):.3f} "
            f"(total {sum(r['short'] for r in rows) / sum(r['first'] for r in rows):.3f}), "
            f"shortened/reference {ratio('short', 'ref'):.3f}, "
            f"strictly shorter {sum(r['short'] < r['first'] for r in rows)}/{len(rows)}"
        )
        print(
            f"  time per deal: search median {median('search') * 1000:.1f} ms "
            f"(max {max(r['search'] for r in rows) * 1000:.1f}); shortening median "
            f"{median('shorten') * 1000:.1f} ms "
            f"(max {max(r['shorten'] for r in rows) * 1000:.1f}); "
            f"work median {median('work'):g} (max {max(r['work'] for r in rows)}, "
            f"budget {args.work}); "
            f"{sum(r['shorten'] for r in rows) / max(1, sum(r['work'] for r in rows)) * 1e6:.1f} "
            "us per unit of work"
        )
    return 1 if failures else 0


if __name__ == "__main__":
    sys.exit(main())
