"""When the solver may help a player: hints and finish it for me.

One rule for both the server's answer to ``hint``/``finish`` and the ``can_hint`` and
``can_finish`` flags it sends players (the client holds no rules):

- a **hint** is for a practice game that is on;
- **finish it for me** is for a practice game that is on, and in a race once the player's
  own race is over (their game is over, or the race has finished), never for a won game.
"""

from __future__ import annotations

from .errors import ServiceError
from .room import FINISHED, RACING

HINT, FINISH = "hint", "finish"


def _playing(phase: str, status: str, over: bool) -> ServiceError | None:
    if phase == FINISHED:
        return ServiceError("race_over", "the game is over")
    if phase != RACING:
        return ServiceError("not_started", "the game has not started")
    if over:
        return ServiceError("game_over", f"your game is over ({status})")
    return None


def refusal(what: str, practice: bool, phase: str, status: str, over: bool) -> ServiceError | None:
    """Why the solver may not help with ``what`` (``hint`` or ``finish``) a player whose
    game has ``status`` (``over`` by the rules) in a room in ``phase``; None: it may."""
    if what == HINT:
        if not practice:
            return ServiceError("not_in_practice", "hints are for practice games only")
        return _playing(phase, status, over)
    if status == "won":
        return ServiceError("game_over", "your game is already won")
    if practice:
        return _playing(phase, status, over)
    if phase != FINISHED and not over:
        return ServiceError("race_not_over", "finish it for me is off until your own race is over")
    return None


def flags(practice: bool, phase: str, status: str, over: bool) -> dict[str, bool]:
    """``can_hint`` and ``can_finish`` for a player, as messages carry them."""
    return {
        "can_hint": refusal(HINT, practice, phase, status, over) is None,
        "can_finish": refusal(FINISH, practice, phase, status, over) is None,
    }
