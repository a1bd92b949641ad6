"""``klondike-race solve``: search a deal (or a position reached by given moves);
``klondike-race build-solver``: compile the search (native.py).

    klondike-race solve (--seed S | --deal FILE) [--draw 1|3] [--passes ...] [--empty ...]
                        [--foundation-to-column ...] [--moves "d w>3 ..."]
                        [--budget SECONDS] [--states N] [--json]

FILE is a JSON list of 52 card names laid out as in tests/data/README.md (a JSON object
with a ``cards`` field, like a line of tests/data/deals.jsonl, is accepted too). Exit status:
0 win, 1 lose, 3 unknown, 2 bad input.
"""

from __future__ import annotations

import argparse
import json
import sys

from ..engine import Deal, EngineError, Game, Move
from . import solve

_EXIT = {"win": 0, "lose": 1, "unknown": 3}


def add_commands(subparsers: argparse._SubParsersAction[argparse.ArgumentParser]) -> None:
    from ..cli import add_settings_arguments

    p = subparsers.add_parser("solve", help="solve a deal: win (with a line), lose or unknown")
    source = p.add_mutually_exclusive_group(required=True)
    source.add_argument("--seed", help="the deal of this seed")
    source.add_argument("--deal", metavar="FILE", help="a JSON list of 52 cards")
    add_settings_arguments(p)
    p.add_argument("--moves", default="", help="moves played first, e.g. 'd w>3 3>h'")
    p.add_argument(
        "--budget",
        type=float,
        default=10.0,
        metavar="SECONDS",
        help="time budget (default 10; 0 for none)",
    )
    p.add_argument("--states", type=int, default=None, help="state budget")
    p.add_argument("--json", action="store_true", help="one JSON object")
    p.set_defaults(run=_solve)
    p = subparsers.add_parser(
        "build-solver", help="compile the solver's search in C (18-34x as fast)"
    )
    p.add_argument("--force", action="store_true", help="even when the build is current")
    p.set_defaults(run=_build_solver)


def _read_deal(path: str) -> Deal:
    try:
        with open(path, encoding="utf-8") as f:
            data = json.load(f)
    except (OSError, json.JSONDecodeError) as err:
        raise EngineError("bad_deal", f"cannot read {path}: {err}") from err
    if isinstance(data, dict) and "cards" in data:
        data = data["cards"]
    return Deal.from_cards(data)


def _solve(args: argparse.Namespace) -> int:
    from ..cli import settings_from_args
    from . import CORE_PROBLEM

    if CORE_PROBLEM is not None:
        print(f"klondike-race solve: {CORE_PROBLEM}", file=sys.stderr)
        return 2

    deal = Deal.from_seed(args.seed) if args.seed is not None else _read_deal(args.deal)
    game = Game(deal, settings_from_args(args))
    for text in args.moves.split():
        game.play(Move.parse(text))
    budget = args.budget if args.budget and args.budget > 0 else None
    solution = solve(game, max_seconds=budget, max_states=args.states)
    if args.json:
        out = {"deal": deal.id, "settings": game.settings.to_dict(), **solution.to_json()}
        print(json.dumps(out))
    else:
        print(f"deal {deal.id}   {game.settings}")
        print(f"result: {solution.result}")
        if solution.line is not None:
            print(f"line ({len(solution.line)} moves): " + " ".join(map(str, solution.line)))
        rate = solution.states / solution.seconds if solution.seconds > 0 else 0.0
        print(f"time: {solution.seconds:.3f} s   states: {solution.states} ({rate:,.0f}/s)")
    sys.stdout.flush()
    return _EXIT[solution.result]


def _build_solver(args: argparse.Namespace) -> int:
    from . import native

    return native.main(["--force"] if args.force else [])
