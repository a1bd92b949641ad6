"""Helpers for the engine tests: position builders, snapshots and an independent oracle.

``position(...)`` builds a Game in an explicit edge position by writing the game's
public lists directly (the engine has no position parser, and many edge cases -- one card
left in the stock, a nearly won game, a stuck position -- are far from any real deal).
It keeps positions legal: every one of the 52 cards is in exactly one pile, face-down
cards sit only at the bottom of columns, the face-up part of each column is a run, and a
foundation holding ``n`` cards holds its suit's Ace to rank ``n``. Cards a test does not
mention are put face down at the bottom of column ``fill`` (1-based), so a test only
spells out the cards it is about.

``crafted_deal(...)`` builds an explicit 52-card deal (Deal.from_cards) from a layout, for
tests that want a real game from move 0 (so records replay it).

``snapshot(game)`` is everything a Game holds, as plain values, to show that a refused
move changed nothing.

``reference_*`` re-implement docs/rules.md naively and independently of game.py (no shared
tables), as an oracle for legal_moves() and the stuck status in the property tests.
"""

from __future__ import annotations

import itertools
from collections.abc import Iterable

import pytest

from klondike_race.engine import (
    CARDS,
    DRAW_MOVE,
    FOUND0,
    NAMES,
    RECYCLE_MOVE,
    STUCK,
    UNLIMITED,
    WON,
    Deal,
    Game,
    IllegalMove,
    Move,
    Settings,
    parse_card,
)

RANKS = "A23456789TJQK"
SUITS = "cdhs"


def rank(card: int) -> int:
    """Rank 1-13 from the card's name (independent of the engine's tables)."""
    return RANKS.index(NAMES[card][0]) + 1


def suit(card: int) -> int:
    return SUITS.index(NAMES[card][1])


def red(card: int) -> bool:
    return NAMES[card][1] in "dh"


def cards(text: str) -> list[int]:
    """``'Kh Qs Jh'`` -> the cards, in the order written."""
    return [parse_card(t) for t in text.split()]


def names(seq: Iterable[int]) -> list[str]:
    return [NAMES[c] for c in seq]


def builds_on(lower: int, upper: int) -> bool:
    """``lower`` may lie on ``upper`` in a column: one rank lower, the other colour."""
    return rank(lower) == rank(upper) - 1 and red(lower) != red(upper)


def is_run(seq: list[int]) -> bool:
    return all(builds_on(b, a) for a, b in itertools.pairwise(seq))


def position(
    columns: Iterable[str] = (),
    *,
    stock: str = "",
    waste: str = "",
    found: tuple[int, int, int, int] = (0, 0, 0, 0),
    settings: Settings | None = None,
    fill: int | None = None,
    fan: int | None = None,
    score: int | None = None,
    recycles: int = 0,
) -> Game:
    """A game in an explicit position.

    ``columns``: up to 7 strings, bottom card first; cards before ``|`` are face down,
    cards after it face up (no ``|``: all face up). Missing columns are empty.
    ``stock``: the stock, first card to be turned first. ``waste``: bottom first, top last.
    ``found``: cards on the c, d, h, s foundations. ``fill``: column (1-7) whose bottom
    takes every card not mentioned, face down. ``fan``: cards of the latest draw still on
    the waste (default: 1 if the waste is not empty). ``score``: the score to start from
    (default: the settings' starting score). ``recycles``: recycles already made.
    """
    settings = settings or Settings()
    game = Game(Deal.from_seed("helpers"), settings)
    cols: list[list[int]] = []
    downs: list[int] = []
    for text in columns:
        down_text, _sep, up_text = text.rpartition("|")
        down, up = cards(down_text), cards(up_text)
        assert up or not down, f"a column with face-down cards needs a face-up top: {text!r}"
        assert is_run(up), f"face-up cards must form a run: {text!r}"
        cols.append(down + up)
        downs.append(len(down))
    assert len(cols) <= 7
    while len(cols) < 7:
        cols.append([])
        downs.append(0)
    on_found = [s * 13 + r for s in range(4) for r in range(found[s])]
    placed = [c for col in cols for c in col] + cards(stock) + cards(waste) + on_found
    assert len(placed) == len(set(placed)), "a card appears twice"
    missing = sorted(set(range(52)) - set(placed))
    if missing:
        assert fill is not None, f"cards not placed: {names(missing)}"
        col = cols[fill - 1]
        assert col, "fill a column that has a face-up card"
        cols[fill - 1] = missing + col
        downs[fill - 1] += len(missing)
    game.columns = cols
    game.down = downs
    game.stock = list(reversed(cards(stock)))
    game.waste = cards(waste)
    game.found = list(found)
    game.found_count = sum(found)
    game.fan = (1 if game.waste else 0) if fan is None else fan
    game.recycles = recycles
    if score is not None:
        game.score = score
    game._stuck = None  # the status cache of the position the Game was built with
    check_invariants(game)
    return game


def crafted_deal(columns: list[str], stock: str) -> Deal:
    """An explicit deal from its layout: 7 columns (column c holds c cards, bottom first,
    as tests/data/README.md lays them out) and 24 stock cards, first turned first."""
    layout = [cards(text) for text in columns]
    assert [len(col) for col in layout] == list(range(1, 8))
    order: list[int | None] = [None] * 52
    for c in range(1, 8):
        for r in range(1, c + 1):
            order[(r - 1) * (16 - r) // 2 + (c - r)] = layout[c - 1][r - 1]
    order[28:] = cards(stock)
    assert None not in order and len(order) == 52
    return Deal.from_cards(names(order))  # type: ignore[arg-type]


def board(game: Game) -> tuple:
    """The position only: where every card lies and which are face up."""
    return (
        [col[:] for col in game.columns],
        game.down[:],
        game.stock[:],
        game.waste[:],
        game.found[:],
        game.recycles,
    )


def snapshot(game: Game) -> tuple:
    """Everything a Game holds, copied, so a later change cannot alias it: ``board(game)``
    (six items), then fan, moves, score, and the rest."""
    return (
        *board(game),
        game.fan,
        game.moves,
        game.score,
        game.found_count,
        game.reached_moves,
        game.reached_ms,
        game.ended,
        game.log[:],
        game.times[:],
        repr(game.history),
        game.status,
        game.settings,
        game.deal,
    )


def hidden_cards(game: Game) -> set[int]:
    """Cards nobody may see: face down in a column, or in the stock."""
    out = set(game.stock)
    for col, down in zip(game.columns, game.down, strict=True):
        out.update(col[:down])
    return out


def check_invariants(game: Game) -> None:
    """The position is a legal Klondike position and the counters agree with it."""
    everything = [c for col in game.columns for c in col] + game.stock + game.waste
    everything += [s * 13 + r for s in range(4) for r in range(game.found[s])]
    assert sorted(everything) == list(range(52)), "52 distinct cards"
    for col, down in zip(game.columns, game.down, strict=True):
        assert 0 <= down <= len(col)
        assert down < len(col) or not col, "a column's top card is face up"
        assert is_run(col[down:]), f"face-up run {names(col[down:])}"
    assert all(0 <= n <= 13 for n in game.found)
    assert game.found_count == sum(game.found)
    assert game.moves == len(game.log) == len(game.times)
    assert 0 <= game.fan <= min(game.settings.draw, len(game.waste))


# ---- an independent oracle ---------------------------------------------------------------
def _fits_column(card: int, col: list[int], empty: str) -> bool:
    if col:
        return builds_on(card, col[-1])
    return empty == "any" or rank(card) == 13


def _fits_foundation(card: int, found: list[int]) -> bool:
    return found[suit(card)] == rank(card) - 1


def reference_card_moves(game: Game, relocations: bool = True) -> set[Move]:
    """Every card move docs/rules.md allows, found by trying every source, count and target.
    With ``relocations`` False, leave out carrying a whole column (nothing under it) into
    an empty column: it changes nothing (this follows game.py's reading of "stuck")."""
    out: set[Move] = set()
    empty = game.settings.empty
    cols = game.columns
    for s, col in enumerate(cols):
        up = len(col) - game.down[s]
        for n in range(1, up + 1):
            run = col[-n:]
            if not is_run(run):
                continue
            for d, target in enumerate(cols):
                if d == s or not _fits_column(run[0], target, empty):
                    continue
                if not relocations and not target and n == len(col):
                    continue
                out.add(Move(CARDS, s, d, n))
        if col and _fits_foundation(col[-1], game.found):
            out.add(Move(CARDS, s, FOUND0 + suit(col[-1]), 1))
    if game.waste:
        top = game.waste[-1]
        for d, target in enumerate(cols):
            if _fits_column(top, target, empty):
                out.add(Move(CARDS, 7, d, 1))
        if _fits_foundation(top, game.found):
            out.add(Move(CARDS, 7, FOUND0 + suit(top), 1))
    if game.settings.foundation_to_column:
        for s in range(4):
            if game.found[s]:
                top = s * 13 + game.found[s] - 1
                for d, target in enumerate(cols):
                    if _fits_column(top, target, empty):
                        out.add(Move(CARDS, FOUND0 + s, d, 1))
    return out


def _recycle_allowed(settings: Settings, recycles: int) -> bool:
    return settings.passes == UNLIMITED or recycles < settings.passes - 1


def reference_stuck(game: Game) -> bool:
    """docs/rules.md's stuck, by brute force: no card move now (whole-column relocations
    aside), and none of the waste tops that any sequence of draws and recycles through
    the remaining passes would show can be played anywhere."""
    if reference_card_moves(game, relocations=False):
        return False
    settings = game.settings
    draw = settings.draw
    tops = [col[-1] if col else None for col in game.columns]

    def playable(card: int) -> bool:
        if _fits_foundation(card, game.found):
            return True
        for top in tops:
            if top is None:
                if settings.empty == "any" or rank(card) == 13:
                    return True
            elif builds_on(card, top):
                return True
        return False

    unlimited = settings.passes == UNLIMITED
    start = (tuple(game.stock), tuple(game.waste), 0 if unlimited else game.recycles)
    seen = {start}
    todo = [start]
    while todo:
        stock, waste, recycles = todo.pop()
        if waste and playable(waste[-1]):
            return False
        if stock:
            k = min(draw, len(stock))
            nxt = (stock[:-k], waste + tuple(reversed(stock[-k:])), recycles)
        elif waste and _recycle_allowed(settings, recycles):
            nxt = (tuple(reversed(waste)), (), recycles if unlimited else recycles + 1)
        else:
            continue
        if nxt not in seen:
            seen.add(nxt)
            todo.append(nxt)
    return True


def reference_legal_moves(game: Game) -> set[Move]:
    """What legal_moves() must return (undo aside), from the oracle alone."""
    if game.found_count == 52 or game.ended is not None:
        return set()
    if game.history is None and reference_stuck(game):
        return set()
    out = reference_card_moves(game)
    if game.stock:
        out.add(DRAW_MOVE)
    elif game.waste and _recycle_allowed(game.settings, game.recycles):
        out.add(RECYCLE_MOVE)
    return out


def reference_status(game: Game) -> str:
    if game.found_count == 52:
        return WON
    if game.ended is not None:
        return game.ended
    return STUCK if reference_stuck(game) else "playing"


def refused(game: Game, move: Move | str, reason: str) -> None:
    """``move`` is refused with ``reason`` and the game is exactly as before."""
    before = snapshot(game)
    with pytest.raises(IllegalMove) as err:
        game.play(move)
    assert err.value.reason == reason
    assert snapshot(game) == before
