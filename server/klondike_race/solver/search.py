"""The search itself: a depth-first search over positions, with no I/O and no clock.

This is the readable search and the fallback: the solver runs ``csearch.c``, the same
search in C, position for position, when it is built (native.py).

The position is kept in plain lists and changed in place (make / unmake); what the set of
positions already seen stores is the position's *class* (docs/solver.md proves each step):

* the face-down count of each column (the face-down cards themselves follow from the
  deal), the foundations, the deck (stock and waste as one list in turning order) with
  ``p`` (how many of its cards are turned, i.e. the waste size) when it matters, and the
  recycles used when passes are limited;
* the roots of the columns without face-down cards (their bottom card), as a multiset.

Everything else is the arrangement of the face-up cards that sit on another face-up
card, and that never decides a game: two face-up cards of one rank and colour ("twins")
can trade whatever lies on them without changing whether the game can be won. So
positions that differ only there are one class, and moves that only rearrange them (a
run moved from one twin to the other) are not searched; the one place where the
arrangement matters, a card covered by its child while its twin is free, is handled by
a composite move (child onto the twin, then the card home).

Moves that only prepare a later one carry an obligation: the next move must use what
they prepared (docs/solver.md, "Parking moves").

The stock is searched by macro moves: "turn cards until deck card ``i`` is the waste top,
then play it". Draws and recycles commute with every other move, so a winning line can
always turn cards just before the play that uses them.

``Search.advance(n)`` searches on for at most n positions and can be called again (the
solver runs several searches by turns this way); ``Search.run()`` goes to the end, raising
``Budget`` when ``max_states`` runs out (the tests drive single searches this way).

Each search finds the strongly connected components of what it searched (Tarjan) and
puts the keys of those it finished, all lost, in ``lost``, a set that searches of the same
position and settings may share. With a ``Relaxation``, a search also skips positions
that are lost even in Draw 1 with unlimited passes (a relaxation of every other setting),
and tests the positions whose moves have cost it many positions with small Draw 1
searches: when one is lost there, everything searched from it is lost too, and cut off
(docs/solver.md, "Sharing what is proven lost" and "The Draw 1 relaxation").
``Restarts`` runs short searches in random move orders, for wins the fixed orders miss.
"""

from __future__ import annotations

from collections.abc import Callable, Sequence
from random import Random
from typing import Any, Final, TypeAlias, cast

from ..engine import cards

# the card tables the search reads (csearch.c builds the same ones)
HOLDS: Final = cards.HOLDS
RANK: Final = cards.RANK
SUIT: Final = cards.SUIT
KING: Final = 13
# suits c d h s (0-3): the other suit of the same colour is 3 - suit; the other colour
# of a black suit (0, 3) is suits 1 and 2, of a red one 0 and 3 (``_other_colour``)
KINGS: Final = (12, 25, 38, 51)
TWIN: Final = tuple((3 - SUIT[c]) * 13 + RANK[c] - 1 for c in range(52))
_BYTE: Final = tuple(bytes((i,)) for i in range(256))
NO_DOWN: Final = [0] * 7  # ``down`` with no face-down card left
# the cards each card may be put on (rank one higher, the other colour)
PARENTS: Final = tuple(tuple(p for p in range(52) if c in HOLDS[p]) for c in range(52))

# moves (tuples; the first item is the kind)
MOVE: Final = 0  # (MOVE, src, dst, count): a run from column to column
HOME: Final = 1  # (HOME, src): a column's top card to its foundation
SWAP_HOME: Final = 2  # (SWAP_HOME, src, twin_col, count): the run on a card onto its twin, then
#                the card home
DECK: Final = 3  # (DECK, index, dst, recycles): deck card ``index`` to column dst (-1: home)
FOUND: Final = 4  # (FOUND, suit, dst): a foundation's top card to a column

# primitive steps (what the line is made of, with what undo needs): ("m", src, dst, count,
# flipped), ("h", src, card, flipped), ("w", card, dst, ...), ("f", suit, dst); each entry
# of Search.path is the list of steps of one move (ints in it are saved obligations)

# a move: a tuple of ints, its kind first (above)
SearchMove: TypeAlias = tuple[int, ...]
# a primitive step: its kind ("m", "h", "w" or "f") first, then ints (and a bool or bytes)
Step: TypeAlias = tuple[Any, ...]
# the steps of one move, and the obligation before it (an int, restored by undo)
Steps: TypeAlias = list[Step | int]
# a position in Tarjan's bookkeeping: its key, or (key, obligation) when it has one
Node: TypeAlias = bytes | tuple[bytes, int]


# obligations (``Search.ob``; -1: none): a card c (a deck card just put on a column, Draw
# 1 with unlimited passes: the next move puts one of its children on a column), or
EMPTY_OB: Final = 100  # a column was emptied by moving its root: the next move fills one


# the Draw 1 relaxation tests (docs/solver.md, "The Draw 1 relaxation"): a position is
# tested once its moves have cost TEST_AFTER positions, again at TEST_GROWTH times as many,
# and so on; a test may search TEST_RATIO times the positions its position has cost; and
# tests stop while more than FREE_FAILS + FAILS_PER_CUT * (tests that cut) found nothing;
# no test searches more than TEST_MAX positions (a budget can be overrun by one test)
TEST_AFTER: Final = 1024
TEST_MAX: Final = 32768
TEST_GROWTH: Final = 2
TEST_RATIO: Final = 8
FREE_FAILS: Final = 16
FAILS_PER_CUT: Final = 2


class Budget(Exception):
    """The state budget ran out before the search was decided."""


def key_set() -> set[bytes]:
    """An empty set of keys, for ``lost`` (the C core has a kind of its own)."""
    return set()


class Relaxation:
    """What the Draw 1 relaxation tests share: the Draw 1 (unlimited passes) keys proven
    lost (the ``lost`` set of every Draw 1 search run for them) and those known won (every
    position of a line a test's search found; a test stops when it meets one)."""

    def __init__(self) -> None:
        self.lost: set[bytes] = set()
        self.won: set[bytes] = set()


class Search:
    """One search from one position. ``run()`` returns True (won: ``path`` holds the
    steps, ``start_steps`` those played before the first move), False (exhaustively
    proven lost) or raises Budget."""

    def __init__(
        self,
        columns: list[list[int]],
        down: list[int],
        found: list[int],
        deck: list[int],
        turned: int,
        recycles: int,
        *,
        draw: int,
        recycles_allowed: int | None,
        any_empty: bool,
        foundation_to_column: bool,
        max_states: int | None = None,
        deck_first: bool = False,
        lost: set[bytes] | None = None,
        relaxation: Relaxation | None = None,
        deadlock_test: bool = True,
        tests: bool = True,
        shuffle: int | None = None,
        won: set[bytes] | None = None,
        prune: bool = True,
    ) -> None:
        # keys known to be won (a relaxation test's Draw 1 search stops when it meets one:
        # only whether it wins matters there, not the line)
        self.known_won = won
        # False: no obligations and no pointer dominance (a plainer search of the same
        # classes, to check the answers of the full one; bench/solver_bench.py)
        self.prune = prune
        # a random move order (seeded: the same every time) instead of ``deck_first``'s
        self.rng = None if shuffle is None else Random(shuffle)
        self.deck_first = deck_first  # the move order: deck cards before turning cards
        self.cols = [list(c) for c in columns]
        self.down = list(down)
        self.found = list(found)
        self.deck = list(deck)
        self.p = turned
        self.rec = recycles
        self.draw = draw
        self.allowed = recycles_allowed
        self.any_empty = any_empty
        self.f2c = foundation_to_column
        self.max_states = max_states
        self.states = 0
        self.path: list[Steps] = []
        self.start_steps: Steps = []
        # p matters for the future unless the draw is 1 with unlimited passes (then every
        # deck card is always reachable)
        self.use_p = draw != 1 or recycles_allowed is not None
        self.use_rec = recycles_allowed is not None
        # unlimited passes and draw > 1: the pointers 0, k, 2k, ... and n (the deck size)
        # reach each other by drawing and recycling ("the cycle"; docs/solver.md,
        # "Pointer dominance")
        self.cycle = draw > 1 and recycles_allowed is None
        self.dk = bytes(self.deck)
        # the roots' part of the key (their count, then the sorted roots), or None when
        # a step may have changed them: a column's last face-down card turned up (or
        # turned back down by undo), a column emptied, a card put into an empty column
        self.rootb: bytes | None = None
        self.downb: bytes | None = None  # bytes(down), or None when a count changed
        self.foundb: bytes | None = None  # bytes(found), or None when one changed
        self.where = [-1] * 52  # the column of each card in a column, else -1
        for i, col in enumerate(self.cols):
            for c in col:
                self.where[c] = i
        # key -> the obligation it was seen with (-1: none), or a set of them
        self.seen: dict[bytes, int | set[int]] = {}
        # (deck size, pointer, whether a recycle is left) as one int -> ``_reach``'s list
        self._reach_cache: dict[int, list[tuple[int, int]]] = {}
        # Draw 1 with unlimited passes: a deck card played to a column must be used at
        # once (a card put on it, or on its twin): ``ob`` is that card, or -1
        self.park = draw == 1 and recycles_allowed is None
        self.ob = -1
        # the search's own stack, kept between advances (frames: see ``advance``)
        self._stack: list[Frame] | None = None
        # positions (keys, no obligation) proven lost: may be shared with another search
        # of the same position and settings (docs/solver.md, "Sharing what is proven lost")
        self.lost: set[bytes] = set() if lost is None else lost
        self.idx: dict[Node, int] = {}
        self.tstack: list[Node] = []
        self.visits = 0
        # the Draw 1 relaxation tests of positions whose moves cost many positions
        # (docs/solver.md, "The Draw 1 relaxation"); their positions are counted in
        # ``relaxed_states``
        self.relaxation = relaxation
        self.relaxed_states = 0
        self.deadlock_test = deadlock_test
        self.tests = tests  # False: only look up the Draw 1 keys proven lost
        self.cuts = 0  # tests that proved a position lost
        self.fails = 0  # tests that did not

    # ---- the class key ------------------------------------------------------------------
    def key(self) -> bytes:
        # fixed-size fields first, then the roots after their count, the deck, and the
        # pointer last (``advance`` swaps that last byte to look up dominating pointers)
        rootb = self.rootb
        if rootb is None:  # the roots changed since the last key (see ``rootb``)
            cols, down = self.cols, self.down
            roots = [cols[s][0] for s in range(7) if not down[s] and cols[s]]
            roots.sort()
            rootb = self.rootb = _BYTE[len(roots)] + bytes(roots)
        downb = self.downb
        if downb is None:
            downb = self.downb = bytes(self.down)
        foundb = self.foundb
        if foundb is None:
            foundb = self.foundb = bytes(self.found)
        p = self.p
        if not self.use_p:
            p = 0
        elif self.cycle and (p % self.draw == 0 or p == len(self.deck)):
            p = 0  # on the cycle: every such pointer reaches every other (free recycles)
        return b"".join(
            (
                downb,
                foundb,
                _BYTE[self.rec] if self.use_rec else b"\x00",
                rootb,
                self.dk,
                _BYTE[p],
            )
        )

    # ---- primitive steps (each returns what undo needs) ---------------------------------
    def _move(self, s: int, d: int, n: int) -> Step:
        cols, down = self.cols, self.down
        src = cols[s]
        run = src[-n:]
        cols[d] += run
        del src[-n:]
        where = self.where
        for c in run:
            where[c] = d
        flipped = bool(src) and len(src) == down[s]
        if flipped:
            down[s] -= 1
            self.downb = None
            if not down[s]:
                self.rootb = None
        if not src or len(cols[d]) == n:
            self.rootb = None
        return ("m", s, d, n, flipped)

    def _home(self, s: int) -> Step:
        cols, down = self.cols, self.down
        src = cols[s]
        c = src.pop()
        self.where[c] = -1
        self.found[SUIT[c]] += 1
        self.foundb = None
        flipped = bool(src) and len(src) == down[s]
        if flipped:
            down[s] -= 1
            self.downb = None
            if not down[s]:
                self.rootb = None
        elif not src:
            self.rootb = None
        return ("h", s, c, flipped)

    def _deck(self, i: int, d: int, r: int) -> Step:
        deck = self.deck
        c = deck.pop(i)
        step = ("w", c, d, i, self.p, self.rec, self.dk)
        self.p = i
        self.dk = bytes(deck)
        self.rec += r
        if d < 0:
            self.found[SUIT[c]] += 1
            self.foundb = None
        else:
            col = self.cols[d]
            col.append(c)
            self.where[c] = d
            if len(col) == 1:
                self.rootb = None
        return step

    def _f2c(self, suit: int, d: int) -> Step:
        self.found[suit] -= 1
        self.foundb = None
        c = suit * 13 + self.found[suit]
        col = self.cols[d]
        col.append(c)
        self.where[c] = d
        if len(col) == 1:
            self.rootb = None
        return ("f", suit, d)

    def _undo_step(self, step: Step) -> None:
        kind: str = step[0]
        cols = self.cols
        s: int
        c: int
        d: int
        if kind == "m":
            s = step[1]
            d = step[2]
            n: int = step[3]
            if step[4]:  # a card was turned up
                self.down[s] += 1
                self.downb = None
                if self.down[s] == 1:
                    self.rootb = None
            dst = cols[d]
            run = dst[-n:]
            src = cols[s]
            src += run
            del dst[-n:]
            if not dst or len(src) == n:
                self.rootb = None
            where = self.where
            for c in run:
                where[c] = s
        elif kind == "h":
            s = step[1]
            c = step[2]
            if step[3]:  # a card was turned up
                self.down[s] += 1
                self.downb = None
                if self.down[s] == 1:
                    self.rootb = None
            src = cols[s]
            src.append(c)
            if len(src) == 1:
                self.rootb = None
            self.where[c] = s
            self.found[SUIT[c]] -= 1
            self.foundb = None
        elif kind == "w":
            c = step[1]
            d = step[2]
            self.p = step[4]
            self.rec = step[5]
            self.dk = step[6]
            self.deck.insert(step[3], c)
            if d < 0:
                self.found[SUIT[c]] -= 1
                self.foundb = None
            else:
                dst = cols[d]
                dst.pop()
                self.where[c] = -1
                if not dst:
                    self.rootb = None
        else:
            suit: int = step[1]
            d = step[2]
            dst = cols[d]
            self.where[dst.pop()] = -1
            self.found[suit] += 1
            self.foundb = None
            if not dst:
                self.rootb = None

    # ---- cards that can go home ---------------------------------------------------------
    def _autos(self, steps: Steps) -> None:
        """Play every safe card home (through its twin when covered), repeatedly."""
        found, where, cols = self.found, self.where, self.cols
        f2c = self.f2c
        again = True
        while again:
            again = False
            for suit in range(4):
                n = found[suit]
                if n == 13:
                    continue
                # the safe rules (docs/solver.md): n + 1 is the rank of the next card
                other = _other_colour(found, suit)
                if f2c:
                    if other < n or found[3 - suit] < n - 1:
                        continue
                elif n >= 2 and other < n:
                    continue
                c = suit * 13 + n
                s = where[c]
                if s < 0:
                    if self.park and c in self.dk:
                        # every deck card is reachable: play it home from there
                        steps.append(self._deck(self.dk.find(c), -1, 0))
                        again = True
                    continue
                col = cols[s]
                if col[-1] == c:  # uncovered: the common case
                    steps.append(self._home(s))
                    again = True
                    continue
                # covered: home through its twin if the twin is free (as in ``moves``)
                twin = TWIN[c]
                s2 = where[twin]
                if s2 < 0 or cols[s2][-1] != twin:
                    continue
                i = col.index(c)
                if i < self.down[s]:
                    continue
                steps.append(self._move(s, s2, len(col) - 1 - i))
                steps.append(self._home(s))
                again = True

    # ---- the deck -----------------------------------------------------------------------
    def _reachable(self) -> list[tuple[int, int]]:
        """(index, recycles needed 0/1) of every deck card that can become the waste top
        by drawing (and recycling once if needed), fewest recycles first."""
        n = len(self.deck)
        can_recycle = self.allowed is None or self.rec < self.allowed
        key = (n * 256 + self.p) * 2 + can_recycle
        found = self._reach_cache.get(key)
        if found is None:
            found = self._reach_cache[key] = self._reach(n, self.p, can_recycle)
        return found

    def _reach(self, n: int, p: int, can_recycle: bool) -> list[tuple[int, int]]:
        k = self.draw
        if not n:
            return []
        if k == 1 and can_recycle:
            return [(i, 0 if i >= p - 1 else 1) for i in range(n)]
        out = []
        seen = set()
        if p > 0:
            out.append((p - 1, 0))
            seen.add(p - 1)
        q = p
        while q < n:
            q = min(q + k, n)
            out.append((q - 1, 0))
            seen.add(q - 1)
        if can_recycle:
            q = 0
            while q < n:
                q = min(q + k, n)
                if q - 1 not in seen:
                    out.append((q - 1, 1))
        return out

    # ---- move generation ----------------------------------------------------------------
    def _deck_moves(self, out: list[SearchMove], target: list[int], empty: int) -> None:
        found, deck, any_empty = self.found, self.deck, self.any_empty
        for i, r in self._reachable():
            c = deck[i]
            if found[SUIT[c]] == RANK[c] - 1:
                out.append((DECK, i, -1, r))
            d = target[c]
            if d >= 0:
                out.append((DECK, i, d, r))
            elif empty >= 0 and (any_empty or RANK[c] == KING):
                out.append((DECK, i, empty, r))

    def moves(self) -> list[SearchMove]:
        cols, down, found = self.cols, self.down, self.found
        any_empty = self.any_empty
        target = [-1] * 52  # card -> one column whose top it fits (twins: alike), or -1
        empty = -1
        for d in range(7):
            col = cols[d]
            if col:
                # the two children of the top card (none on an Ace); the twin's are the same
                kids = HOLDS[col[-1]]
                if kids and target[kids[0]] < 0:
                    target[kids[0]] = d
                    target[kids[1]] = d
            elif empty < 0:
                empty = d
        homes: list[SearchMove] = []
        # (face-down cards under the run, move), most face-down cards first (``_by_down``)
        reveal: list[tuple[int, SearchMove]] = []
        others: list[SearchMove] = []
        where = self.where
        # an obligation keeps only some moves (the filters at the end): skip building the
        # others. A card obligation (Draw 1, unlimited passes) keeps the moves that put one
        # of ``only`` on a column, EMPTY_OB the moves into an empty column
        ob = self.ob
        only = HOLDS[ob] if 0 <= ob < EMPTY_OB else None
        to_empty = ob == EMPTY_OB
        for suit in range(4 if not to_empty else 0):
            n = found[suit]
            if n < 13:
                c = suit * 13 + n
                s = where[c]
                if s < 0:
                    continue
                col = cols[s]
                if col[-1] == c:
                    if only is None:
                        homes.append((HOME, s))
                    continue
                twin = TWIN[c]  # covered: through its free twin
                s2 = where[twin]
                if s2 >= 0 and cols[s2][-1] == twin:
                    i = col.index(c)
                    if i >= down[s]:
                        homes.append((SWAP_HOME, s, s2, len(col) - 1 - i))
        for s in range(7):
            col = cols[s]
            if not col:
                continue
            h = down[s]
            c = col[h]  # the root: on face-down cards, or the bottom of the column
            if only is not None and c not in only:
                continue
            d = target[c]
            if d >= 0:
                if to_empty:
                    pass  # onto a card, not into the empty column
                elif h:
                    _by_down(reveal, h, (MOVE, s, d, len(col) - h))
                else:
                    others.append((MOVE, s, d, len(col)))  # empties the column
            elif h and empty >= 0 and (any_empty or RANK[c] == KING):
                _by_down(reveal, h, (MOVE, s, empty, len(col) - h))
            if any_empty and empty >= 0:
                # a run off another card into an empty column makes a new root
                for i in range(h + 1, len(col)):
                    others.append((MOVE, s, empty, len(col) - i))
        deck_moves: list[SearchMove] = []
        if self.park:  # Draw 1, unlimited passes: every deck card is reachable
            dk = self.dk
            if only is None and not to_empty:
                for suit in range(4):
                    c = suit * 13 + found[suit]
                    if c in dk and found[suit] < 13:
                        deck_moves.append((DECK, dk.find(c), -1, 0))
            # a deck card put on a column must be covered at once (see _uses): only when
            # one of its children can come
            for d in range(7) if not to_empty else ():
                # the cards with a target, column by column (a twin's column: the first)
                col = cols[d]
                if not col:
                    continue
                kids = HOLDS[col[-1]]
                if not kids or target[kids[0]] != d:
                    continue
                for c in kids:
                    if (
                        c in dk
                        and (only is None or c in only)
                        and (not self.prune or self._child_available(c))
                    ):
                        deck_moves.append((DECK, dk.find(c), d, 0))
            if empty >= 0:
                candidates: Sequence[int] = range(52) if any_empty else KINGS
                if only is not None:  # (a child is never a King; ``only`` is sorted)
                    candidates = only if any_empty else ()
                for c in candidates:
                    if c in dk and target[c] < 0 and (not self.prune or self._child_available(c)):
                        deck_moves.append((DECK, dk.find(c), empty, 0))
        else:
            self._deck_moves(deck_moves, target, empty)
        if self.f2c:
            for suit in range(4):
                n = found[suit]
                if n:
                    c = suit * 13 + n - 1
                    if only is not None and c not in only:
                        continue
                    d = target[c]
                    if to_empty and d >= 0:
                        continue
                    if d < 0:
                        if empty < 0 or not (any_empty or n == KING):
                            continue
                        d = empty
                    # never for a card the safe rule would send straight back home
                    if _other_colour(found, suit) >= n - 1 and found[3 - suit] >= n - 2:
                        continue
                    others.append((FOUND, suit, d))
        rng = self.rng
        if rng is not None:  # a random order (the restarts): homes first, then the moves
            # that turn a face-down card and the deck cards, each group shuffled, in a
            # random order of the two, then the rest
            shuffled = [m for _, m in reveal]
            _shuffle(rng, shuffled)
            _shuffle(rng, deck_moves)
            if rng.random() < 0.5:
                out = homes + shuffled + deck_moves + others
            else:
                out = homes + deck_moves + shuffled + others
        elif self.deck_first:
            out = homes + deck_moves + [m for _, m in reveal] + others
        else:
            out = homes + [m for _, m in reveal] + deck_moves + others
        if ob >= 0:
            if ob == EMPTY_OB:
                cols = self.cols
                return [
                    m for m in out if m[0] in (MOVE, DECK, FOUND) and m[2] >= 0 and not cols[m[2]]
                ]
            return self._uses(out, HOLDS[ob])
        return out

    def _child_available(self, c: int) -> bool:
        """Whether a child of ``c`` could be put on it by the next move: a root run
        headed by it, a deck card, a foundation's top card, or a child lying on c's twin
        while the twin can go home (the composite move)."""
        where, cols, down, found = self.where, self.cols, self.down, self.found
        for y in HOLDS[c]:
            s = where[y]
            if s >= 0:
                i = cols[s].index(y)
                if i == down[s]:
                    return True
                if i > down[s]:
                    t = TWIN[c]
                    if found[SUIT[t]] == RANK[t] - 1:
                        return True
            elif y in self.dk or (found[SUIT[y]] == RANK[y] and self.f2c):
                return True
        return False

    def _uses(self, out: list[SearchMove], children: tuple[int, ...]) -> list[SearchMove]:
        """The moves of ``out`` that put one of ``children`` on a column."""
        cols, deck = self.cols, self.deck
        keep = []
        for m in out:
            kind = m[0]
            if kind == MOVE:
                s = m[1]
                col = cols[s]
                if col[len(col) - m[3]] in children and cols[m[2]]:
                    keep.append(m)
            elif kind == SWAP_HOME:
                col = cols[m[1]]
                if col[len(col) - m[3]] in children:
                    keep.append(m)
            elif kind == DECK:
                if m[2] >= 0 and deck[m[1]] in children:
                    keep.append(m)
            elif kind == FOUND and m[1] * 13 + self.found[m[1]] - 1 in children:
                keep.append(m)
        return keep

    # ---- make / unmake ------------------------------------------------------------------
    def do(self, m: SearchMove) -> Steps:
        kind = m[0]
        steps: list[Any]  # Steps, its first item a Step (read below)
        if kind == MOVE:
            steps = [self._move(m[1], m[2], m[3])]
            emptied = not self.cols[m[1]]
        elif kind == HOME:
            steps = [self._home(m[1])]
        elif kind == SWAP_HOME:
            steps = [self._move(m[1], m[2], m[3]), self._home(m[1])]
        elif kind == DECK:
            steps = [self._deck(m[1], m[2], m[3])]
        else:
            steps = [self._f2c(m[1], m[2])]
        steps.append(self.ob)  # restored by undo
        self.ob = -1
        if kind == DECK and self.park and m[2] >= 0:
            self.ob = steps[0][1]
        elif kind == MOVE and emptied and self.cols[m[2]] and len(self.cols[m[2]]) > m[3]:
            self.ob = EMPTY_OB  # a root moved onto another card, emptying its column
        # safe cards home: the position before had none left to play (``_autos`` ran
        # after every move), so after a move that leaves the foundations alone only a
        # card it uncovered or put down (x) can be one, or free a covered one (x's twin)
        if kind == MOVE or (kind == DECK and m[2] >= 0):
            col = self.cols[m[1] if kind == MOVE else m[2]]
            if col:
                x = col[-1]
                r = RANK[x] - 1
                found = self.found
                if found[SUIT[x]] == r or found[3 - SUIT[x]] == r:
                    self._autos(steps)
        else:
            self._autos(steps)
        if (len(steps) > 2 or not self.prune) and self.ob >= 0:
            self.ob = -1  # a safe move home followed: no obligation (fewer restrictions)
        return steps

    def undo(self, steps: Steps) -> None:
        step: Any  # a Step or an int (mypy does not narrow ``type(step) is int``'s else)
        for step in reversed(steps):
            if type(step) is int:
                self.ob = step
            else:
                self._undo_step(step)

    # ---- pointer dominance (docs/solver.md, "Pointer dominance") -------------------------
    def _dominated(self, key: bytes, ob: int) -> Node | None:
        """A position that reaches this one by drawing alone (the same key with pointer
        q - k, q - 2k, ... and the same recycles used) already seen with no obligation
        or with ``ob`` (as its node: the key, or (key, ob)); None if there is none."""
        q = key[-1]
        k = self.draw
        if self.cycle:
            if not q:
                return None  # the cycle: its dominators were marked (see ``_mark``)
            low = 1  # pointer 0 is on the cycle, which never reaches q
        else:
            low = 0
        p = q - k
        if p < low:
            return None
        seen = self.seen
        base = key[:-1]
        tries = 0
        while p >= low and tries < 8:
            other = base + _BYTE[p]
            old = seen.get(other)
            if old is not None:
                if old == -1:
                    return other
                if old == ob or (type(old) is set and ob in old):
                    return other if ob == -1 else (other, ob)
            p -= k
            tries += 1
        return None

    def _mark(self, key: bytes, ob: int) -> Node | None:
        """Record (key, ob) as dominated by a position seen (same rule as a visit); its
        node if it was not recorded yet, else None."""
        seen = self.seen
        old = seen.get(key)
        if old is None:
            seen[key] = ob
        elif old == -1 or old == ob or (type(old) is set and ob in old):
            return None
        elif ob == -1:
            seen[key] = -1
        elif type(old) is set:
            old.add(ob)
        else:
            seen[key] = {cast(int, old), ob}
        return key if ob == -1 else (key, ob)

    # ---- a proof of loss from the face-down cards alone ---------------------------------
    def _deadlocked(self) -> bool:
        """Whether some cards can never leave their columns (docs/solver.md, "Deadlocked
        face-down cards"): a set S of non-King cards, each face down or the face-up card
        lying on face-down cards, such that every way out of each member (home: every
        lower card of its suit home; onto a parent: a parent uncovered) needs a card that
        lies beneath some member of S. Only with the Kings-only empty column rule."""
        if self.any_empty:
            return False
        cols, down, found = self.cols, self.down, self.found
        pos: dict[int, tuple[int, int]] = {}  # card -> (column, index) in a locked part
        members: dict[int, tuple[int, int]] = {}
        for s in range(7):
            d = down[s]
            if d:
                col = cols[s]
                for i in range(d + 1):
                    c = col[i]
                    pos[c] = (s, i)
                    if RANK[c] != KING:
                        members[c] = (s, i)
        changed = True
        while changed and members:
            changed = False
            top = [-1] * 7
            for s, i in members.values():
                if i > top[s]:
                    top[s] = i

            # a locked card lies beneath a member (or is home for good)
            locked = {c for c, (s, i) in pos.items() if i < top[s]}
            if not self.f2c:  # home with foundation to column forbidden: gone for good
                locked.update(suit * 13 + r for suit in range(4) for r in range(found[suit]))
            for c in list(members):
                suit = SUIT[c]
                if any(suit * 13 + r in locked for r in range(found[suit], RANK[c] - 1)) and all(
                    y in locked for y in PARENTS[c]
                ):
                    continue
                del members[c]
                changed = True
        return bool(members)

    # ---- the Draw 1 relaxation ----------------------------------------------------------
    def _relaxed_key(self, key: bytes) -> bytes:
        """The position's key in Draw 1 with unlimited passes: no recycles used, pointer 0."""
        return key[:11] + b"\x00" + key[12:-1] + b"\x00" if self.use_rec else key[:-1] + b"\x00"

    def _relaxed_lost(self, rk: bytes, relax: Relaxation, budget: int) -> bool:
        """Whether this position (its Draw 1 key ``rk``, not proven lost yet) is lost even
        in Draw 1 with unlimited passes (same tableau, foundations, deck, empty column and
        foundation rules): every line of the real game is a line there (docs/solver.md,
        "The Draw 1 relaxation"). Decided by a small Draw 1 search; False when it finds a
        win or runs out of ``budget`` positions."""
        if rk in relax.won:
            return False
        sub = Search(
            self.cols,
            self.down,
            self.found,
            self.deck,
            0,
            0,
            draw=1,
            recycles_allowed=None,
            any_empty=self.any_empty,
            foundation_to_column=self.f2c,
            lost=relax.lost,
            deadlock_test=False,  # made at the start of the search, not worth repeating
            won=relax.won,
        )
        result = sub.advance(budget)
        self.relaxed_states += sub.states
        if result is None:
            return False
        if result:
            relax.won.add(rk)
            sub.unwind(relax.won)  # every position of the line is won too
            return False
        relax.lost.add(rk)
        return True

    def unwind(self, won: set[bytes]) -> None:
        """After a win: add the key of every position of the line to ``won``, undoing the
        line back to the start (the search is over)."""
        for steps in reversed(self.path):
            won.add(self.key())
            self.undo(steps)
        won.add(self.key())
        self.path = []

    # ---- the search ---------------------------------------------------------------------
    def _won(self) -> bool:
        """True when the game can surely be finished by playing cards home: no face-down
        card left and either no deck or a deck whose every card is always reachable."""
        if self.down != NO_DOWN:
            return False
        return not self.deck or (self.draw == 1 and self.allowed is None)

    def run(self) -> bool:
        """Depth-first search to the end. True: ``path`` is a list of step lists to a
        position that ``_won``; False: no win exists. Raises Budget when ``max_states``
        positions were searched first."""
        max_states = self.max_states
        while True:
            limit = 1024 if max_states is None else min(1024, max_states - self.states)
            if limit <= 0:
                raise Budget
            done = self.advance(limit)
            if done is not None:
                return done

    def advance(self, count: int) -> bool | None:
        """Search on for at most ``count`` more positions: True (won), False (proven
        lost) or None (not decided yet; call again to go on)."""
        seen = self.seen
        stack = self._stack
        # Tarjan's bookkeeping (docs/solver.md, "Sharing what is proven lost"): each
        # position on ``tstack`` (visited, its strongly connected component not complete)
        # has its visit number in ``idx``; each position on the search's stack has a
        # ``Frame``
        idx = self.idx
        tstack = self.tstack
        lost = self.lost
        if stack is None:  # the first call: the start position
            self._autos(self.start_steps)
            if self._won():
                return True
            if self.deadlock_test and self._deadlocked():
                return False  # docs/solver.md, "Deadlocked face-down cards"
            key = self.key()
            if key in lost:
                return False  # proven lost by another search sharing ``lost``
            seen[key] = -1
            idx[key] = 0
            tstack.append(key)
            stack = self._stack = [Frame(self.moves(), 0, 0, 0)]
        path = self.path
        states = self.states
        limit = states + count
        use_p, cycle = self.use_p and self.prune, self.cycle and self.prune
        use_rec = self.use_rec
        down = self.down
        deck_wins = self.draw == 1 and self.allowed is None  # every deck card reachable
        known_won = self.known_won
        relax = self.relaxation
        tester = relax if self.tests else None  # the relaxation, if this search tests
        visits = self.visits
        try:
            while stack:
                if states >= limit:
                    return None
                frame = stack[-1]
                moves = frame.moves
                i = frame.next
                if i == len(moves):
                    stack.pop()
                    low = frame.low
                    if low == frame.number:
                        # the root of a complete component: it and every position above it
                        # on tstack are lost (every move from them was tried, and led
                        # inside, to a lost position, or to one dominated by either)
                        top = frame.top
                        for node in tstack[top:]:
                            del idx[node]
                            if type(node) is bytes:
                                lost.add(node)
                        del tstack[top:]
                    elif stack and low < stack[-1].low:
                        stack[-1].low = low
                    if path:
                        self.undo(path.pop())
                    continue
                cost = states - frame.states
                if (
                    tester is not None
                    and cost >= frame.test
                    and self.fails <= FREE_FAILS + FAILS_PER_CUT * self.cuts
                ):
                    # this position's moves have cost many positions already: test it in
                    # the Draw 1 relaxation; if it is lost, so is every position searched
                    # from it and not finished yet (all reachable from it)
                    before = self.relaxed_states
                    rk = self._relaxed_key(self.key())
                    budget = min(TEST_RATIO * cost, TEST_MAX)
                    if rk in tester.lost or self._relaxed_lost(rk, tester, budget):
                        self.cuts += 1
                        stack.pop()
                        top = frame.top
                        for node in tstack[top:]:
                            del idx[node]
                            lost.add(node[0] if isinstance(node, tuple) else node)
                        del tstack[top:]
                        limit -= self.relaxed_states - before  # its positions count
                        if path:
                            self.undo(path.pop())
                        continue
                    limit -= self.relaxed_states - before  # its positions count
                    frame.test *= TEST_GROWTH
                    self.fails += 1
                frame.next = i + 1
                steps = self.do(moves[i])
                states += 1
                key = self.key()
                old = seen.get(key)
                ob = self.ob
                # explored (or being explored) with no obligation, or with this one: an
                # obligation only removes moves, so nothing new can come from here
                if old is not None and _covers(old, ob):
                    j = idx.get(key if ob == -1 or _covers(old, -1) else (key, ob))
                    if j is not None and j < frame.low:
                        frame.low = j
                    self.undo(steps)
                    continue
                if key in lost:  # proven lost (by this search or the other)
                    self.undo(steps)
                    continue
                if use_p:
                    dom = self._dominated(key, ob)
                    if dom is not None:
                        j = idx.get(dom)
                        if j is not None and j < frame.low:
                            frame.low = j
                        self.undo(steps)
                        continue
                if relax is not None:
                    # a Draw 1 key proven lost (by a test of either search's, or by the
                    # relaxation of the whole position): lost (``_relaxed_key``, inline)
                    if use_rec:
                        rk = key[:11] + b"\x00" + key[12:-1] + b"\x00"
                    else:
                        rk = key[:-1] + b"\x00"
                    if rk in relax.lost:
                        lost.add(key)
                        self.undo(steps)
                        continue
                if old is not None:
                    if ob == -1:
                        seen[key] = -1
                    elif type(old) is set:
                        old.add(ob)
                    else:
                        seen[key] = {cast(int, old), ob}
                else:
                    seen[key] = ob
                visits += 1
                number = visits
                node = key if ob == -1 else (key, ob)
                idx[node] = number
                top = len(tstack)
                tstack.append(node)
                if cycle and key[-1]:
                    # off the cycle: this position reaches its cycle position by drawing,
                    # so that one is dominated from now on (and lost if this one is)
                    mark = self._mark(key[:-1] + b"\x00", ob)
                    if mark is not None:
                        idx[mark] = number
                        tstack.append(mark)
                path.append(steps)
                if (down == NO_DOWN and (not self.deck or deck_wins)) or (
                    known_won is not None and key in known_won
                ):  # ``_won``, inline
                    return True
                stack.append(Frame(self.moves(), number, top, states))
            return False
        finally:
            self.states = states
            self.visits = visits


class Frame:
    """A position on the search's stack: its moves, the next to try, its visit number and
    the lowest visit number it reaches (Tarjan), the length of ``tstack`` at its visit,
    the positions searched before it, and the cost of its moves that makes its next
    Draw 1 relaxation test."""

    __slots__ = ("low", "moves", "next", "number", "states", "test", "top")

    def __init__(self, moves: list[SearchMove], number: int, top: int, states: int) -> None:
        self.moves = moves
        self.next = 0
        self.number = number
        self.low = number
        self.top = top
        self.states = states
        self.test = TEST_AFTER


class Restarts:
    """Short searches of one position in random move orders, a new one (seed 0, 1, 2,
    ...) at each ``advance``: how soon a depth-first search finds a win depends on its
    move order, and a win that the fixed orders miss for millions of positions is often
    found by some random order within hundreds. Each is a complete search of the same
    graph, so it shares ``lost`` with the others, and one that finishes proves a loss."""

    def __init__(self, make: Callable[[int], Search]) -> None:
        self.make = make  # seed -> a new Search
        self.tried = 0
        self.states = 0
        self.relaxed_states = 0
        self.search: Search | None = None

    def advance(self, count: int) -> bool | None:
        self.search = search = self.make(self.tried)
        self.tried += 1
        try:
            return search.advance(count)
        finally:
            self.states += search.states

    @property
    def path(self) -> list[Steps]:
        assert self.search is not None  # read after an advance
        return self.search.path

    @property
    def start_steps(self) -> Steps:
        assert self.search is not None
        return self.search.start_steps


def _other_colour(found: list[int], suit: int) -> int:
    """The lower foundation of the other colour's two suits."""
    if suit == 0 or suit == 3:
        a, b = found[1], found[2]
    else:
        a, b = found[0], found[3]
    return a if a < b else b


def _covers(old: int | set[int], ob: int) -> bool:
    """Whether a position seen with ``old`` (its obligation, -1 for none, or a set of
    them) was seen with no obligation or with ``ob``."""
    if isinstance(old, int):
        return old == -1 or old == ob
    return ob in old


def _shuffle(rng: Random, items: list[Any]) -> None:
    """``rng.shuffle(items)``, the same permutation from the same state (CPython's
    Fisher-Yates over ``getrandbits``), written here so that the search does not depend
    on how a Python version shuffles (csearch.c does the same over its own twister)."""
    for i in range(len(items) - 1, 0, -1):
        n = i + 1
        k = n.bit_length()
        j = rng.getrandbits(k)
        while j >= n:
            j = rng.getrandbits(k)
        items[i], items[j] = items[j], items[i]


def _by_down(reveal: list[tuple[int, SearchMove]], h: int, move: SearchMove) -> None:
    """Add (h, move) to ``reveal`` after every item with h or more face-down cards and
    before those with fewer (a stable sort by face-down cards, most first)."""
    i = len(reveal)
    while i and reveal[i - 1][0] < h:
        i -= 1
    reveal.insert(i, (h, move))
