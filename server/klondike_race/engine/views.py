"""What others may see of a game.

``board_view`` is a game as its player sees it, and as a spectator sees it: face-down
cards appear only as a count per column, the stock only as a count, the waste only as
the cards of its fan (the top card, and in Draw 3 the cards of the latest draw still on
it). ``progress`` is the summary racers get of each other. Neither ever names a card that
is face down or in the stock.
"""

from __future__ import annotations

from .cards import NAMES, SUITS
from .game import Game


def board_view(game: Game, elapsed_ms: int = 0) -> dict:
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
        autocomplete_next = moves[0].to_wire() if moves else None
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


def progress(game: Game, elapsed_ms: int = 0) -> dict:
    """Foundation count, moves, when the count was reached, status and score."""
    return {
        "foundation": game.found_count,
        "moves": game.moves,
        "reached_moves": game.reached_moves,
        "reached_ms": game.reached_ms,
        "status": game.status,
        "score": None if game.settings.scoring == "none" else game.score_at(elapsed_ms),
    }
