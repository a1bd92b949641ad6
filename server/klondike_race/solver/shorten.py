"""Shorter winning lines: exact post-processing of a line the solver found (docs/solver.md,
"Par: the shortest line found").

A line is seen as its *plays* (every move but draws and recycles, a play from the waste
knowing its card) and the draws between them, which are implied: before a play from the
waste, draw (recycling when the stock is empty) until its card is the waste top, as the
solver's own lines do. ``shorten(game, line, budget)`` changes the plays and draws them
again; a change is kept only when the engine plays the whole new line to a win and it
has fewer moves:

1. cycles: a position seen twice (foundations, face-down counts, every column, the deck's
   cards in order: not where the stock pointer is, which the draws are made for) with
   the plays between dropped;
2. waste plays earlier: a card played from the waste that was the waste top earlier, on
   the way to another one, when its play was already legal there: played then, saving
   the later trip through the stock to it;

Each candidate costs its engine moves in work units against ``budget``, so the result is
the same on every machine (no clock is read); the longest line is never returned: the
first is kept unless something shorter wins.
"""

from __future__ import annotations

from dataclasses import dataclass

from ..engine.errors import EngineError
from ..engine.game import WON, Game
from ..engine.moves import CARDS, DRAW_MOVE, RECYCLE_MOVE, WASTE, Move

# a play and, from the waste, its card
_Play = tuple[Move, int | None]


@dataclass(frozen=True, slots=True)
class Shortened:
    """The shorter line (never longer than the one given), and the work it took (engine
    moves played)."""

    line: list[Move]
    work: int


class _Out(Exception):
    """The budget is spent."""


def position_key(game: Game) -> bytes:
    """The position but for the stock pointer, the recycles used and the score: foundations,
    face-down counts, every column's cards, and the deck (waste and stock) in turning
    order."""
    parts = [bytes(game.found), bytes(game.down)]
    for col in game.columns:
        parts.append(bytes(col))
        parts.append(b"\x40")
    parts.append(bytes(game.waste))
    parts.append(bytes(game.stock[::-1]))
    return b"".join(parts)


def _clean(game: Game) -> Game:
    copy = game.copy()
    copy.history = None
    copy.log = []
    copy.times = []
    return copy


class _Lines:
    """Plays drawn out into lines, every engine move counted against the budget."""

    def __init__(self, start: Game, budget: int) -> None:
        self.start = _clean(start)
        self.budget = budget
        self.work = 0

    def spend(self) -> None:
        self.work += 1
        if self.work > self.budget:
            raise _Out

    def expand(
        self, plays: list[_Play], passed: list[set[int]] | None = None
    ) -> tuple[list[Move], list[bytes], list[Game]] | None:
        """The line of ``plays`` with its draws, the key of the position after each play
        (and before the first) and those positions; None if the engine refuses a move
        or the line does not win. ``passed``, if given, gets for each play the cards that
        were the waste top while drawing towards it."""
        game = _clean(self.start)
        line: list[Move] = []
        keys = [position_key(game)]
        games = [_clean(game)]
        try:
            for move, card in plays:
                seen: set[int] = set()
                if card is not None:
                    tries = 3 * (len(game.stock) + len(game.waste)) + 3
                    while not game.waste or game.waste[-1] != card:
                        tries -= 1
                        if tries < 0:
                            return None
                        self.spend()
                        line.append(game.play(DRAW_MOVE if game.stock else RECYCLE_MOVE))
                        if game.waste:
                            seen.add(game.waste[-1])
                if passed is not None:
                    passed.append(seen)
                if game.status == WON:
                    return None  # won before its plays end: not this line (a cycle cut takes it)
                self.spend()
                line.append(game.play(move))
                keys.append(position_key(game))
                games.append(_clean(game))
        except EngineError:
            return None
        if game.status != WON:
            return None
        return line, keys, games


def plays_of(game: Game, line: list[Move]) -> list[_Play]:
    """``line``'s plays (draws and recycles left out), a waste play with its card."""
    game = _clean(game)
    out: list[_Play] = []
    for move in line:
        card = game.waste[-1] if move.kind == CARDS and move.src == WASTE else None
        game.apply(move)
        if move != DRAW_MOVE and move != RECYCLE_MOVE:
            out.append((move, card))
    return out


class _Shortener:
    def __init__(self, game: Game, line: list[Move], budget: int) -> None:
        self.lines = _Lines(game, budget)
        self.best = list(line)
        self.plays = plays_of(game, line)
        self.keys: list[bytes] = []
        self.games: list[Game] = []
        self.passed: list[set[int]] = []

    def take(self, plays: list[_Play], first: bool = False) -> bool:
        """Draw ``plays`` out; keep them (their cycles cut) if their line wins and is
        shorter than the best so far, or as short (they then replace the plays; the
        ``first`` plays are kept in any case, the best line only if shorter)."""
        passed: list[set[int]] = []
        out = self.lines.expand(plays, passed)
        if out is None:
            return False
        line, keys, games = out
        # cycles: from each position jump to the last one equal to it
        last = {k: i for i, k in enumerate(keys)}
        if any(last[k] != i for i, k in enumerate(keys)):
            cut: list[_Play] = []
            i = 0
            while i < len(plays):
                i = last[keys[i]]
                if i < len(plays):
                    cut.append(plays[i])
                    i += 1
            if len(cut) < len(plays) and self.take(cut):
                return True
        if len(line) > len(self.best) and not first:
            return False
        shorter = len(line) < len(self.best)
        if shorter or not first:
            self.best = line
        self.plays, self.keys, self.games, self.passed = plays, keys, games, passed
        return shorter

    def earlier(self) -> bool:
        """Each waste play, in turn, moved to the latest earlier play on whose way its card
        was the waste top and where it could already be played. True if the line got
        shorter."""
        before = len(self.best)
        k = 0
        while k < len(self.plays):
            move, card = self.plays[k]
            if card is not None:
                for a in range(k - 1, -1, -1):
                    if card not in self.passed[a] or not self._fits(self.games[a], move, card):
                        continue
                    plays = [*self.plays[:a], self.plays[k], *self.plays[a:k], *self.plays[k + 1 :]]
                    if self.take(plays):
                        break
            k += 1
        return len(self.best) < before

    @staticmethod
    def _fits(game: Game, move: Move, card: int) -> bool:
        """``card``, from the waste, may go where ``move`` takes it in ``game``'s tableau
        and foundations."""
        probe = _clean(game)
        probe.stock = []
        probe.waste = [card]
        probe._stuck = None
        try:
            probe.check(move)
        except EngineError:
            return False
        return True


def shorten(game: Game, line: list[Move], budget: int) -> Shortened:
    """A winning line from ``game``'s position no longer than ``line`` (which must win from
    it), within ``budget`` engine moves of work."""
    work = _Shortener(game, line, budget)
    try:
        if not work.take(work.plays, first=True) and not work.keys:
            raise ValueError("the line given does not win from this position")
        while work.earlier():  # a pass that shortened may open more
            pass
    except _Out:
        pass
    return Shortened(work.best, work.lines.work)
