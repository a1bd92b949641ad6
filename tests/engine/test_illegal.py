"""Every IllegalMove reason errors.py lists, each shown to change nothing at all."""

from __future__ import annotations

import re
from collections.abc import Callable

import pytest

from klondike_race.engine import (
    BEST,
    CARDS,
    DRAW,
    RECYCLE,
    STOCK,
    UNDO,
    WASTE,
    Game,
    IllegalMove,
    Move,
    NotationError,
    Settings,
    errors,
)
from tests.engine.helpers import position, snapshot

UNDO_ON = Settings(undo=True)
NO_F2C = Settings(foundation_to_column=False)


def playing(**kw) -> Game:
    """Column 1 a two-card run over a face-down card, 2 empty, 3 Td, 4 a King; hearts
    holds Ah-5h; the waste shows 9c over 4s; 2d is left in the stock."""
    return position(
        ["3c | 7s 6h", "", "| Td", "| Kc"],
        waste="4s 9c",
        stock="2d",
        found=(0, 0, 5, 0),
        fill=4,
        **kw,
    )


def broken_run() -> Game:
    """A position no legal play reaches: 6h lies on 7h in column 1 (same colour). Only a
    corrupted game could hold it; the checked API still refuses to move it as a run."""
    game = playing()
    game.columns[0][-2:] = [2 * 13 + 6, 2 * 13 + 5]  # 7h, 6h
    return game


def won() -> Game:
    game = position(["| Ks"], found=(13, 13, 13, 12), settings=UNDO_ON)
    game.play("1>s")
    return game


def resigned() -> Game:
    game = playing(settings=UNDO_ON)
    game.resign()
    return game


def timed_out() -> Game:
    game = playing()
    game.time_out()
    return game


def stuck() -> Game:
    return position(["| 2c", "| 2d", "| 2h", "| 2s", "| 4c", "| 4d", "| 6h"], stock="Kh", fill=7)


def drawn_out() -> Game:
    game = playing(settings=Settings(passes=1))
    game.play("d")
    return game


def drawn() -> Game:
    game = playing(settings=UNDO_ON)
    game.play("d")
    return game


def undo_used() -> Game:
    game = playing(settings=UNDO_ON)
    game.play("d")
    game.play("u")
    return game


CASES: list[tuple[str, Callable[[], Game], Move | str]] = [
    ("game_over", won, "d"),
    ("game_over", won, "u"),
    ("game_over", resigned, "w>3"),
    ("game_over", resigned, "u"),
    ("game_over", timed_out, "d"),
    ("game_over", stuck, "d"),
    ("bad_count", playing, "w>3x2"),
    ("bad_count", playing, "h>4x2"),
    ("bad_count", playing, "1>sx2"),
    ("bad_count", playing, Move(DRAW, STOCK, WASTE, 1)),
    ("bad_count", drawn, Move(RECYCLE, WASTE, STOCK, 3)),
    ("bad_count", drawn, Move(UNDO, STOCK, STOCK, 1)),
    ("same_pile", playing, "1>1"),
    ("same_pile", playing, "w>w"),
    ("same_pile", playing, "h>h"),
    ("empty_source", playing, "2>3"),
    ("empty_source", playing, "c>2"),
    ("empty_source", lambda: position(["| Td"], stock="Kd", fill=1), "w>1"),
    ("card_not_available", playing, "1>3x3"),
    ("card_not_available", playing, Move(CARDS, 0, 2, 0)),
    ("not_a_run", broken_run, "1>4x2"),
    ("illegal_target", playing, "1>3"),  # 6h onto Td
    ("illegal_target", playing, "w>1"),  # 9c onto 6h
    ("illegal_target", playing, "w>c"),
    ("illegal_target", playing, "1>c"),  # 6h onto clubs
    ("illegal_target", playing, "3>h"),  # Td onto 5h
    ("kings_only", playing, "1>2x2"),
    ("kings_only", playing, "w>2"),
    ("kings_only", playing, "h>2"),
    ("no_target", playing, Move(CARDS, 2, BEST, 1)),  # Td: no black J on top, not home
    ("foundation_to_column_forbidden", lambda: playing(settings=NO_F2C), "h>4"),
    ("stock_empty", drawn_out, "d"),
    ("stock_not_empty", playing, "r"),
    ("waste_empty", lambda: position(["| Td", "| 9c"], fill=1), "r"),
    ("passes_exhausted", drawn_out, "r"),
    ("undo_disabled", playing, "u"),
    ("nothing_to_undo", undo_used, "u"),
    ("nothing_to_undo", lambda: playing(settings=UNDO_ON), "u"),
    ("not_supported", playing, "1>w"),
    ("not_supported", playing, "h>c"),
    ("not_supported", playing, "h>w"),
    ("not_supported", playing, Move(CARDS, STOCK, 0, 1)),
    ("not_supported", playing, Move(CARDS, 0, STOCK, 1)),
    ("not_supported", playing, Move(CARDS, 0, 15, 1)),
    ("not_supported", playing, Move(CARDS, -1, 0, 1)),
    ("not_supported", playing, Move(7, 0, 0, 0)),
]


@pytest.mark.parametrize(
    ("reason", "build", "move"), CASES, ids=[f"{r}-{i}" for i, (r, _, _) in enumerate(CASES)]
)
def test_refused_with_its_reason_and_nothing_changes(reason, build, move) -> None:
    game = build()
    before = snapshot(game)
    with pytest.raises(IllegalMove) as err:
        game.play(move, at_ms=999)
    assert err.value.reason == reason, str(err.value)
    assert str(err.value)  # a message for people too
    assert snapshot(game) == before
    with pytest.raises(IllegalMove):
        game.check(move)
    if isinstance(move, str):
        move = Move.parse(move)
    assert move not in game.legal_moves()


def test_every_documented_reason_is_shown() -> None:
    documented = set(re.findall(r"^    ``(\w+)``", errors.__doc__ or "", re.M))
    documented -= {"bad_card", "bad_move", "bad_pile", "bad_setting", "bad_deal", "bad_record"}
    assert len(documented) >= 15
    assert documented == {reason for reason, _, _ in CASES}


def test_text_that_is_not_a_move_raises_notation_error_and_changes_nothing() -> None:
    game = playing()
    before = snapshot(game)
    for text in ["", "x", "w>", "9>1", "1>8", "f>1", "1>2x0", "1>2x", "draw", None, 3]:
        with pytest.raises(NotationError) as err:
            game.play(text)  # type: ignore[arg-type]
        assert err.value.reason == "bad_move"
    assert snapshot(game) == before


@pytest.mark.parametrize(
    ("move", "words"),
    [
        ("w>c", "9c cannot go home yet: the clubs foundation holds 0 cards"),
        ("1>c", "6h goes only on the hearts foundation"),
    ],
)
def test_a_foundation_is_named_by_its_suit_in_words(move, words) -> None:
    """The messages clients show as they are: "the clubs foundation", not "the c
    foundation" (found by an outside tester)."""
    with pytest.raises(IllegalMove) as err:
        playing().play(move)
    assert str(err.value) == words
