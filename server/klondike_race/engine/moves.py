"""Moves and their text forms.

A move is ``Move(kind, src, dst, count)``. Piles are small integers: columns 0-6, the
waste 7, the foundations 8-11 (by suit ``c d h s``), the stock 12, and two targets that
only a request names, replaced by the real pile when the move is played: ``FOUNDATION``
13, "the foundation of this card's suit", and ``BEST`` 14, "wherever it goes best"
(``Game.check`` says which pile that is).

Compact notation (docs/notation.md), used in records, logs, Redis and tests:

=========  =====================================================
``d``      draw
``r``      recycle the waste into the stock
``u``      undo (when the room allows it)
``w>3``    waste to column 3 (columns are 1-7)
``w>h``    waste to the hearts foundation (``c d h s``; ``f`` = its own suit)
``3>h``    top card of column 3 to the hearts foundation
``h>3``    top of the hearts foundation to column 3
``3>7``    one card from column 3 to column 7
``3>7x4``  the top four cards of column 3 (a run) to column 7
=========  =====================================================

Wire names (the same ones as the step notation of the reference deal corpus,
tests/data/README.md) are ``waste``, ``col1`` .. ``col7``, ``found-c`` .. ``found-s``,
``foundation``, ``best`` and ``stock``; ``best`` has no compact notation.
"""

from __future__ import annotations

from typing import NamedTuple, TypedDict

from .cards import SUITS
from .errors import NotationError

# piles
WASTE = 7
STOCK = 12
FOUNDATION = 13  # "its own foundation" in a request
BEST = 14  # "wherever it goes best" in a request
FOUND0 = 8  # foundation of suit s is FOUND0 + s

# kinds
CARDS, DRAW, RECYCLE, UNDO = 0, 1, 2, 3

_PILE_TEXT = ["1", "2", "3", "4", "5", "6", "7", "w", "c", "d", "h", "s", "", "f", ""]
_TEXT_PILE = {t: i for i, t in enumerate(_PILE_TEXT) if t}
_PILE_WIRE = [f"col{i}" for i in range(1, 8)] + ["waste"] + [f"found-{s}" for s in SUITS]
_PILE_WIRE += ["stock", "foundation", "best"]
_WIRE_PILE = {t: i for i, t in enumerate(_PILE_WIRE)}

# a card move as wire fields ("from" is a keyword: the functional form)
WireCardMove = TypedDict("WireCardMove", {"from": str, "to": str, "count": int})


class WireAction(TypedDict):
    """Draw, recycle or undo as a wire field: ``{"action": "draw"}``."""

    action: str


class Move(NamedTuple):
    kind: int
    src: int
    dst: int
    count: int  # type: ignore[assignment,unused-ignore]  # hides tuple.count(), on purpose

    def __str__(self) -> str:
        if self.kind == CARDS:
            text = _PILE_TEXT[self.src] + ">" + _PILE_TEXT[self.dst]
            return text if self.count == 1 else f"{text}x{self.count}"
        return "dru"[self.kind - 1]

    def __repr__(self) -> str:
        return f"Move.parse({str(self)!r})"

    @staticmethod
    def parse(text: object) -> Move:
        """Parse the compact notation. Raises NotationError(``bad_move``)."""
        if isinstance(text, str):
            fixed = _FIXED.get(text)
            if fixed is not None:
                return fixed
            head, sep, tail = text.partition(">")
            if sep and len(head) == 1:
                dst_text, x, count_text = tail.partition("x")
                src = _TEXT_PILE.get(head)
                dst = _TEXT_PILE.get(dst_text)
                digits = count_text.isascii() and count_text.isdigit()  # not '²'
                if x and digits and 1 <= len(count_text) <= 2:
                    count = int(count_text)
                else:
                    count = 1 if not x else 0
                if src is not None and dst is not None and count >= 1 and src != FOUNDATION:
                    return Move(CARDS, src, dst, count)
        raise NotationError("bad_move", f"not a move: {text!r} (e.g. d, r, u, w>3, 3>h, 2>5x3)")

    def to_wire(self) -> WireCardMove | WireAction:
        """The move as wire fields: ``{"from": "col3", "to": "col7", "count": 2}``."""
        if self.kind == CARDS:
            return {"from": _PILE_WIRE[self.src], "to": _PILE_WIRE[self.dst], "count": self.count}
        return {"action": ("draw", "recycle", "undo")[self.kind - 1]}

    @staticmethod
    def from_wire(src: object, dst: object, count: object = 1) -> Move:
        """A card move from wire names; raises NotationError(``bad_pile``/``bad_move``)."""
        s = _WIRE_PILE.get(src) if isinstance(src, str) else None
        d = _WIRE_PILE.get(dst) if isinstance(dst, str) else None
        if s is None or s in (STOCK, FOUNDATION, BEST):
            raise NotationError("bad_pile", f"not a pile to move from: {src!r}")
        if d is None or d == STOCK:
            raise NotationError("bad_pile", f"not a pile to move to: {dst!r}")
        if isinstance(count, bool) or not isinstance(count, int) or not 1 <= count <= 52:
            raise NotationError("bad_move", f"count must be a whole number 1-52, not {count!r}")
        return Move(CARDS, s, d, count)


def pile_name(pile: int) -> str:
    """Wire name of a pile: ``col3``, ``waste``, ``found-h``, ``stock``."""
    return _PILE_WIRE[pile]


DRAW_MOVE = Move(DRAW, STOCK, WASTE, 0)
RECYCLE_MOVE = Move(RECYCLE, WASTE, STOCK, 0)
UNDO_MOVE = Move(UNDO, STOCK, STOCK, 0)
_FIXED = {"d": DRAW_MOVE, "r": RECYCLE_MOVE, "u": UNDO_MOVE}
