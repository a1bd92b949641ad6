"""board_view carries the rules' flags (over, auto-complete and its next move), so that a
client holds no rules of its own."""

from __future__ import annotations

import pytest

from klondike_race.engine import (
    PLAYING,
    RESIGNED,
    STUCK,
    WON,
    Game,
    Move,
    Settings,
    board_view,
    progress,
)
from tests.engine.helpers import position

BOARD_KEYS = {
    "columns",
    "stock",
    "waste",
    "foundations",
    "recycles",
    "passes_left",
    "autocomplete",
    "autocomplete_next",
    "can_undo",
    "over",
}
ALL_UP = ["Kc Qd Jc", "Kd Qc Jd", "Kh Qs Jh", "Ks Qh Js"]
# Seven columns whose tops fit nowhere (no 3s, 5s or 7s for them, no Aces), no empty column.
DEAD = ["| 2c", "| 2d", "| 2h", "| 2s", "| 4c", "| 4d", "| 6h"]


def test_the_board_keys() -> None:
    game = Game.from_seed(42)
    assert set(board_view(game)) == BOARD_KEYS | set(progress(game))
    assert not BOARD_KEYS & set(progress(game))


def won(settings: Settings) -> Game:
    game = position(["| Ks"], found=(13, 13, 13, 12), settings=settings)
    game.play("1>s")
    return game


def stuck(settings: Settings) -> Game:
    return position(DEAD, stock="Kh Ks 9c", fill=7, settings=settings)


def resigned(settings: Settings) -> Game:
    game = position(ALL_UP, found=(10, 10, 10, 10), settings=settings)
    game.resign()
    return game


@pytest.mark.parametrize(
    ("make", "undo", "status", "over"),
    [
        (won, False, WON, True),
        (won, True, WON, True),
        (stuck, False, STUCK, True),
        (stuck, True, STUCK, False),  # it may still undo (or draw on)
        (resigned, False, RESIGNED, True),
        (resigned, True, RESIGNED, True),
        (lambda s: Game.from_seed(42, s), False, PLAYING, False),
    ],
)
def test_over(make, undo: bool, status: str, over: bool) -> None:
    game = make(Settings(undo=undo))
    view = board_view(game)
    assert (view["status"], view["over"]) == (status, over)
    assert view["over"] is game.over


@pytest.mark.parametrize("draw", [1, 3])
def test_autocomplete_next_is_the_engines_next_move_and_legal(draw: int) -> None:
    game = position(ALL_UP, found=(10, 10, 10, 10), settings=Settings(draw=draw))
    played = 0
    while game.status != WON:
        view = board_view(game)
        assert view["autocomplete"] is True
        first = game.autocomplete_moves()[0]
        assert view["autocomplete_next"] == first.to_wire()
        wire = view["autocomplete_next"]
        assert set(wire) == {"from", "to", "count"}
        move = Move.from_wire(wire["from"], wire["to"], wire["count"])
        assert game.play(move) == first  # a legal, checked move
        played += 1
    assert played == 12
    view = board_view(game)
    assert (view["autocomplete"], view["autocomplete_next"], view["over"]) == (False, None, True)


@pytest.mark.parametrize(
    "layout",
    [
        dict(columns=[*ALL_UP[:3], "Ks Qh | Js"], found=(10, 10, 10, 10)),  # one face down
        dict(columns=[*ALL_UP[:3], "Ks Qh"], stock="Js", found=(10, 10, 10, 10)),
        dict(columns=[*ALL_UP[:3], "Ks Qh"], waste="Js", found=(10, 10, 10, 10)),
    ],
)
def test_no_autocomplete_next_when_autocomplete_is_not_available(layout) -> None:
    view = board_view(position(**layout))
    assert (view["autocomplete"], view["autocomplete_next"]) == (False, None)
    assert view["over"] is False


def test_no_autocomplete_next_after_resigning() -> None:
    view = board_view(resigned(Settings()))
    assert (view["autocomplete"], view["autocomplete_next"], view["over"]) == (False, None, True)


def test_a_fresh_deal_offers_no_autocomplete() -> None:
    view = board_view(Game.from_seed(7))
    assert (view["autocomplete"], view["autocomplete_next"], view["over"]) == (False, None, False)
