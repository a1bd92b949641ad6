"""Test helpers for every suite: the repository root and the reference deal corpus
(tests/data/deals.jsonl, described in tests/data/README.md)."""

from __future__ import annotations

import asyncio
import gc
import json
import sys
import threading
import types
from collections.abc import Callable, Iterator
from functools import cache
from pathlib import Path

import pytest

from klondike_race.engine import DRAW_MOVE, RECYCLE_MOVE, WON, Deal, Game, Move, Settings

ROOT = Path(__file__).resolve().parent.parent
DEALS = ROOT / "tests" / "data" / "deals.jsonl"


@cache
def reference_deals() -> tuple[dict, ...]:
    """The 600 reference records of tests/data/deals.jsonl (300 deals x 2 draws)."""
    with DEALS.open() as f:
        return tuple(json.loads(line) for line in f)


def step_to_move(step: object) -> Move:
    """A step of tests/data/README.md's neutral notation as an engine move."""
    if step == "draw":
        return DRAW_MOVE
    if step == "recycle":
        return RECYCLE_MOVE
    assert isinstance(step, dict)
    return Move.from_wire(step["from"], step["to"], step["count"])


def dealt(columns: list[list[str]], stock: list[str]) -> list[str]:
    """A deal's 52 card names in its order (docs/deal.md's layout) from its 7 columns,
    column c holding c cards, each bottom to top, and its stock, first turned first."""
    assert [len(column) for column in columns] == list(range(1, 8)) and len(stock) == 24
    cards = [""] * 28
    for c, column in enumerate(columns, 1):
        for r, card in enumerate(column, 1):
            cards[(r - 1) * (16 - r) // 2 + (c - r)] = card
    return cards + stock


@cache
def quick_win() -> dict:
    """A Draw 1 deal won in 76 moves, every one of them a card home or a draw, in the
    corpus's record form (``cards``, ``line``): the stock holds the Aces to the Sixes in
    rank order, each sent home from the waste as it is turned; column 7 holds the Sevens
    to the King of spades (the Seven on top), column 6 those of hearts to the Queen,
    column 5 of diamonds to the Jack, column 4 of clubs to the Ten, and the last six
    cards lie in columns 1-3 in the order they go home. For tests that need a whole won
    game, not a hard one (a reference line is 176-228 moves, each played and shown)."""
    suits, ranks = "cdhs", "A23456789TJQK"
    stock = [r + s for r in ranks[:6] for s in suits]
    columns = [
        ["Kh"],
        ["Kd", "Qd"],
        ["Kc", "Qc", "Jc"],
        [r + "c" for r in "T987"],
        [r + "d" for r in "JT987"],
        [r + "h" for r in "QJT987"],
        [r + "s" for r in "KQJT987"],
    ]  # each bottom to top
    cards = dealt(columns, stock)
    line: list[object] = []
    for card in stock:
        line += ["draw", {"from": "waste", "to": f"found-{card[1]}", "count": 1, "card": card}]
    for c in (4, 3, 5, 2, 6, 1, 7):
        for card in reversed(columns[c - 1]):
            line.append({"from": f"col{c}", "to": f"found-{card[1]}", "count": 1, "card": card})
    game = Game(Deal.from_cards(cards), Settings(draw=1))
    for step in line:
        game.play(step_to_move(step))
    assert game.status == WON and game.moves == len(line) == 76
    return {"cards": cards, "draw": 1, "result": "win", "line": line}


async def until(check: Callable[[], bool], seconds: float = 30.0) -> None:
    """Wait (polling every 5 ms) until ``check()`` is true; fail after ``seconds``."""
    for _ in range(int(seconds / 0.005)):
        if check():
            return
        await asyncio.sleep(0.005)
    raise AssertionError("never happened")


@pytest.fixture(autouse=True)
def asyncio_tasks_printed_before_a_timeout(request: pytest.FixtureRequest) -> Iterator[None]:
    """A test still running 10 s before its timeout (pytest-timeout, pyproject.toml) prints
    the stack of every task of each running event loop, then every suspended coroutine
    and async generator (a task's stack shows only its outermost coroutine; these are the
    awaits under it, libraries' included): what a hang awaits, which the timeout's own
    thread stacks never show (its main thread only sits in the selector)."""
    limit = float(request.config.getini("timeout") or 0)
    if limit <= 20:
        yield
        return

    def print_tasks() -> None:
        # type(), not isinstance(): isinstance dereferences a weak proxy, which raises once
        # its object is gone
        objects = gc.get_objects()
        loops = [o for o in objects if issubclass(type(o), asyncio.AbstractEventLoop)]
        for loop in (lp for lp in loops if lp.is_running()):
            print(f"\n~~~~ asyncio tasks of {loop!r} ~~~~", file=sys.stderr)
            for task in list(asyncio.all_tasks(loop)):
                task.print_stack(limit=12, file=sys.stderr)
        print("\n~~~~ suspended coroutines ~~~~", file=sys.stderr)
        for o in objects:
            kind = type(o)
            frame = (
                o.cr_frame
                if kind is types.CoroutineType
                else o.ag_frame
                if kind is types.AsyncGeneratorType
                else None
            )
            if frame is not None:
                code = frame.f_code
                print(f"{code.co_filename}:{frame.f_lineno} {code.co_name}", file=sys.stderr)

    timer = threading.Timer(limit - 10, print_tasks)
    timer.daemon = True
    timer.start()
    yield
    timer.cancel()
