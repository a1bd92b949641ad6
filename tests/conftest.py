"""Test helpers for every suite: the repository root and the reference deal corpus
(tests/data/deals.jsonl, described in tests/data/README.md)."""

from __future__ import annotations

import asyncio
import json
from collections.abc import Callable
from functools import cache
from pathlib import Path

from klondike_race.engine import DRAW_MOVE, RECYCLE_MOVE, Move

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


async def until(check: Callable[[], bool], seconds: float = 30.0) -> None:
    """Wait (polling every 5 ms) until ``check()`` is true; fail after ``seconds``."""
    for _ in range(int(seconds / 0.005)):
        if check():
            return
        await asyncio.sleep(0.005)
    raise AssertionError("never happened")
