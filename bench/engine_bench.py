"""Engine micro-benchmark: microseconds per validated move, legal-move generation, status
(the stuck check) and board_view, over positions from random play on many seeds.

Run: ``.venv/bin/python bench/engine_bench.py [--seeds 300] [--rounds 5]``

What is measured (per operation, best of ``--rounds`` rounds, each round over every
sample; the cost of the bare Python loop is measured the same way and subtracted):

* ``play (validated move)``: ``Game.play(move)`` -- check() then apply() -- on a legal
  move of the position. play() changes the game, so each sample needs its own fresh
  ``Game.copy()``; the copies are made *before* the clock starts, so the figure is play()
  alone, copy-free. ``copy()`` is reported on its own line for reference. The status
  cache of each position is warm, as it is on a server that answered the previous move
  with the player's status.
* ``check only`` / ``apply only``: the two halves of play() (check() does not change the
  game, so it is timed on the same positions again and again; apply() on fresh copies).
* ``legal_moves (warm status)``: generation alone. legal_moves() first asks whether the
  game is over, which needs the status; the engine caches it per position, and here it
  is already computed.
* ``legal_moves (cold status)``: generation right after a move, when the status cache is
  empty (it is cleared before each call), so it includes one stuck check.
* ``status (stuck check)``: ``game.status`` with the cache cleared: the full stuck test.
* ``board_view``: the spectator/player view dict (not serialised).

Random play uses Python's ``random`` with fixed seeds (the engine itself has no RNG);
positions are recorded every few moves while the game is still playing.
"""

from __future__ import annotations

import argparse
import platform
import random
import statistics
import sys
import time
from collections.abc import Callable

from klondike_race.engine import Game, Move, Settings, board_view

TARGETS = {"play (validated move)": 20.0, "legal_moves (warm status)": 50.0}


def positions(seeds: int, settings: Settings) -> list[Game]:
    """Positions from random play: a few per seed, at 0 to ~200 moves in."""
    out: list[Game] = []
    for seed in range(seeds):
        rng = random.Random(seed)
        game = Game.from_seed(f"bench-{seed}", settings)
        for step in range(rng.randrange(40, 240)):
            moves = game.legal_moves()
            if not moves:
                break
            home = [m for m in moves if m.dst >= 8]
            cards = [m for m in moves if m.kind == 0]
            if home and rng.random() < 0.6:
                move = rng.choice(home)
            elif cards and rng.random() < 0.5:
                move = rng.choice(cards)
            else:
                move = rng.choice(moves)
            game.apply(move)
            if step % 9 == 0 and game.status == "playing":
                out.append(game.copy())
    return out


def per_op(run: Callable[[], None], n: int, rounds: int, overhead: float = 0.0) -> float:
    """Best-of-rounds microseconds per operation of ``run`` (which does ``n`` operations)."""
    best = float("inf")
    for _ in range(rounds):
        start = time.perf_counter_ns()
        run()
        best = min(best, (time.perf_counter_ns() - start) / n / 1000)
    return max(best - overhead, 0.0)


def bench(label: str, games: list[Game], rounds: int) -> dict[str, float]:
    rng = random.Random(1)
    pairs: list[tuple[Game, Move]] = [(g, rng.choice(g.legal_moves())) for g in games]
    n = len(pairs)
    for g in games:
        _ = g.status  # warm every status cache

    def empty_loop() -> None:
        for _g, _m in pairs:
            pass

    overhead = per_op(empty_loop, n, rounds)
    figures: dict[str, float] = {}

    def fresh() -> list[tuple[Game, Move]]:
        return [(g.copy(), m) for g, m in pairs]

    best = float("inf")
    for _ in range(rounds):
        batch = fresh()  # copies made outside the timed region
        start = time.perf_counter_ns()
        for g, m in batch:
            g.play(m)
        best = min(best, (time.perf_counter_ns() - start) / n / 1000)
    figures["play (validated move)"] = best - overhead

    def checks() -> None:
        for g, m in pairs:
            g.check(m)

    figures["check only"] = per_op(checks, n, rounds, overhead)

    best = float("inf")
    for _ in range(rounds):
        batch = fresh()
        start = time.perf_counter_ns()
        for g, m in batch:
            g.apply(m)
        best = min(best, (time.perf_counter_ns() - start) / n / 1000)
    figures["apply only"] = best - overhead

    def copies() -> None:
        for g, _m in pairs:
            g.copy()

    figures["copy() (not in play)"] = per_op(copies, n, rounds, overhead)

    def warm() -> None:
        for g in games:
            g.legal_moves()

    figures["legal_moves (warm status)"] = per_op(warm, n, rounds, overhead)

    def cold() -> None:
        for g in games:
            g._stuck = None
            g.legal_moves()

    figures["legal_moves (cold status)"] = per_op(cold, n, rounds, overhead)

    def status() -> None:
        for g in games:
            g._stuck = None
            g.status  # noqa: B018

    figures["status (stuck check)"] = per_op(status, n, rounds, overhead)

    def views() -> None:
        for g in games:
            board_view(g)

    figures["board_view"] = per_op(views, n, rounds, overhead)
    moves = statistics.mean(len(g.legal_moves()) for g in games)
    print(f"\n{label}: {n} positions, {moves:.1f} legal moves on average")
    for name, us in figures.items():
        target = TARGETS.get(name)
        verdict = "" if target is None else f"  (target < {target:g} us: "
        verdict += "" if target is None else ("ok)" if us < target else "MISSED)")
        print(f"  {name:28s} {us:7.2f} us{verdict}")
    return figures


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--seeds", type=int, default=300)
    parser.add_argument("--rounds", type=int, default=5)
    args = parser.parse_args(argv)
    print(f"engine bench: Python {platform.python_version()} on {platform.machine()}")
    ok = True
    for label, settings in [
        ("Draw 1, unlimited passes", Settings()),
        ("Draw 3, 3 passes, standard scoring", Settings(draw=3, passes=3, scoring="standard")),
        ("Draw 1, undo on", Settings(undo=True)),
    ]:
        games = positions(args.seeds, settings)
        figures = bench(label, games, args.rounds)
        ok &= all(figures[name] < limit for name, limit in TARGETS.items())
    print("\nall targets met" if ok else "\nSOME TARGETS MISSED")
    return 0 if ok else 1


if __name__ == "__main__":
    sys.exit(main())
