"""The pure Klondike rules engine: no I/O, no clock, no randomness.

Cards are ints (``cards``), deals come from seeds or explicit lists (``deal``), settings
hold every room option (``settings``), moves have a compact notation (``moves``), a
``Game`` checks and applies them (``game``), ``views`` say what others may see, and
``record`` stores and replays whole games. Errors are listed in ``errors``.
"""

from .cards import NAMES, RANK, SUIT, parse_card
from .deal import Deal, shuffle
from .errors import EngineError, IllegalMove, NotationError
from .game import OUT_OF_TIME, PLAYING, RESIGNED, STUCK, WON, Game, game_over, starting_score
from .moves import (
    BEST,
    CARDS,
    DRAW,
    DRAW_MOVE,
    FOUND0,
    FOUNDATION,
    RECYCLE,
    RECYCLE_MOVE,
    STOCK,
    UNDO,
    UNDO_MOVE,
    WASTE,
    Move,
    pile_name,
)
from .record import GameRecord
from .settings import DEFAULT, UNLIMITED, Settings
from .views import BoardView, Progress, board_view, progress

__all__ = [
    "BEST",
    "CARDS",
    "DEFAULT",
    "DRAW",
    "DRAW_MOVE",
    "FOUND0",
    "FOUNDATION",
    "NAMES",
    "OUT_OF_TIME",
    "PLAYING",
    "RANK",
    "RECYCLE",
    "RECYCLE_MOVE",
    "RESIGNED",
    "STOCK",
    "STUCK",
    "SUIT",
    "UNDO",
    "UNDO_MOVE",
    "UNLIMITED",
    "WASTE",
    "WON",
    "BoardView",
    "Deal",
    "EngineError",
    "Game",
    "GameRecord",
    "IllegalMove",
    "Move",
    "NotationError",
    "Progress",
    "Settings",
    "board_view",
    "game_over",
    "parse_card",
    "pile_name",
    "progress",
    "shuffle",
    "starting_score",
]
