"""The engine's errors. Each carries a machine-readable ``reason``.

``EngineError(ValueError)``: the base; ``reason`` is a short snake_case word.

``NotationError(EngineError)``: text that is not a card, move, pile, setting or deal.
    reasons: ``bad_card``, ``bad_move``, ``bad_pile``, ``bad_setting``, ``bad_deal``,
    ``bad_record``.

``IllegalMove(EngineError)``: a well-formed move that the rules refuse in this position.
    reasons:
    ``game_over``           the game is won, resigned, out of time, or stuck with undo off
    ``bad_count``           a count that is not 1 from the waste, from or to a foundation,
                            or not 0 for draw, recycle and undo
    ``same_pile``           source and target are the same pile
    ``empty_source``        nothing to move from that pile
    ``card_not_available``  the count reaches into face-down cards or past the column
    ``not_a_run``           the cards to move do not form a run (cannot happen in a
                            position reached by legal moves; guards the invariant)
    ``illegal_target``      the card does not fit the target (rank, colour or suit)
    ``kings_only``          an empty column takes only a King (or a run headed by one)
    ``no_target``           a move to ``best`` (``Game.check``) whose cards go nowhere
    ``foundation_to_column_forbidden``  the room forbids moves off a foundation
    ``stock_empty``         draw with an empty stock (recycle instead)
    ``stock_not_empty``     recycle while the stock still has cards
    ``waste_empty``         recycle with nothing in the waste
    ``passes_exhausted``    recycle after the last pass the setting allows
    ``undo_disabled``       undo when the setting is off
    ``nothing_to_undo``     undo at the start of the game
    ``not_supported``       a pile pair no move uses (e.g. waste to waste, stock to column)
"""

from __future__ import annotations


class EngineError(ValueError):
    """Base of the engine's errors; ``reason`` is machine-readable."""

    reason: str = "engine_error"

    def __init__(self, reason: str, message: str) -> None:
        super().__init__(message)
        self.reason = reason

    def __repr__(self) -> str:
        return f"{type(self).__name__}({self.reason!r}, {str(self)!r})"

    def __reduce__(self) -> tuple[type[EngineError], tuple[str, str]]:
        # rebuilt from both arguments: an error raised in a solver worker process crosses
        # back whole (the default pickles only the message, which breaks the pool)
        return (type(self), (self.reason, str(self)))


class NotationError(EngineError):
    """Text that does not parse as a card, pile, move, setting, deal or record."""


class IllegalMove(EngineError):
    """A move the rules refuse in the current position. Nothing was changed."""
