"""Solver speed and correctness on two corpora, per draw mode.

    .venv/bin/python bench/solver_bench.py [--corpus tuning|eval|both] [--draw 1|3]
        [--budget 10] [--states N] [--first N] [--eval-count 1000] [--ids 6,32]
        [--jobs 1 | --workers N] [--check-losses K] [--csv FILE] [--verbose]
    .venv/bin/python bench/solver_bench.py --list-eval [--eval-count 1000]

The corpora:

* ``tuning``: the 300 reference deals of tests/data/deals.jsonl (ids 0-299, dealt by
  ``random.Random(5_000_000 + id)``), with reference outcomes. The solver's settings were
  chosen on these deals (and only on these).
* ``eval``: the evaluation corpus, never tuned on: the seeded deals (the project's own v1
  shuffle, docs/deal.md) of the integer seeds ``EVAL_START``, ``EVAL_START + 1``, ...
  (1,000,000 to 1,000,999 by default; ``--eval-count`` takes the first N of them, and
  ``--list-eval`` prints them). No outcome is stored: every answer is checked here.

Printed, per corpus and draw mode: the fraction decided within the budget, the median,
p90 and max search time (``Solution.seconds``), positions searched per second (all the
corpus's positions over all its search time), and the peak memory (the growth of the
process's peak RSS; run with ``--jobs 1`` for a clean figure). Positions per second are
given per second of search time and per CPU second of the process (the figure to compare
on a shared machine, where the search time also counts the waits for a core).

What is checked (any failure is printed loudly and the exit status is 1):

* every ``win`` line is replayed here through ``Game.play`` on a fresh game and must end
  won (the solver replays it too before returning it);
* on the tuning corpus, every decided answer must equal the reference outcome;
* ``--check-losses K``: up to K ``lose`` answers per corpus and draw mode are searched
  again by a second, independently configured search (``check_loss``): one plain
  ``Search`` in the other move order, with no obligations, no pointer dominance, no
  deadlock test, no Draw 1 relaxation, nothing shared, no restarts. It must answer
  ``lose`` too, or run out of its own budget (``--check-states``; counted as unchecked).

``--workers N`` sends each deal, one at a time, through a ``SolverPool`` of N worker
processes: a deal one worker has not decided within 0.1 s is searched by the others too
(docs/solver.md, "Several workers on one position"); the time is the wall time of the
answer.

``--states N`` gives every deal a fixed budget of N positions instead of (as well as)
the time budget: the same positions are searched on every machine, so positions per
second compares two versions of the solver on the same work.
Figures only: this is not a timed test.
"""

from __future__ import annotations

import argparse
import asyncio
import contextlib
import json
import os
import resource
import statistics
import sys
import time
from concurrent.futures import ProcessPoolExecutor
from pathlib import Path
from typing import Any

from klondike_race.engine import WON, Deal, Game, Move, Settings
from klondike_race.solver import search as search_module
from klondike_race.solver import search_of, solve
from klondike_race.solver.pool import SPREAD_AFTER, SolverPool
from klondike_race.solver.search import Budget

DEALS = Path(__file__).resolve().parent.parent / "tests" / "data" / "deals.jsonl"
EVAL_START = 1_000_000  # the evaluation corpus: seeds EVAL_START .. EVAL_START + count - 1
EVAL_COUNT = 1000


def eval_seeds(count: int = EVAL_COUNT) -> list[int]:
    """The evaluation corpus: its seeds, in order."""
    return list(range(EVAL_START, EVAL_START + count))


def _peak_mb() -> float:
    return resource.getrusage(resource.RUSAGE_SELF).ru_maxrss / 1024


def _game(item: dict[str, Any]) -> Game:
    deal = Deal.from_cards(item["cards"]) if "cards" in item else Deal.from_seed(item["seed"])
    return Game(deal, Settings(draw=item["draw"]))


def check_loss(game: Game, max_states: int) -> str:
    """A second, independently configured search of a position the solver says is lost:
    "lose", "win" (a disagreement) or "unknown" (out of ``max_states`` positions)."""
    search = search_of(
        game,
        search_module,
        max_states=max_states,
        deck_first=True,
        deadlock_test=False,
        prune=False,
    )
    try:
        return "win" if search.run() else "lose"
    except Budget:
        return "unknown"


def run_one(item: dict[str, Any], budget: float | None, states: int | None) -> dict[str, Any]:
    before = _peak_mb()
    game = _game(item)
    cpu = time.process_time()
    solution = solve(game, max_seconds=budget, max_states=states)
    cpu = time.process_time() - cpu
    replayed = None
    if solution.result == "win":
        assert solution.line is not None
        replay = _game(item)
        try:
            for move in solution.line:
                replay.play(move)
            replayed = replay.status == WON
        except Exception:
            replayed = False
    return {
        "corpus": item["corpus"],
        "id": item["id"],
        "draw": item["draw"],
        "reference": item.get("reference"),
        "result": solution.result,
        "replayed": replayed,
        "seconds": solution.seconds,
        "cpu": cpu,
        "states": solution.states,
        "moves": len(solution.line) if solution.line else None,
        "peak_mb": _peak_mb(),
        "peak_growth_mb": _peak_mb() - before,
    }


def _children_cpu(pool: SolverPool) -> float:
    """CPU seconds of the pool's worker processes so far (Linux /proc)."""
    total = 0
    for pid in list(pool._executor._processes or {}):
        with contextlib.suppress(OSError):
            fields = Path(f"/proc/{pid}/stat").read_text().rsplit(")", 1)[1].split()
            total += int(fields[11]) + int(fields[12])  # utime, stime
    return total / os.sysconf("SC_CLK_TCK")


async def run_pooled(
    todo: list[dict[str, Any]], budget: float, workers: int, spread_after: float
) -> list[dict]:
    """Each deal through ``SolverPool.solve`` with ``workers`` worker processes (the idle
    ones join a search still going after ``spread_after``), one deal at a time."""
    rows = []
    async with SolverPool(workers, spread_after=spread_after) as pool:
        await pool.solve(1, {"draw": 1}, max_seconds=1)  # start the workers
        for item in todo:
            deal = item["cards"] if "cards" in item else item["seed"]
            cpu = _children_cpu(pool)
            wall = time.perf_counter()
            out = await pool.solve(deal, {"draw": item["draw"]}, max_seconds=budget)
            wall = time.perf_counter() - wall
            await asyncio.sleep(0.05)  # the helpers' last turn, in the CPU figure
            cpu = _children_cpu(pool) - cpu
            replayed = None
            if out["result"] == "win":
                replay = _game(item)
                try:
                    for move in out["line"]:
                        replay.play(Move.parse(move))
                    replayed = replay.status == WON
                except Exception:
                    replayed = False
            rows.append(
                {
                    "corpus": item["corpus"],
                    "id": item["id"],
                    "draw": item["draw"],
                    "reference": item.get("reference"),
                    "result": out["result"],
                    "replayed": replayed,
                    "seconds": wall,
                    "cpu": cpu,
                    "states": out["states"],
                    "moves": out["moves"],
                    "peak_mb": 0.0,
                    "peak_growth_mb": 0.0,
                }
            )
    return rows


def pct(values: list[float], q: float) -> float:
    values = sorted(values)
    return values[min(len(values) - 1, int(q * len(values)))]


def _ms(seconds: float) -> str:
    return f"{seconds * 1000:.1f} ms" if seconds < 1 else f"{seconds:.2f} s"


def items(args: argparse.Namespace) -> list[dict[str, Any]]:
    draws = args.draw or [1, 3]
    ids = {int(x) for x in args.ids.split(",")} if args.ids else None
    out: list[dict[str, Any]] = []
    if args.corpus in ("tuning", "both"):
        for line in DEALS.open():
            r = json.loads(line)
            if r["draw"] in draws and r["id"] < args.first and (ids is None or r["id"] in ids):
                out.append(
                    {
                        "corpus": "tuning",
                        "id": r["id"],
                        "draw": r["draw"],
                        "cards": r["cards"],
                        "reference": r["result"],
                    }
                )
    if args.corpus in ("eval", "both"):
        for draw in draws:
            for seed in eval_seeds(args.eval_count):
                if ids is None or seed in ids:
                    out.append({"corpus": "eval", "id": seed, "draw": draw, "seed": seed})
    return out


def report(rows: list[dict[str, Any]], args: argparse.Namespace) -> int:
    bad = 0
    for corpus in ("tuning", "eval"):
        for draw in (1, 3):
            mine = [r for r in rows if r["corpus"] == corpus and r["draw"] == draw]
            if not mine:
                continue
            decided = [r for r in mine if r["result"] != "unknown"]
            secs = [r["seconds"] for r in mine]
            states = sum(r["states"] for r in mine)
            wins = sum(r["result"] == "win" for r in mine)
            loses = sum(r["result"] == "lose" for r in mine)
            budget = f"{args.budget:g} s" if args.budget else ""
            if args.states:
                budget += (" and " if budget else "") + f"{args.states:,} positions"
            print(
                f"{corpus} draw {draw}: {len(mine)} deals, decided {len(decided)}/{len(mine)} "
                f"({100 * len(decided) / len(mine):.1f}%) within {budget} "
                f"[win {wins}, lose {loses}, unknown {len(mine) - len(decided)}]"
            )
            print(
                f"  search time: median {_ms(statistics.median(secs))}  "
                f"p90 {_ms(pct(secs, 0.9))}  max {_ms(max(secs))}  total {sum(secs):.1f} s"
            )
            cpu = sum(r["cpu"] for r in mine)
            print(
                f"  positions: {states:,} in {sum(secs):.1f} s = "
                f"{states / max(sum(secs), 1e-9):,.0f}/s "
                f"({states / max(cpu, 1e-9):,.0f} per CPU second); "
                f"most in one search {max(r['states'] for r in mine):,}"
            )
            if args.workers:
                print(
                    f"  ({args.workers} workers: positions of the worker that answered, "
                    "CPU seconds of all of them, so the per CPU second figure is a floor)"
                )
            print(
                f"  memory: peak RSS {max(r['peak_mb'] for r in mine):.0f} MB, "
                f"largest growth in one search {max(r['peak_growth_mb'] for r in mine):.0f} MB"
            )
            undecided = [r["id"] for r in mine if r["result"] == "unknown"]
            if undecided:
                print(f"  undecided ids: {' '.join(map(str, undecided))}")
            for r in mine:
                if r["replayed"] is False:
                    bad += 1
                    print(f"  !!! WIN LINE DOES NOT REPLAY: {corpus} {r['id']} draw {draw}")
                if corpus == "tuning" and r["result"] not in ("unknown", r["reference"]):
                    bad += 1
                    print(
                        f"  !!! DISAGREEMENT deal {r['id']} draw {draw}: solver "
                        f"{r['result']}, reference {r['reference']}"
                    )
            if args.check_losses:
                lost = [r for r in mine if r["result"] == "lose"][: args.check_losses]
                outcome = {"lose": 0, "win": 0, "unknown": 0}
                for r in lost:
                    item = {"draw": draw}
                    if corpus == "eval":
                        item["seed"] = r["id"]
                    else:
                        item["cards"] = next(
                            json.loads(x)["cards"]
                            for x in DEALS.open()
                            if json.loads(x)["id"] == r["id"]
                        )
                    got = check_loss(_game(item), args.check_states)
                    outcome[got] += 1
                    if got == "win":
                        bad += 1
                        print(f"  !!! LOSS REFUTED by the second search: {r['id']} draw {draw}")
                print(
                    f"  losses checked by a second search: {len(lost)}: agree {outcome['lose']}, "
                    f"out of its budget {outcome['unknown']}, refuted {outcome['win']}"
                )
    if bad:
        print(f"!!! {bad} WRONG ANSWER(S) !!!")
        return 1
    print("no wrong answer found")
    return 0


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--corpus", choices=("tuning", "eval", "both"), default="both")
    parser.add_argument("--draw", type=int, choices=(1, 3), action="append")
    parser.add_argument("--budget", type=float, default=10.0, help="seconds (0: none)")
    parser.add_argument("--states", type=int, help="a fixed budget of positions per deal")
    parser.add_argument("--first", type=int, default=300, help="tuning: only deals 0..N-1")
    parser.add_argument("--eval-count", type=int, default=EVAL_COUNT)
    parser.add_argument("--list-eval", action="store_true", help="print the eval seeds")
    parser.add_argument("--ids", help="comma-separated deal ids / seeds")
    parser.add_argument("--jobs", type=int, default=1)
    parser.add_argument(
        "--workers",
        type=int,
        default=0,
        help="search each deal through a SolverPool of N workers (several on a hard deal)",
    )
    parser.add_argument(
        "--spread-after",
        type=float,
        default=SPREAD_AFTER,
        help="with --workers: seconds before the idle workers join a search",
    )
    parser.add_argument("--check-losses", type=int, default=0, metavar="K")
    parser.add_argument("--check-states", type=int, default=5_000_000)
    parser.add_argument("--csv", help="write one JSON line per deal here")
    parser.add_argument("--verbose", action="store_true")
    args = parser.parse_args()
    if args.list_eval:
        print("\n".join(map(str, eval_seeds(args.eval_count))))
        return 0
    todo = items(args)
    budget = args.budget or None
    rows: list[dict[str, Any]] = []
    if args.workers:
        rows = asyncio.run(run_pooled(todo, args.budget or 10.0, args.workers, args.spread_after))
    elif args.jobs > 1:
        with ProcessPoolExecutor(args.jobs) as pool:
            n = len(todo)
            rows = list(pool.map(run_one, todo, [budget] * n, [args.states] * n))
    else:
        for item in todo:
            row = run_one(item, budget, args.states)
            rows.append(row)
            if args.verbose:
                print(json.dumps(row), flush=True)
    if args.csv:
        with open(args.csv, "w") as f:
            for row in rows:
                f.write(json.dumps(row) + "\n")
    return report(rows, args)


if __name__ == "__main__":
    sys.exit(main())
