"""Shared test helpers: paths to ../shared and the reference deal corpus."""

from __future__ import annotations

import json
from functools import cache
from pathlib import Path

from klondike_race.engine import DRAW_MOVE, RECYCLE_MOVE, Move

ROOT = Path(__file__).resolve().parent.parent
SHARED = ROOT.parent / "shared"
DEALS = SHARED / "deals" / "deals.jsonl"


@cache
def reference_deals() -> tuple[dict, ...]:
    """The 600 reference records of ../shared/deals/deals.jsonl (300 deals x 2 draws)."""
    with DEALS.open() as f:
        return tuple(json.loads(line) for line in f)


def step_to_move(step: object) -> Move:
    """A step of ../shared/deals/README.md's neutral notation as an engine move."""
    if step == "draw":
        return DRAW_MOVE
    if step == "recycle":
        return RECYCLE_MOVE
    assert isinstance(step, dict)
    return Move.from_wire(step["from"], step["to"], step["count"])
