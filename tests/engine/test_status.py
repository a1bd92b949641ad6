"""End of a game: won, auto-complete, stuck (as docs/rules.md defines it), resign, time out."""

from __future__ import annotations

import pytest

from klondike_race.engine import (
    OUT_OF_TIME,
    PLAYING,
    RESIGNED,
    STUCK,
    WON,
    Game,
    IllegalMove,
    Settings,
    board_view,
    game_over,
)
from tests.engine.helpers import board, check_invariants, position, reference_stuck, snapshot


def refused(game: Game, move: str, reason: str) -> None:
    before = snapshot(game)
    with pytest.raises(IllegalMove) as err:
        game.play(move)
    assert err.value.reason == reason
    assert snapshot(game) == before


# ---- won ---------------------------------------------------------------------------------
def test_won_when_all_52_are_home() -> None:
    game = position(["| Ks"], found=(13, 13, 13, 12))
    assert game.status == PLAYING
    game.play("1>s", at_ms=4321)
    assert game.status == WON and game.found_count == 52 and game.over
    assert game.reached_moves == 1 and game.reached_ms == 4321
    assert game.legal_moves() == []
    assert not game.autocomplete_available()
    refused(game, "s>1", "game_over")
    with pytest.raises(IllegalMove) as err:
        game.resign()
    assert err.value.reason == "game_over"
    with pytest.raises(IllegalMove):
        game.time_out()
    assert game.status == WON
    assert board_view(game)["status"] == WON


# ---- auto-complete -----------------------------------------------------------------------
ALL_UP = ["Kc Qd Jc", "Kd Qc Jd", "Kh Qs Jh", "Ks Qh Js"]


@pytest.mark.parametrize("draw", [1, 3])
def test_autocomplete_plays_every_card_home(draw) -> None:
    game = position(ALL_UP, found=(10, 10, 10, 10), settings=Settings(draw=draw))
    assert game.autocomplete_available()
    assert board_view(game)["autocomplete"] is True
    moves = game.autocomplete_moves()
    assert len(moves) == 12
    assert all(m.src < 7 and 8 <= m.dst <= 11 and m.count == 1 for m in moves)
    for i, move in enumerate(moves):
        assert game.play(move) == move  # each is an ordinary, checked move
        assert game.moves == i + 1
    assert game.status == WON and game.moves == 12
    assert game.autocomplete_moves() == []


@pytest.mark.parametrize(
    "layout",
    [
        dict(columns=[*ALL_UP[:3], "Ks Qh | Js"], found=(10, 10, 10, 10)),  # one face down
        dict(columns=[*ALL_UP[:3], "Ks Qh"], stock="Js", found=(10, 10, 10, 10)),
        dict(columns=[*ALL_UP[:3], "Ks Qh"], waste="Js", found=(10, 10, 10, 10)),
    ],
)
def test_autocomplete_needs_empty_stock_and_waste_and_no_face_down_card(layout) -> None:
    game = position(**layout)
    assert not game.autocomplete_available()
    assert game.autocomplete_moves() == []
    assert board_view(game)["autocomplete"] is False


def test_autocomplete_is_not_offered_after_resigning() -> None:
    game = position(ALL_UP, found=(10, 10, 10, 10))
    game.resign()
    assert not game.autocomplete_available()


# ---- stuck -------------------------------------------------------------------------------
# Seven columns whose tops fit nowhere (no 3s, 5s or 7s for them, no Aces), no empty column.
DEAD = ["| 2c", "| 2d", "| 2h", "| 2s", "| 4c", "| 4d", "| 6h"]


def dead(stock: str = "", waste: str = "", **kw) -> Game:
    return position(DEAD, stock=stock, waste=waste, fill=7, **kw)


@pytest.mark.parametrize("draw", [1, 3])
def test_stuck_when_nothing_in_the_stock_can_ever_play(draw) -> None:
    game = dead("Kh Ks 9c", settings=Settings(draw=draw))
    assert game.status == STUCK and reference_stuck(game)
    assert game.over and game.legal_moves() == []
    refused(game, "d", "game_over")
    with pytest.raises(IllegalMove) as err:
        game.resign()
    assert err.value.reason == "game_over"
    assert board_view(game)["status"] == STUCK


@pytest.mark.parametrize(
    ("draw", "stock"),
    [
        (1, "Kh Ks 3c"),
        (1, "3c Kh Ks"),
        (1, "Kh 9c Ks Qs Ac"),
        (3, "Kh Ks 3c"),
        (3, "Kh 9c Ks Qs Ac"),  # (Kh 9c Ks) (Qs Ac): Ac on top
        (3, "Kh 9c Ks Qs Kd Ac Kc"),  # (Kh 9c Ks) (Qs Kd Ac) (Kc)
    ],
)
def test_not_stuck_while_a_stock_card_will_play(draw, stock) -> None:
    game = dead(stock, settings=Settings(draw=draw))
    assert game.status == PLAYING
    assert not reference_stuck(game)


def test_draw_3_only_the_cards_its_groups_expose_count() -> None:
    # Ac is second in the stock: in Draw 3 it is never the top of the waste.
    stuck = dead("Kh Ac Ks 9c Kd 8c", settings=Settings(draw=3))
    assert stuck.status == STUCK
    assert dead("Kh Ac Ks 9c Kd 8c").status == PLAYING  # Draw 1 turns it up


@pytest.mark.parametrize(
    ("passes", "recycles", "status"),
    [(0, 0, PLAYING), (3, 0, PLAYING), (3, 1, PLAYING), (3, 2, STUCK), (1, 0, STUCK)],
)
def test_stuck_counts_the_passes_that_remain(passes, recycles, status) -> None:
    # This pass turns (Ac 9c Kd), then (8c): Ac never on top. Only after a recycle do the
    # groups start again from Kh: (Kh Ks Ac), with Ac on top.
    game = dead("Ac 9c Kd 8c", "Kh Ks", settings=Settings(draw=3, passes=passes), recycles=recycles)
    assert game.status == status
    assert reference_stuck(game) == (status == STUCK)


@pytest.mark.parametrize(("passes", "recycles", "status"), [(1, 0, STUCK), (3, 1, PLAYING)])
def test_limited_passes_a_card_under_the_waste_top_is_lost(passes, recycles, status) -> None:
    game = dead(waste="3c Kh", settings=Settings(passes=passes), recycles=recycles)
    assert game.status == status
    if status == STUCK:
        refused(game, "r", "game_over")
    else:
        game.play("r")
        game.play("d")
        game.play("w>6")  # 3c onto 4d
        check_invariants(game)


def test_limited_passes_stuck_when_stock_and_passes_are_exhausted() -> None:
    game = dead(waste="Kh Ks", settings=Settings(passes=1))
    assert game.status == STUCK and game.legal_moves() == []
    empty = dead(settings=Settings(passes=3))  # nothing at all left to turn
    assert empty.status == STUCK


def test_cycling_the_stock_is_not_progress() -> None:
    # Undo on, so a stuck game can still draw: every position of the cycle is stuck.
    game = dead("Kh Ks 9c", settings=Settings(undo=True))
    seen = []
    for move in ["d", "d", "d", "r", "d", "d", "d", "r", "d"]:
        assert game.status == STUCK and not game.over
        assert move in {str(m) for m in game.legal_moves()}
        game.play(move)
        seen.append(game.status)
    assert seen == [STUCK] * 9


def test_moving_a_whole_column_into_an_empty_one_is_not_progress() -> None:
    # game.py's reading of "no move can ever change the position again": carrying a whole
    # column (nothing under it) into an empty column changes nothing that matters.
    relocating = position(["| 2c", "| 2d", "| 2h", "| 2s", "| Kd Qs", "", "| 6h"], fill=7)
    assert relocating.status == STUCK
    assert relocating.legal_moves() == []
    revealing = position(["| 2c", "| 2d", "| 2h", "| 2s", "4c | Kd Qs", "", "| 6h"], fill=7)
    assert revealing.status == PLAYING  # the same move turns the 4c up
    assert [str(m) for m in revealing.legal_moves()] == ["5>6x2"]


def test_a_foundation_card_that_can_come_down_prevents_stuck() -> None:
    # 2c and 2d are home; the tops fit nowhere, but 2c could come down onto 3h, 2d onto 3s
    layout = ["| 3h", "| 3s", "| 6h", "| 6d", "| 9c", "| Jc", "| Kd"]
    allowed = position(layout, found=(2, 2, 0, 0), fill=7)
    assert allowed.status == PLAYING
    forbidden = Settings(foundation_to_column=False)
    assert position(layout, found=(2, 2, 0, 0), fill=7, settings=forbidden).status == STUCK
    assert position(layout, found=(1, 1, 0, 0), fill=7).status == STUCK  # Aces stay home


def test_any_card_into_an_empty_column_prevents_stuck() -> None:
    layout = ["| 2c", "| 2d", "| 2h", "| 2s", "| 4c", "| 4d", ""]
    kings = position(layout, stock="9c Qh", fill=6)
    assert kings.status == STUCK
    anyone = position(layout, stock="9c Qh", fill=6, settings=Settings(empty="any"))
    assert anyone.status == PLAYING
    king = position(layout, stock="9c Kh", fill=6)
    assert king.status == PLAYING


def test_stuck_with_undo_on_can_still_undo() -> None:
    game = position([*DEAD[:6], "| 7s"], stock="6h", fill=7, settings=Settings(undo=True))
    assert game.status == PLAYING
    game.play("d")
    game.play("w>7")  # 6h onto 7s: now nothing can ever move
    assert game.status == STUCK and not game.over
    game.play("u")
    assert game.status == PLAYING and game.moves == 3


# ---- resign and time out ------------------------------------------------------------------
@pytest.mark.parametrize(("end", "status"), [("resign", RESIGNED), ("time_out", OUT_OF_TIME)])
def test_resign_and_time_out_freeze_the_game(end, status) -> None:
    game = position(["5c | Ah", "| Kc"], stock="2h", fill=2, settings=Settings(undo=True))
    game.play("1>h", at_ms=500)
    position_before = board(game)
    getattr(game, end)()
    assert game.status == status and game.ended == status and game.over
    assert board(game) == position_before and game.moves == 1
    assert game.legal_moves() == [] and not game.autocomplete_available()
    for move in ("d", "u", "h>2"):
        refused(game, move, "game_over")
    for again in ("resign", "time_out"):
        with pytest.raises(IllegalMove) as err:
            getattr(game, again)()
        assert err.value.reason == "game_over"
    view = board_view(game)
    assert view["status"] == status and view["foundation"] == 1 and view["can_undo"] is False


def test_resign_a_stuck_game_with_undo_on() -> None:
    game = dead("Kh", settings=Settings(undo=True))
    assert game.status == STUCK
    game.resign()
    assert game.status == RESIGNED


# ---- the game-over rule ----------------------------------------------------------------
@pytest.mark.parametrize(
    ("status", "undo", "over"),
    [
        (PLAYING, False, False),
        (PLAYING, True, False),
        (WON, False, True),
        (WON, True, True),
        (STUCK, False, True),
        (STUCK, True, False),  # may still undo
        (RESIGNED, False, True),
        (RESIGNED, True, True),
        (OUT_OF_TIME, False, True),
        (OUT_OF_TIME, True, True),
    ],
)
def test_game_over_is_the_rule(status: str, undo: bool, over: bool) -> None:
    assert game_over(status, undo) is over


@pytest.mark.parametrize("undo", [False, True])
def test_game_over_agrees_with_every_game(undo: bool) -> None:
    """Game.over is game_over(status, undo) in positions of every status."""
    settings = Settings(undo=undo)
    won = position(["| Ks"], found=(13, 13, 13, 12), settings=settings)
    won.play("1>s")
    resigned = position(ALL_UP, found=(10, 10, 10, 10), settings=settings)
    resigned.resign()
    timed_out = position(ALL_UP, found=(10, 10, 10, 10), settings=settings)
    timed_out.time_out()
    games = [
        position(ALL_UP, found=(10, 10, 10, 10), settings=settings),
        won,
        dead("Kh Ks 9c", settings=settings),
        resigned,
        timed_out,
    ]
    assert [g.status for g in games] == [PLAYING, WON, STUCK, RESIGNED, OUT_OF_TIME]
    for game in games:
        assert game.over is game_over(game.status, undo)
