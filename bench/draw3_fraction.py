"""The fraction of winnable Draw 3 deals, compared with the published figure.

    .venv/bin/python bench/draw3_fraction.py [--start 2000000] [--count 50000]
        [--states 200000] [--budget SECONDS] [--jobs 1] [--out draw3.jsonl] [--report]
        [--retry STATES]

Solves the seeded deals (docs/deal.md) of the integer seeds ``--start`` to ``--start +
--count - 1`` in Draw 3 (unlimited passes, Kings-only empty columns, foundation to
column allowed: the usual rules, docs/rules.md), one line of JSON per deal appended to
``--out``. A run can be stopped and started again: the seeds already in the file are
skipped. The default seeds are outside both corpora of bench/solver_bench.py. With
``--states`` (the default) each deal gets the same work on every machine; ``--budget``
adds a time limit. Off the critical path: 20,000 deals at 3 million positions take about
35 CPU minutes with the compiled core.

The winnable fraction lies between (wins) / N and (wins + unknown) / N; each bound is
given with its 95% interval (normal approximation of the binomial), and the published
figure, 81.945% +- 0.084% (Solvitaire, Blake and Gent), is compared with the widest
range: outside it, the solver or the deals disagree with it, and the exit status is 1.
``--report`` only summarises the file. ``--retry STATES`` searches again, with STATES
positions each, the deals of the range whose answer is ``unknown`` after fewer
positions (appending their new lines: the last line of a seed is its answer), to narrow
the range between the bounds. Every ``win`` line was replayed through
``Game.play`` by the solver; a ``lose`` rests on its proofs (docs/solver.md).
"""

from __future__ import annotations

import argparse
import json
import math
import sys
from concurrent.futures import ProcessPoolExecutor
from pathlib import Path
from typing import Any

from klondike_race.engine import Deal, Game, Settings
from klondike_race.solver import solve

PUBLISHED = 0.81945  # the winnable fraction of Draw 3 Klondike, Solvitaire
PUBLISHED_ERROR = 0.00084
Z95 = 1.96


def solve_seed(seed: int, states: int | None, budget: float | None) -> dict[str, Any]:
    game = Game(Deal.from_seed(seed), Settings(draw=3))
    solution = solve(game, max_seconds=budget, max_states=states)
    return {
        "seed": seed,
        "result": solution.result,
        "states": solution.states,
        "seconds": round(solution.seconds, 4),
    }


def summary(rows: list[dict[str, Any]]) -> dict[str, Any]:
    """Counts, the two bounds of the winnable fraction with their 95% intervals, and
    whether the published figure (with its error) meets the widest range."""
    n = len(rows)
    wins = sum(r["result"] == "win" for r in rows)
    unknown = sum(r["result"] == "unknown" for r in rows)
    out: dict[str, Any] = {"deals": n, "win": wins, "lose": n - wins - unknown, "unknown": unknown}
    if not n:
        return out
    low, high = wins / n, (wins + unknown) / n
    low_error = Z95 * math.sqrt(low * (1 - low) / n)
    high_error = Z95 * math.sqrt(high * (1 - high) / n)
    out["low"], out["low_error"] = low, low_error
    out["high"], out["high_error"] = high, high_error
    out["agrees"] = (
        low - low_error <= PUBLISHED + PUBLISHED_ERROR
        and high + high_error >= PUBLISHED - PUBLISHED_ERROR
    )
    return out


def read(path: Path) -> list[dict[str, Any]]:
    """The answer of each seed in the file: its last line."""
    if not path.exists():
        return []
    with path.open() as f:
        latest = {row["seed"]: row for row in map(json.loads, f) if row}
    return list(latest.values())


def report(rows: list[dict[str, Any]]) -> int:
    s = summary(rows)
    print(f"{s['deals']} deals: win {s['win']}, lose {s['lose']}, unknown {s['unknown']}")
    if not s["deals"]:
        return 0
    print(
        f"winnable: at least {100 * s['low']:.3f}% +- {100 * s['low_error']:.3f}%, "
        f"at most {100 * s['high']:.3f}% +- {100 * s['high_error']:.3f}% (95%)"
    )
    print(
        f"published: {100 * PUBLISHED:.3f}% +- {100 * PUBLISHED_ERROR:.3f}%: "
        + ("within the range" if s["agrees"] else "OUTSIDE the range")
    )
    return 0 if s["agrees"] else 1


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--start", type=int, default=2_000_000)
    parser.add_argument("--count", type=int, default=50_000)
    parser.add_argument("--states", type=int, default=200_000, help="positions per deal")
    parser.add_argument("--budget", type=float, help="seconds per deal (default: none)")
    parser.add_argument("--jobs", type=int, default=1)
    parser.add_argument("--out", default="draw3.jsonl")
    parser.add_argument("--report", action="store_true", help="only summarise --out")
    parser.add_argument(
        "--retry",
        type=int,
        metavar="STATES",
        help="search the unknown deals again with this many positions",
    )
    args = parser.parse_args(argv)
    path = Path(args.out)
    wanted = range(args.start, args.start + args.count)
    answers = {r["seed"]: r for r in read(path) if r["seed"] in wanted}
    if args.retry:
        states = args.retry
        seeds = [
            seed for seed, r in answers.items() if r["result"] == "unknown" and r["states"] < states
        ]
    else:
        states = args.states
        seeds = [seed for seed in wanted if seed not in answers]
    if not args.report and seeds:
        with path.open("a") as f, ProcessPoolExecutor(args.jobs) as pool:
            futures = pool.map(
                solve_seed, seeds, [states] * len(seeds), [args.budget] * len(seeds), chunksize=4
            )
            for i, row in enumerate(futures, 1):
                f.write(json.dumps(row) + "\n")
                f.flush()
                answers[row["seed"]] = row
                if i % 500 == 0:
                    print(f"{i}/{len(seeds)}", file=sys.stderr, flush=True)
    return report(list(answers.values()))


if __name__ == "__main__":
    sys.exit(main())
