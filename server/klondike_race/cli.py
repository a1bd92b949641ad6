"""The ``klondike-race`` command.

``deal`` and ``verify`` live here; the others (``solve``, ``build-solver``, ``serve``,
``replay``, ``challenge-remove``, ``challenge-removed``) are added by the solver's and the
service's modules (each module's ``add_commands(subparsers)``), when present.
"""

from __future__ import annotations

import argparse
import importlib
import json
import os
import sys
from collections.abc import Sequence
from typing import Any

from .engine import (
    NAMES,
    Deal,
    EngineError,
    Game,
    GameRecord,
    Settings,
    pile_name,
    progress,
)

_PLUGINS = (
    "klondike_race.solver.cli",
    "klondike_race.service.cli",
    "klondike_race.service.replaycli",
)


def add_settings_arguments(parser: argparse.ArgumentParser) -> None:
    """The settings of docs/rules.md as flags (``--draw 3 --passes 1 --empty any ...``)."""
    parser.add_argument("--draw", type=int, choices=(1, 3), default=1)
    parser.add_argument("--passes", choices=("unlimited", "3", "1"), default=None)
    parser.add_argument("--empty", choices=("kings", "any"), default="kings")
    parser.add_argument(
        "--foundation-to-column", choices=("allowed", "forbidden"), default="allowed"
    )
    parser.add_argument("--scoring", choices=("none", "standard", "vegas"), default="none")


def settings_from_args(args: argparse.Namespace) -> Settings:
    values = {
        "draw": args.draw,
        "empty": args.empty,
        "foundation_to_column": args.foundation_to_column,
        "scoring": args.scoring,
    }
    if args.passes is not None:
        values["passes"] = args.passes
    return Settings.from_dict(values)


def deal_layout(game: Game) -> str:
    """A readable layout: each column bottom first, ``[..]`` marking face-down cards."""
    lines = [f"deal {game.deal.id}   {game.settings}"]
    for i, (col, down) in enumerate(zip(game.columns, game.down, strict=True)):
        cards = [f"[{NAMES[c]}]" if k < down else f" {NAMES[c]} " for k, c in enumerate(col)]
        lines.append(f"col{i + 1}: " + "".join(cards))
    lines.append("stock, first turned first: " + " ".join(NAMES[c] for c in reversed(game.stock)))
    return "\n".join(lines)


def deal_json(game: Game) -> dict[str, Any]:
    cards = []
    for i, (col, down) in enumerate(zip(game.columns, game.down, strict=True)):
        for k, c in enumerate(col):
            cards.append(
                {"card": NAMES[c], "pile": pile_name(i), "position": k, "face_up": k >= down}
            )
    for k, c in enumerate(reversed(game.stock)):
        cards.append({"card": NAMES[c], "pile": "stock", "position": k, "face_up": False})
    return {
        "deal": game.deal.id,
        "seed": game.deal.seed,
        "settings": game.settings.to_dict(),
        "order": game.deal.names(),
        "cards": cards,
    }


def _deal(args: argparse.Namespace) -> int:
    game = Game(Deal.from_seed(args.seed), settings_from_args(args))
    if args.json:
        print(json.dumps(deal_json(game), indent=2))
    else:
        print(deal_layout(game))
        print("([..] is face down; columns list the bottom card first)")
    return 0


def _verify(args: argparse.Namespace) -> int:
    try:
        with open(args.record, encoding="utf-8") as f:
            record = GameRecord.from_json(json.load(f))
    except (OSError, json.JSONDecodeError) as err:
        print(f"cannot read {args.record}: {err}", file=sys.stderr)
        return 2
    except EngineError as err:
        print(f"not a game record ({err.reason}): {err}", file=sys.stderr)
        return 2
    game = None
    try:
        for i, move, game in record.replay():
            print(f"{i + 1:4d}  {move!s:8s} ok   foundation {game.found_count:2d}  {game.status}")
    except EngineError as err:
        index = getattr(err, "index", None)
        where = f"move {index + 1} ({record.moves[index]})" if index is not None else "a move"
        print(f"ILLEGAL {where}: {err.reason}: {err}")
        return 1
    final = game if game is not None else record.game()
    summary = progress(final, record.times[-1] if record.times else 0)
    print("final:", json.dumps(summary))
    return 0


def build_parser() -> argparse.ArgumentParser:
    parser = argparse.ArgumentParser(prog="klondike-race", description=__doc__.splitlines()[0])
    commands = parser.add_subparsers(dest="command", required=True)
    p = commands.add_parser("deal", help="print the layout of a seed's deal")
    p.add_argument("--seed", required=True)
    add_settings_arguments(p)
    p.add_argument("--json", action="store_true", help="all 52 cards with pile, position, face")
    p.set_defaults(run=_deal)
    p = commands.add_parser("verify", help="replay a game record and check every move")
    p.add_argument("record", help="a game record (JSON, docs/notation.md)")
    p.set_defaults(run=_verify)
    for name in _PLUGINS:
        try:
            module = importlib.import_module(name)
        except ModuleNotFoundError as err:
            if not (err.name and name.startswith(err.name)):
                raise
            continue
        module.add_commands(commands)
    return parser


def main(argv: Sequence[str] | None = None) -> int:
    args = build_parser().parse_args(argv)
    try:
        code: int = args.run(args)
        return code
    except EngineError as err:
        print(f"error ({err.reason}): {err}", file=sys.stderr)
        return 2
    except BrokenPipeError:  # the reader stopped reading (`deal --json | head`): no error
        # of ours; stdout goes nowhere so that flushing it at exit raises nothing more
        os.dup2(os.open(os.devnull, os.O_WRONLY), sys.stdout.fileno())
        return 1


if __name__ == "__main__":
    sys.exit(main())
