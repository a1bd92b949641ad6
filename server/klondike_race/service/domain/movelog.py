"""The move-log entry: one accepted move as ``TEXT@AT_MS``, the only place it is built or
read.

``TEXT`` is the move's notation (docs/notation.md), ``resign``, or ``timeout``; ``AT_MS``
is the race time in milliseconds when the server accepted it. A player's log (a Redis
list) holds their entries in order; entry *n* (from 1) was the client's sequence number
*n*. A ``timeout`` is the server's: a sprinter's own time limit ended their game at
``AT_MS`` (docs/rules.md, "Sprint"); it takes the next number, as a move would, so that
one node's write of it lands, and is always the last entry (nothing is accepted after
it); no client uses its number. Moves were checked before they were logged, so a log
replays without checks.
"""

from __future__ import annotations

from collections.abc import Iterable

from ...engine import Game, Move

RESIGN = "resign"
TIMEOUT = "timeout"
ENDS = (RESIGN, TIMEOUT)  # entries that end a game and are no move


def entry(text: str, at_ms: int) -> str:
    """The log entry of a move's notation (or ``resign``, ``timeout``) accepted at race
    time ``at_ms``."""
    return f"{text}@{at_ms}"


def parse(line: str) -> tuple[str, int]:
    """``(text, at_ms)`` of a log entry."""
    text, _, ms = line.rpartition("@")
    return text, int(ms)


def text_of(line: str) -> str:
    return line.rpartition("@")[0]


def at_ms(line: str) -> int:
    return int(line.rpartition("@")[2])


def is_move(line: str) -> bool:
    """Whether an entry is a move (not a resignation or a time-out)."""
    return text_of(line) not in ENDS


def logged(game: Game) -> int:
    """How many of the client's entries the log of ``game`` holds: its moves, and its
    resignation if it resigned (a resignation is logged and acknowledged, under its own
    sequence number, but is no move; a time-out is the server's). The player's next
    sequence number is this + 1."""
    return game.moves + (game.status == "resigned")


def apply(game: Game, line: str) -> str:
    """Apply one stored entry to ``game`` (unchecked: it was checked when logged); its
    text."""
    text, ms = parse(line)
    if text == RESIGN:
        if not game.over:
            game.resign()
    elif text == TIMEOUT:
        if not game.over:
            game.time_out()
    else:
        game.apply(Move.parse(text), ms)
    return text


def replay(game: Game, log: Iterable[str]) -> Game:
    """Apply a stored log to ``game`` (unchecked: every entry was checked when logged)."""
    for line in log:
        apply(game, line)
    return game


def until(log: list[str], ms: int) -> list[str]:
    """The entries accepted by race time ``ms``."""
    return [line for line in log if at_ms(line) <= ms]


def solver_moves(log: Iterable[str]) -> list[str]:
    """A log as the solver's move list: a resignation or time-out is dropped (the solver
    searches such a position as if play had gone on)."""
    return [text_of(line) for line in moves_only(log)]


def moves_only(log: Iterable[str]) -> list[str]:
    """A log's moves: a resignation or time-out left out."""
    return [line for line in log if is_move(line)]
