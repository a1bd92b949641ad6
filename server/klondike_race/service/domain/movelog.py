"""The move-log entry: one accepted move as ``TEXT@AT_MS``, the only place it is built or
read.

``TEXT`` is the move's notation (docs/notation.md), or ``resign``; ``AT_MS`` is the race
time in milliseconds when the server accepted it. A player's log (a Redis list) holds
their entries in order; entry *n* (from 1) was the client's sequence number *n*. Moves
were checked before they were logged, so a log replays without checks.
"""

from __future__ import annotations

from collections.abc import Iterable

from ...engine import Game, Move

RESIGN = "resign"


def entry(text: str, at_ms: int) -> str:
    """The log entry of a move's notation (or ``resign``) accepted at race time ``at_ms``."""
    return f"{text}@{at_ms}"


def parse(line: str) -> tuple[str, int]:
    """``(text, at_ms)`` of a log entry."""
    text, _, ms = line.rpartition("@")
    return text, int(ms)


def text_of(line: str) -> str:
    return line.rpartition("@")[0]


def at_ms(line: str) -> int:
    return int(line.rpartition("@")[2])


def is_resign(line: str) -> bool:
    return line.startswith(RESIGN + "@")


def logged(game: Game) -> int:
    """How many entries the log of ``game`` holds: its moves, and its resignation if it
    resigned (a resignation is logged and acknowledged, under its own sequence number,
    but is no move). The player's next sequence number is this + 1."""
    return game.moves + (game.status == "resigned")


def replay(game: Game, log: Iterable[str]) -> Game:
    """Apply a stored log to ``game`` (unchecked: every entry was checked when logged)."""
    for line in log:
        text, ms = parse(line)
        if text == RESIGN:
            if not game.over:
                game.resign()
        else:
            game.apply(Move.parse(text), ms)
    return game


def until(log: list[str], ms: int) -> list[str]:
    """The entries accepted by race time ``ms``."""
    return [line for line in log if at_ms(line) <= ms]


def solver_moves(log: Iterable[str]) -> list[str]:
    """A log as the solver's move list: a resignation is dropped (the solver searches a
    resigned position as if play had gone on)."""
    return [text_of(line) for line in log if not is_resign(line)]


def without_resign(log: Iterable[str]) -> list[str]:
    return [line for line in log if not is_resign(line)]
