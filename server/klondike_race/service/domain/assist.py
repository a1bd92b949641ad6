"""When the solver may help a player: hints and finish it for me.

One rule for both the server's answer to ``hint``/``finish`` and the ``can_hint`` and
``can_finish`` flags it sends players (the client holds no rules):

- a **hint** is for a practice game that is on;
- **finish it for me** is for a practice game that is on, and in a race only once the race
  itself has finished (a line played while others race would show them the deal, a
  resigned seat included), never for a won game;
- neither, in a room on a challenge's deal (its ``reveal_at``), before the challenge is
  final: others are still playing that deal, and a throwaway identity's attempt would
  hand them its winning line (``challenge.sealed`` decides).
"""

from __future__ import annotations

from typing import TypedDict

from ...engine import Game, Move
from ...engine.moves import CARDS, FOUND0
from . import challenge
from .errors import ServiceError
from .room import FINISHED, RACING

HINT, FINISH = "hint", "finish"

# foundations in the engine's order (c d h s): the other colour's two, and the same
# colour's other suit
_OTHER_COLOUR = ((1, 2), (0, 3), (0, 3), (1, 2))
_SAME_COLOUR = (3, 2, 1, 0)


class Flags(TypedDict):
    """Whether a ``hint`` and a ``finish`` would be accepted now."""

    can_hint: bool
    can_finish: bool


def safe_home(game: Game) -> Move | None:
    """A legal move of a card home that never costs a winnable game, the solver's safe
    rule (docs/solver.md): the card's rank is at most one above both foundations of the
    other colour (an ace or a two always when foundation cards stay home; when they may
    come back, also at most two above the same colour's other suit). A hint offers it
    before anything else, as a person would play it."""
    found = game.found
    back = game.settings.foundation_to_column
    for move in game.legal_moves():
        if move.kind != CARDS or move.dst < FOUND0:
            continue
        suit = move.dst - FOUND0
        n = found[suit]  # the card's rank is n + 1
        o1, o2 = _OTHER_COLOUR[suit]
        if back:
            if found[o1] >= n and found[o2] >= n and found[_SAME_COLOUR[suit]] >= n - 1:
                return move
        elif n < 2 or (found[o1] >= n and found[o2] >= n):
            return move
    return None


def turning_moves(game: Game) -> list[Move]:
    """The legal moves that turn a face-down card (every face-up card of a column moved
    off it), the column with the most face-down cards first: after a safe card home, the
    moves a person looks for first. Whether one keeps the game won is the solver's to
    say."""
    columns, down = game.columns, game.down
    moves = [
        move
        for move in game.legal_moves()
        if move.kind == CARDS
        and move.src < 7
        and down[move.src]
        and move.count == len(columns[move.src]) - down[move.src]
    ]
    return sorted(moves, key=lambda m: -down[m.src])


def _playing(phase: str, over: bool) -> str | None:
    if phase == FINISHED:
        return "race_over"
    if phase != RACING:
        return "not_started"
    return "game_over" if over else None


def _reason(what: str, practice: bool, phase: str, status: str, over: bool) -> str | None:
    if what == HINT:
        return _playing(phase, over) if practice else "not_in_practice"
    if status == "won":
        return "game_over"
    if practice:
        return _playing(phase, over)
    if phase != FINISHED:
        return "race_not_over"
    return None


_MESSAGES = {
    "not_in_practice": "hints are for practice games only",
    "race_over": "the game is over",
    "not_started": "the game has not started",
    "race_not_over": "finish it for me is off until the race has finished",
}


def refusal(
    what: str,
    practice: bool,
    phase: str,
    status: str,
    over: bool,
    reveal_at: int | None = None,
    now: int = 0,
) -> ServiceError | None:
    """Why the solver may not help with ``what`` (``hint`` or ``finish``) a player whose
    game has ``status`` (``over`` by the rules) in a room in ``phase`` whose deal is
    revealed at ``reveal_at`` (None: not a challenge's); None: it may."""
    reason = _reason(what, practice, phase, status, over)
    if reason is None:
        return challenge.sealed(challenge.SOLVER, reveal_at, now)
    if reason == "game_over":
        message = "your game is already won" if status == "won" else f"your game is over ({status})"
    else:
        message = _MESSAGES[reason]
    return ServiceError(reason, message)


def flags(
    practice: bool, phase: str, status: str, over: bool, reveal_at: int | None = None, now: int = 0
) -> Flags:
    """``can_hint`` and ``can_finish`` for a player, as messages carry them."""
    return {
        "can_hint": refusal(HINT, practice, phase, status, over, reveal_at, now) is None,
        "can_finish": refusal(FINISH, practice, phase, status, over, reveal_at, now) is None,
    }
