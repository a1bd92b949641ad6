"""Game records: deal + settings + ordered moves, as JSON.

A record (docs/notation.md)::

    {"format": "klondike-race/record/1",
     "deal": {"seed": "42"},            # or {"cards": [52 card names]}
     "settings": {"draw": 1, "passes": "unlimited", ...},
     "moves": ["d", "w>3", "3>h", "2>5x3", ...],
     "times": [350, 1210, ...],         # optional: ms since the start, one per move
     "ended": "resigned"}               # optional: resigned or out_of_time

Replaying a record through the checked API reproduces every position.
"""

from __future__ import annotations

from collections.abc import Iterator
from dataclasses import dataclass, field
from typing import Any

from .deal import Deal
from .errors import IllegalMove, NotationError
from .game import OUT_OF_TIME, RESIGNED, Game
from .moves import Move
from .settings import DEFAULT, Settings

FORMAT = "klondike-race/record/1"


def _bad(message: str) -> NotationError:
    return NotationError("bad_record", message)


@dataclass(slots=True)
class GameRecord:
    deal: Deal
    settings: Settings = DEFAULT
    moves: list[Move] = field(default_factory=list)
    times: list[int] | None = None
    ended: str | None = None

    @classmethod
    def of(cls, game: Game) -> GameRecord:
        times = game.times[:] if any(game.times) else None
        return cls(game.deal, game.settings, game.log[:], times, game.ended)

    def to_json(self) -> dict[str, Any]:
        out: dict[str, Any] = {
            "format": FORMAT,
            "deal": self.deal.to_json(),
            "settings": self.settings.to_dict(),
            "moves": [str(m) for m in self.moves],
        }
        if self.times is not None:
            out["times"] = self.times
        if self.ended is not None:
            out["ended"] = self.ended
        return out

    @classmethod
    def from_json(cls, data: object) -> GameRecord:
        if not isinstance(data, dict):
            raise _bad("a record is a JSON object")
        if data.get("format") != FORMAT:
            raise _bad(f"format must be {FORMAT!r}")
        unknown = set(data) - {"format", "deal", "settings", "moves", "times", "ended"}
        if unknown:
            raise _bad(f"unknown field {sorted(unknown)[0]!r}")
        moves = data.get("moves")
        if not isinstance(moves, list):
            raise _bad("moves must be a list")
        times = data.get("times")
        if times is not None and (
            not isinstance(times, list)
            or len(times) != len(moves)
            or not all(isinstance(t, int) and not isinstance(t, bool) and t >= 0 for t in times)
        ):
            raise _bad("times must be a list of whole milliseconds, one per move")
        ended = data.get("ended")
        if ended not in (None, RESIGNED, OUT_OF_TIME):
            raise _bad("ended must be resigned or out_of_time")
        return cls(
            Deal.from_json(data.get("deal")),
            Settings.from_dict(data.get("settings", {})),
            [Move.parse(m) for m in moves],
            times,
            ended,
        )

    def replay(self) -> Iterator[tuple[int, Move, Game]]:
        """Play the moves through the checked API, yielding (index, move, game) after
        each (the same Game object, changed in place). Raises IllegalMove with ``index``
        set on the first refused move."""
        return self._play_into(Game(self.deal, self.settings))

    def game(self) -> Game:
        """The final position, replayed through the checked API."""
        game = Game(self.deal, self.settings)
        for _ in self._play_into(game):
            pass
        return game

    def _play_into(self, game: Game) -> Iterator[tuple[int, Move, Game]]:
        for i, move in enumerate(self.moves):
            try:
                game.play(move, self.times[i] if self.times else 0)
            except IllegalMove as err:
                err.index = i  # type: ignore[attr-defined]
                raise
            yield i, move, game
        if self.ended is not None and not game.over:
            game.ended = self.ended
