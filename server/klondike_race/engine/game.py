"""One player's game: the position, the rules that change it, and its status.

Two tiers, as in python-chess:

* ``Game.play(move)`` is the checked entry for untrusted requests. It either applies
  the move and returns it in canonical form, or raises ``IllegalMove`` with a
  machine-readable ``reason`` and changes nothing.
* ``Game.apply(move)`` does **not** check legality. It is for replays of moves that were
  checked before, for ``legal_moves()`` output and for the solver. An illegal move given to
  it corrupts the game.

The engine reads no clock: the server passes ``at_ms`` (milliseconds since the race
started) with each move, and the elapsed time to ``score_at`` for timed scoring.
"""

from __future__ import annotations

from typing import TypeAlias

from .cards import FITS_ON, HOLDS, KING, NAMES, RANK, SUIT, SUIT_WORDS
from .deal import Deal
from .errors import IllegalMove
from .moves import (
    BEST,
    CARDS,
    DRAW,
    DRAW_MOVE,
    FOUND0,
    FOUNDATION,
    RECYCLE,
    RECYCLE_MOVE,
    UNDO,
    UNDO_MOVE,
    WASTE,
    Move,
    pile_name,
)
from .settings import DEFAULT, Settings

PLAYING = "playing"
WON = "won"
STUCK = "stuck"
RESIGNED = "resigned"
OUT_OF_TIME = "out_of_time"

_COLUMNS = range(7)

# what undo restores: columns, down, stock, waste, found, fan, recycles, score
_Snapshot: TypeAlias = tuple[
    list[list[int]], list[int], list[int], list[int], list[int], int, int, int
]


def game_over(status: str, undo: bool) -> bool:
    """The game-over rule: True when a game of ``status`` accepts no move any more. A
    stuck game with ``undo`` on may still undo, so it is not over; every other status
    but ``playing`` is. ``Game.over`` is this rule; the service applies it to the
    statuses it holds."""
    return status != PLAYING and not (undo and status == STUCK)


def starting_score(scoring: str) -> int:
    """A game's score before its first move: Vegas pays $52 for the deck."""
    return -52 if scoring == "vegas" else 0


class Game:
    """A Klondike game: the deal, the settings and every move played so far.

    Public state (read it, do not write it): ``columns`` (7 lists, bottom card first),
    ``down`` (face-down cards at the bottom of each column), ``stock`` (top = last),
    ``waste`` (top = last), ``found`` (cards on each suit's foundation, ``c d h s``),
    ``fan`` (cards of the latest draw still on the waste), ``recycles``, ``moves`` (the
    move counter), ``score``, ``found_count``, ``reached_moves``/``reached_ms`` (when the
    foundation count last changed), ``log`` and ``times`` (every move and its ``at_ms``).
    """

    __slots__ = (
        "_stuck",
        "columns",
        "deal",
        "down",
        "ended",
        "fan",
        "found",
        "found_count",
        "history",
        "log",
        "moves",
        "reached_moves",
        "reached_ms",
        "recycles",
        "score",
        "settings",
        "stock",
        "times",
        "waste",
    )

    def __init__(self, deal: Deal, settings: Settings = DEFAULT) -> None:
        self.deal = deal
        self.settings = settings
        self.columns = deal.columns()
        self.down = list(_COLUMNS)
        self.stock = deal.stock()
        self.waste: list[int] = []
        self.found = [0, 0, 0, 0]
        self.fan = 0
        self.recycles = 0
        self.moves = 0
        self.score = starting_score(settings.scoring)
        self.found_count = 0
        self.reached_moves = 0
        self.reached_ms = 0
        self.ended: str | None = None
        self.log: list[Move] = []
        self.times: list[int] = []
        self.history: list[_Snapshot] | None = [] if settings.undo else None
        self._stuck: bool | None = None

    @classmethod
    def from_seed(cls, seed: object, settings: Settings = DEFAULT) -> Game:
        return cls(Deal.from_seed(seed), settings)

    def copy(self) -> Game:
        """An independent copy (the undo history is shared; treat it as read-only)."""
        other = Game.__new__(Game)
        for name in Game.__slots__:
            setattr(other, name, getattr(self, name))
        other.columns = [col[:] for col in self.columns]
        other.down = self.down[:]
        other.stock = self.stock[:]
        other.waste = self.waste[:]
        other.found = self.found[:]
        other.log = self.log[:]
        other.times = self.times[:]
        if self.history is not None:
            other.history = self.history[:]
        return other

    # ---- status ---------------------------------------------------------------------
    @property
    def status(self) -> str:
        """``playing``, ``won``, ``stuck``, ``resigned`` or ``out_of_time``."""
        if self.found_count == 52:
            return WON
        if self.ended is not None:
            return self.ended
        if self._stuck is None:
            self._stuck = self._is_stuck()
        return STUCK if self._stuck else PLAYING

    @property
    def over(self) -> bool:
        """True when no move will be accepted any more (``game_over``: a stuck game with
        undo on may still undo, so it is not over)."""
        status = self.status
        # runs per move: a game still playing (nearly every call) is answered without the
        # call (game_over says False for it too)
        return status != PLAYING and game_over(status, self.history is not None)

    @property
    def last_ms(self) -> int:
        """When the last move was played (0 before the first): a resignation or a time-out
        is no move."""
        return self.times[-1] if self.times else 0

    def resign(self) -> None:
        """Give up: the position is frozen and still ranked."""
        self._end(RESIGNED)

    def time_out(self) -> None:
        """The room's time limit ran out."""
        self._end(OUT_OF_TIME)

    def _end(self, how: str) -> None:
        if self.over:
            raise IllegalMove("game_over", f"the game is already over ({self.status})")
        self.ended = how

    # ---- the checked entry ------------------------------------------------------------
    def play(self, move: Move | str, at_ms: int = 0) -> Move:
        """Check ``move`` and apply it; return the move as applied (canonical form).

        Raises IllegalMove (see errors.py for the reasons) and then changes nothing;
        NotationError if ``move`` is text that does not parse.
        """
        move = self.check(move)
        self.apply(move, at_ms)
        return move

    def check(self, move: Move | str) -> Move:
        """The canonical form of ``move`` if it is legal now; raises IllegalMove if not."""
        if not isinstance(move, Move):
            move = Move.parse(move)
        if move.kind != CARDS:
            return self._check_action(move)
        if self.over:
            raise IllegalMove("game_over", f"the game is over ({self.status})")
        src, dst, n = move.src, move.dst, move.count
        if not (0 <= src < 12 and 0 <= dst <= BEST and dst != 12):
            raise IllegalMove("not_supported", "no move goes between those piles")
        if src == dst:
            raise IllegalMove("same_pile", "source and target are the same pile")
        to_column = dst < 7
        if src < 7:
            col = self.columns[src]
            if not col:
                raise IllegalMove("empty_source", f"{pile_name(src)} is empty")
            up = len(col) - self.down[src]
            if not 1 <= n <= up:
                raise IllegalMove(
                    "card_not_available",
                    f"{pile_name(src)} has {up} face-up card{'s' if up != 1 else ''}; "
                    f"cannot move {n}",
                )
            card = col[-n]
            self._check_run(col, n)
        elif src == WASTE:
            if not self.waste:
                raise IllegalMove("empty_source", "the waste is empty")
            card = self.waste[-1]
        else:  # a foundation
            if not to_column and dst != BEST:
                raise IllegalMove("not_supported", "a foundation card can only go to a column")
            if not self.settings.foundation_to_column:
                raise IllegalMove(
                    "foundation_to_column_forbidden", "this game forbids moves off a foundation"
                )
            suit = src - FOUND0
            if not self.found[suit]:
                raise IllegalMove("empty_source", f"{pile_name(src)} is empty")
            card = suit * 13 + self.found[suit] - 1
        if src >= 7 and n != 1:
            raise IllegalMove("bad_count", f"only one card moves from {pile_name(src)}")
        if dst == BEST:
            return self._best_target(move, card)
        if to_column:
            self._check_column_target(card, dst)
            return move
        return self._check_foundation_target(move, card)

    def _check_action(self, move: Move) -> Move:
        """``check`` for draw, recycle and undo (and a kind no move has)."""
        kind = move.kind
        if kind in (DRAW, RECYCLE, UNDO) and move.count != 0:
            raise IllegalMove("bad_count", "draw, recycle and undo carry no count")
        if kind == UNDO:
            if self.history is None:
                raise IllegalMove("undo_disabled", "undo is off in this game")
            if self.found_count == 52 or self.ended is not None:
                raise IllegalMove("game_over", f"the game is over ({self.status})")
            if not self.history:
                raise IllegalMove("nothing_to_undo", "there is no move to undo")
            return UNDO_MOVE
        if self.over:
            raise IllegalMove("game_over", f"the game is over ({self.status})")
        if kind == DRAW:
            if not self.stock:
                raise IllegalMove("stock_empty", "the stock is empty: recycle the waste")
            return DRAW_MOVE
        if kind == RECYCLE:
            if self.stock:
                raise IllegalMove("stock_not_empty", "recycle only when the stock is empty")
            if not self.waste:
                raise IllegalMove("waste_empty", "the waste is empty: nothing to recycle")
            allowed = self.settings.recycles_allowed
            if allowed is not None and self.recycles >= allowed:
                raise IllegalMove(
                    "passes_exhausted",
                    f"no passes left: this game allows {self.settings.passes} "
                    f"pass{'es' if self.settings.passes > 1 else ''} through the stock",
                )
            return RECYCLE_MOVE
        raise IllegalMove("not_supported", f"unknown move kind {kind!r}")

    @staticmethod
    def _check_run(col: list[int], n: int) -> None:
        # Face-up cards always form a run (every card was placed by the build rule);
        # this guards the invariant rather than trusting it.
        for i in range(len(col) - n, len(col) - 1):
            if col[i + 1] not in HOLDS[col[i]]:
                raise IllegalMove("not_a_run", "those cards do not form a run")

    def _check_foundation_target(self, move: Move, card: int) -> Move:
        """``check`` of a card move to a foundation (or the waste), ``card`` its card; the
        move with its foundation named."""
        src, dst, n = move.src, move.dst, move.count
        if dst == WASTE:
            raise IllegalMove("not_supported", "nothing can be moved onto the waste")
        if n != 1:
            raise IllegalMove("bad_count", "cards go to a foundation one at a time")
        suit = SUIT[card]
        if dst != FOUNDATION and dst - FOUND0 != suit:
            raise IllegalMove(
                "illegal_target",
                f"{NAMES[card]} goes only on the {SUIT_WORDS[suit]} foundation",
            )
        if self.found[suit] != RANK[card] - 1:
            raise IllegalMove(
                "illegal_target",
                f"{NAMES[card]} cannot go home yet: the {SUIT_WORDS[suit]} foundation holds "
                f"{self.found[suit]} card{'s' if self.found[suit] != 1 else ''}",
            )
        return Move(CARDS, src, FOUND0 + suit, 1) if dst == FOUNDATION else move

    def _best_target(self, move: Move, card: int) -> Move:
        """``check`` of a move to ``BEST``: the move to where the card goes best, as one
        tap sends a card in most Klondike programs. Its own foundation (one card, not off
        a foundation); else the leftmost column whose top card it fits on; else the
        leftmost empty column it may fill, unless the cards are a whole column already
        (that move changes nothing). Nowhere: ``no_target``."""
        src, n = move.src, move.count
        if n == 1 and src < FOUND0 and self.found[SUIT[card]] == RANK[card] - 1:
            return Move(CARDS, src, FOUND0 + SUIT[card], 1)
        columns = self.columns
        for dst in _COLUMNS:
            if dst != src and columns[dst] and card in HOLDS[columns[dst][-1]]:
                return Move(CARDS, src, dst, n)
        whole = src < 7 and n == len(columns[src])
        if not whole and (self.settings.empty == "any" or RANK[card] == KING):
            for dst in _COLUMNS:
                if not columns[dst]:
                    return Move(CARDS, src, dst, n)
        raise IllegalMove("no_target", f"{NAMES[card]} has nowhere to go")

    def _check_column_target(self, card: int, dst: int) -> None:
        target = self.columns[dst]
        if target:
            top = target[-1]
            if card not in HOLDS[top]:
                raise IllegalMove(
                    "illegal_target",
                    f"{NAMES[card]} does not fit on {NAMES[top]} "
                    "(one rank lower and the other colour)",
                )
        elif self.settings.empty == "kings" and RANK[card] != KING:
            raise IllegalMove(
                "kings_only", f"only a King (or a run headed by one) may fill {pile_name(dst)}"
            )

    # ---- the unchecked apply ------------------------------------------------------------
    def apply(self, move: Move, at_ms: int = 0) -> None:
        """Apply ``move`` WITHOUT CHECKING it. For replays, legal_moves() output and the
        solver only; untrusted input goes through ``play``."""
        kind, src, dst, n = move
        if dst == FOUNDATION and kind == CARDS:
            dst = self._home_of(src)
            move = Move(CARDS, src, dst, n)
        self._stuck = None
        self.moves += 1
        self.log.append(move)
        self.times.append(at_ms)
        if kind == UNDO:
            self._undo(at_ms)
            return
        if self.history is not None:
            self._snapshot()
        scoring = self.settings.scoring
        gained = 0  # cards onto (+) or off (-) the foundations
        if kind == CARDS:
            if src < 7:
                col = self.columns[src]
                if dst < 7:
                    self.columns[dst] += col[-n:]
                    del col[-n:]
                else:
                    self.found[SUIT[col.pop()]] += 1
                    gained = 1
                if col and len(col) == self.down[src]:
                    self.down[src] -= 1
                    if scoring == "standard":
                        self.score += 5
            elif src == WASTE:
                card = self.waste.pop()
                if self.fan:
                    self.fan -= 1
                if dst < 7:
                    self.columns[dst].append(card)
                    if scoring == "standard":
                        self.score += 5
                else:
                    self.found[SUIT[card]] += 1
                    gained = 1
            else:
                suit = src - FOUND0
                self.columns[dst].append(suit * 13 + self.found[suit] - 1)
                self.found[suit] -= 1
                gained = -1
            if gained:
                self._count_home(gained, at_ms, scoring)
        elif kind == DRAW:
            self._draw()
        else:  # RECYCLE
            self._recycle(scoring)
        if scoring == "standard" and self.score < 0:
            self.score = 0

    def _count_home(self, gained: int, at_ms: int, scoring: str) -> None:
        """``gained`` cards went onto (+1) or off (-1) the foundations at ``at_ms``."""
        self.found_count += gained
        self.reached_moves = self.moves
        self.reached_ms = at_ms
        if scoring == "standard":
            self.score += 10 if gained > 0 else -15
        elif scoring == "vegas":
            self.score += 5 * gained

    def _draw(self) -> None:
        k = min(self.settings.draw, len(self.stock))
        stock, waste = self.stock, self.waste
        for _ in range(k):
            waste.append(stock.pop())
        self.fan = k

    def _recycle(self, scoring: str) -> None:
        self.waste.reverse()
        self.stock, self.waste = self.waste, []
        self.fan = 0
        self.recycles += 1
        if scoring == "standard":
            if self.settings.draw == 1:
                self.score -= 100
            elif self.recycles > 3:
                self.score -= 20

    def _home_of(self, src: int) -> int:
        card = self.waste[-1] if src == WASTE else self.columns[src][-1]
        return FOUND0 + SUIT[card]

    def _snapshot(self) -> None:
        assert self.history is not None
        self.history.append(
            (
                [col[:] for col in self.columns],
                self.down[:],
                self.stock[:],
                self.waste[:],
                self.found[:],
                self.fan,
                self.recycles,
                self.score,
            )
        )

    def _undo(self, at_ms: int) -> None:
        assert self.history
        before = self.found_count
        # copy the lists out: a copy() of this game shares the snapshot
        columns, down, stock, waste, found, self.fan, self.recycles, self.score = self.history.pop()
        self.columns = [col[:] for col in columns]
        self.down, self.stock, self.waste, self.found = down[:], stock[:], waste[:], found[:]
        self.found_count = sum(self.found)
        if self.found_count != before:
            self.reached_moves = self.moves
            self.reached_ms = at_ms

    # ---- what can be played -----------------------------------------------------------
    def legal_moves(self) -> list[Move]:
        """Every move ``play`` would accept now, undo excepted. ``FOUNDATION`` is never
        used: foundation moves name their suit."""
        if self.over:
            return []
        out: list[Move] = []
        if self.stock:
            out.append(DRAW_MOVE)
        elif self.waste:
            allowed = self.settings.recycles_allowed
            if allowed is None or self.recycles < allowed:
                out.append(RECYCLE_MOVE)
        self._card_moves(out)
        return out

    def _card_moves(self, out: list[Move]) -> None:
        """Append every legal card move."""
        columns, down, found = self.columns, self.down, self.found
        any_empty = self.settings.empty == "any"
        fits: dict[int, list[int]] = {}  # card -> columns whose top it fits
        empties: list[int] = []
        for d in _COLUMNS:
            col = columns[d]
            if col:
                for c in HOLDS[col[-1]]:
                    if c in fits:
                        fits[c].append(d)
                    else:
                        fits[c] = [d]
            else:
                empties.append(d)
        waste = self.waste
        if waste:
            c = waste[-1]
            if found[SUIT[c]] == RANK[c] - 1:
                out.append(Move(CARDS, WASTE, FOUND0 + SUIT[c], 1))
            for d in fits.get(c, ()):
                out.append(Move(CARDS, WASTE, d, 1))
            if empties and (any_empty or RANK[c] == KING):
                for d in empties:
                    out.append(Move(CARDS, WASTE, d, 1))
        for s in _COLUMNS:
            col = columns[s]
            if not col:
                continue
            top = col[-1]
            if found[SUIT[top]] == RANK[top] - 1:
                out.append(Move(CARDS, s, FOUND0 + SUIT[top], 1))
            size = len(col)
            for i in range(down[s], size):
                c = col[i]
                n = size - i
                targets = fits.get(c)
                if targets:
                    for d in targets:
                        out.append(Move(CARDS, s, d, n))
                if empties and (any_empty or RANK[c] == KING):
                    for d in empties:
                        out.append(Move(CARDS, s, d, n))
        if self.settings.foundation_to_column:
            for suit in range(4):
                if found[suit]:
                    c = suit * 13 + found[suit] - 1
                    for d in fits.get(c, ()):
                        out.append(Move(CARDS, FOUND0 + suit, d, 1))
                    if empties and (any_empty or RANK[c] == KING):
                        for d in empties:
                            out.append(Move(CARDS, FOUND0 + suit, d, 1))

    def _is_stuck(self) -> bool:
        """docs/rules.md: no legal move but draw or recycle, and no card that drawing through
        the remaining passes would turn up can be played anywhere. Carrying a whole
        column into an empty column changes nothing and does not count as a move here."""
        found, columns = self.found, self.columns
        tops = {col[-1] for col in columns if col}
        has_empty = len(tops) < 7
        any_empty = self.settings.empty == "any"
        if self._has_card_move(tops, has_empty, any_empty):
            return False
        stock, waste = self.stock[:], self.waste[:]
        draw = self.settings.draw
        allowed = self.settings.recycles_allowed
        recycled = False
        while True:
            if stock:
                for _ in range(min(draw, len(stock))):
                    waste.append(stock.pop())
            elif waste and not recycled and (allowed is None or self.recycles < allowed):
                waste.reverse()
                stock, waste = waste, []
                recycled = True
                continue
            else:
                return True
            c = waste[-1]
            if found[SUIT[c]] == RANK[c] - 1:
                return False
            if not tops.isdisjoint(FITS_ON[c]):
                return False
            if has_empty and (any_empty or RANK[c] == KING):
                return False

    def _has_card_move(self, tops: set[int], has_empty: bool, any_empty: bool) -> bool:
        """Whether a card move exists, leaving out those that only carry a whole column
        (nothing under it) into an empty column; stops at the first found (the stuck
        check runs after every move, and most positions answer in a few steps)."""
        found = self.found
        waste = self.waste
        if waste:
            c = waste[-1]
            if found[SUIT[c]] == RANK[c] - 1 or not tops.isdisjoint(FITS_ON[c]):
                return True
            if has_empty and (any_empty or RANK[c] == KING):
                return True
        for col, down in zip(self.columns, self.down, strict=True):
            if not col:
                continue
            top = col[-1]
            if found[SUIT[top]] == RANK[top] - 1:
                return True
            for i in range(down, len(col)):
                c = col[i]
                if not tops.isdisjoint(FITS_ON[c]):
                    return True
                if has_empty and (any_empty or RANK[c] == KING) and (i or down):
                    return True
        if self.settings.foundation_to_column:
            for suit in range(4):
                if found[suit]:
                    c = suit * 13 + found[suit] - 1
                    if not tops.isdisjoint(FITS_ON[c]):
                        return True
                    if has_empty and (any_empty or RANK[c] == KING):
                        return True
        return False

    # ---- auto-complete ------------------------------------------------------------------
    def autocomplete_available(self) -> bool:
        """docs/rules.md: stock and waste empty and every column card face up."""
        return (
            not self.over
            and self.found_count < 52
            and not self.stock
            and not self.waste
            and not any(self.down)
        )

    def autocomplete_moves(self) -> list[Move]:
        """The column-to-foundation moves auto-complete plays, in order (lowest rank
        first, then leftmost column); empty when it is not available."""
        if not self.autocomplete_available():
            return []
        found = self.found[:]
        heights = [len(col) for col in self.columns]
        out: list[Move] = []
        while True:
            best: tuple[int, int, int] | None = None  # (rank, column, card)
            for s in _COLUMNS:
                if heights[s]:
                    c = self.columns[s][heights[s] - 1]
                    if found[SUIT[c]] == RANK[c] - 1 and (best is None or RANK[c] < best[0]):
                        best = (RANK[c], s, c)
            if best is None:
                return out
            _, s, c = best
            heights[s] -= 1
            found[SUIT[c]] += 1
            out.append(Move(CARDS, s, FOUND0 + SUIT[c], 1))

    # ---- scores -------------------------------------------------------------------------
    def score_at(self, elapsed_ms: int) -> int:
        """The score shown at ``elapsed_ms`` into the game. Timed standard scoring takes
        2 points per full 10 s (never below 0) and adds 700,000 / seconds on a win after
        more than 30 s (seconds rounded down, at least 31)."""
        if not self.settings.timed:
            return self.score
        end_ms = self.reached_ms if self.found_count == 52 else elapsed_ms
        score = max(0, self.score - 2 * (end_ms // 10_000))
        if self.found_count == 52 and end_ms > 30_000:
            score += 700_000 // max(31, end_ms // 1000)
        return score

    def __repr__(self) -> str:
        return f"<Game {self.deal.id} {self.settings} moves={self.moves} {self.status}>"
