"""What others may see of a game.

``board_view`` is a game as its player sees it, and as a spectator sees it: face-down
cards appear only as a count per column, the stock only as a count, the waste only as
the cards of its fan (the top card, and in Draw 3 the cards of the latest draw still on
it). ``progress`` is the summary racers get of each other. Neither ever names a card that
is face down or in the stock.
"""

from __future__ import annotations

from typing import TypedDict, cast

from .cards import NAMES, SUITS
from .game import Game
from .moves import WireCardMove


class Progress(TypedDict):
    """What racers see of each other's game."""

    foundation: int  # cards on the foundations
    moves: int
    reached_moves: int  # the move, and the time, when ``foundation`` was last reached
    reached_ms: int
    status: str  # playing, won, stuck, resigned or out_of_time
    score: int | None  # None when the room keeps no score


class ColumnView(TypedDict):
    down: int  # face-down cards, at the bottom
    up: list[str]  # the face-up cards, bottom first


class WasteView(TypedDict):
    count: int
    fan: list[str]  # the cards of the waste one may see, the top card last


class BoardView(Progress):
    """A game as its player, and a spectator, sees it (the progress fields included)."""

    columns: list[ColumnView]
    stock: int
    waste: WasteView
    foundations: dict[str, str | None]  # suit letter -> its top card
    recycles: int
    passes_left: int | None  # None when unlimited
    autocomplete: bool
    autocomplete_next: WireCardMove | None
    can_undo: bool
    over: bool


def board_view(game: Game, elapsed_ms: int = 0) -> BoardView:
    """The board. Besides the piles it carries what the rules say of them, so that a
    client needs no rules of its own: ``over`` (``Game.over``: no move will be accepted,
    undo included), ``autocomplete`` (auto-complete is available) and
    ``autocomplete_next``, the first move auto-complete plays in wire form
    (``{"from": "col3", "to": "found-h", "count": 1}``), or None when it is not
    available."""
    waste = game.waste
    fan = waste[-max(game.fan, 1) :] if waste else []
    allowed = game.settings.recycles_allowed
    autocomplete = game.autocomplete_available()
    autocomplete_next = None
    if autocomplete:  # near the end of a game only: the moves are not computed otherwise
        moves = game.autocomplete_moves()
        if moves:  # card moves only
            autocomplete_next = cast(WireCardMove, moves[0].to_wire())
    return {
        "columns": [
            {"down": down, "up": [NAMES[c] for c in col[down:]]}
            for col, down in zip(game.columns, game.down, strict=True)
        ],
        "stock": len(game.stock),
        "waste": {"count": len(waste), "fan": [NAMES[c] for c in fan]},
        "foundations": {
            SUITS[s]: (NAMES[s * 13 + n - 1] if n else None) for s, n in enumerate(game.found)
        },
        "recycles": game.recycles,
        "passes_left": None if allowed is None else allowed - game.recycles + 1,
        "autocomplete": autocomplete,
        "autocomplete_next": autocomplete_next,
        "can_undo": bool(game.history) and game.ended is None and game.found_count < 52,
        "over": game.over,
        **progress(game, elapsed_ms),
    }


def progress(game: Game, elapsed_ms: int = 0) -> Progress:
    """Foundation count, moves, when the count was reached, status and score."""
    return {
        "foundation": game.found_count,
        "moves": game.moves,
        "reached_moves": game.reached_moves,
        "reached_ms": game.reached_ms,
        "status": game.status,
        "score": None if game.settings.scoring == "none" else game.score_at(elapsed_ms),
    }
