"""Scoring: standard (Microsoft's points, never below 0), vegas, timed standard, none.

Every expected figure below is worked out by hand from docs/rules.md, not read off the code.
"""

from __future__ import annotations

import pytest

from klondike_race.engine import UNLIMITED, Deal, Game, NotationError, Settings, board_view
from tests.conftest import reference_deals
from tests.engine.helpers import position

STANDARD = Settings(scoring="standard")
VEGAS = Settings(scoring="vegas")


def after(moves: list[str], **layout) -> int:
    game = position(**layout)
    for move in moves:
        game.play(move)
    return game.score


# ---- standard ----------------------------------------------------------------------------
@pytest.mark.parametrize(
    ("moves", "layout", "score"),
    [
        # +10 waste to foundation
        (["w>h"], dict(columns=["| Kc"], waste="Ah", fill=1), 10),
        # +10 column to foundation (nothing turned)
        (["1>h"], dict(columns=["| Ah", "| Kc"], fill=2), 10),
        # +10 to foundation, +5 for the card it turns up
        (["1>h"], dict(columns=["5c | Ah", "| Kc"], fill=2), 15),
        # +5 waste to column
        (["w>1"], dict(columns=["| Td"], waste="9c", fill=1), 5),
        # column to column: nothing, then +5 when it turns a card
        (["2>1"], dict(columns=["| Td", "| 9c", "| Kc"], fill=3), 0),
        (["2>1"], dict(columns=["| Td", "5h | 9c", "| Kc"], fill=3), 5),
        # a draw scores nothing
        (["d"], dict(columns=["| Kc"], stock="Ah", fill=1), 0),
        # waste to column +5, then that card to the foundation +10
        (["w>1", "1>h"], dict(columns=["| 2s"], waste="Ah", fill=1), 15),
        # foundation to column -15
        (["h>1"], dict(columns=["| 6s", "| Kc"], found=(0, 0, 5, 0), fill=2, score=40), 25),
        # ... never below 0
        (["h>1"], dict(columns=["| 6s", "| Kc"], found=(0, 0, 5, 0), fill=2, score=10), 0),
        # Draw 1: each recycle costs 100, never below 0
        (["r"], dict(columns=["| Kc"], waste="Ah", fill=1, score=250), 150),
        (["r", "d", "r"], dict(columns=["| Kc"], waste="2h", fill=1, score=250), 50),
        (["r"], dict(columns=["| Kc"], waste="2h", fill=1, score=30), 0),
    ],
)
def test_standard_points(moves, layout, score) -> None:
    assert after(moves, settings=STANDARD, **layout) == score


def test_standard_never_goes_below_zero_then_counts_up_from_zero() -> None:
    game = position(["| 6s", "| Kc"], waste="Ac", found=(0, 0, 5, 0), settings=STANDARD, fill=2)
    game.play("h>1")
    assert game.score == 0  # not -15
    game.play("w>c")
    assert game.score == 10  # no debt was carried


def test_draw_3_recycles_first_three_free_then_20() -> None:
    settings = Settings(draw=3, scoring="standard")
    game = position(["| Kc"], stock="2h 3s 4d 5c", fill=1, settings=settings, score=100)
    scores = []
    for _ in range(6):
        while game.stock:
            game.play("d")
        game.play("r")
        scores.append(game.score)
    assert scores == [100, 100, 100, 80, 60, 40]
    assert game.recycles == 6


def test_standard_on_a_real_deal() -> None:
    game = Game(Deal.from_cards(reference_deals()[0]["cards"]), STANDARD)
    game.play("6>1")  # Jc onto Qd turns 5d: +5
    game.play("3>2")  # 2s onto 3h turns Qc: +5
    assert game.score == 10
    for _ in range(16):
        game.play("d")  # the 16th turns As
    game.play("w>s")  # +10
    game.play("2>s")  # 2s home: +10, 3h was already face up
    game.play("7>2")  # 2c onto 3h turns 4d: +5
    assert game.score == 35
    while game.stock:
        game.play("d")
    game.play("r")  # Draw 1: -100, floored at 0
    assert game.score == 0


# ---- vegas -------------------------------------------------------------------------------
@pytest.mark.parametrize(
    ("text", "passes"),
    [
        ("scoring=vegas", 1),
        ("draw=1,scoring=vegas", 1),
        ("draw=3,scoring=vegas", 3),
        ("draw=3,scoring=vegas,passes=1", 1),
        ("draw=1,scoring=vegas,passes=unlimited", UNLIMITED),
        ("draw=3,scoring=standard", UNLIMITED),
        ("draw=3", UNLIMITED),
    ],
)
def test_vegas_default_passes(text, passes) -> None:
    assert Settings.parse(text).passes == passes
    values = dict(part.split("=") for part in text.split(","))
    assert Settings.from_dict(values).passes == passes


def test_vegas_points() -> None:
    settings = Settings.parse("draw=3,scoring=vegas")
    game = position(
        ["5d | As", "| 6s", "| Td"],
        waste="9c",
        stock="Kc",
        found=(0, 0, 5, 0),
        settings=settings,
        fill=3,
    )
    assert game.score == -52
    game.play("w>3")  # waste to column: nothing
    assert game.score == -52
    game.play("1>s")  # +5, and nothing for the card it turns up
    assert game.score == -47
    game.play("h>2")  # 5h back down: -5
    assert game.score == -52
    game.play("2>h")
    game.play("d")
    game.play("r")  # recycling is free
    assert game.score == -47
    assert game.recycles == 1


def test_vegas_starts_at_minus_52() -> None:
    assert Game.from_seed(7, VEGAS).score == -52
    assert board_view(Game.from_seed(7, VEGAS))["score"] == -52


# ---- timed standard ----------------------------------------------------------------------
TIMED = Settings(scoring="standard", timed=True)


def test_timed_needs_standard_scoring() -> None:
    with pytest.raises(NotationError) as err:
        Settings(timed=True)
    assert err.value.reason == "bad_setting"
    with pytest.raises(NotationError):
        Settings.parse("scoring=vegas,timed=on")


@pytest.mark.parametrize(
    ("elapsed_ms", "shown"),
    [(0, 100), (9_999, 100), (10_000, 98), (19_999, 98), (125_000, 76), (10_000_000, 0)],
)
def test_timed_takes_two_points_per_ten_seconds(elapsed_ms, shown) -> None:
    game = position(["| Kc"], stock="2h", fill=1, settings=TIMED, score=100)
    assert game.score_at(elapsed_ms) == shown
    assert board_view(game, elapsed_ms)["score"] == shown
    assert game.score == 100  # the stored score itself does not change


def one_card_left(settings: Settings, score: int) -> Game:
    return position(["| Ks"], found=(13, 13, 13, 12), settings=settings, score=score)


@pytest.mark.parametrize(
    ("won_at_ms", "shown"),
    [
        (100_000, 1010 - 20 + 700_000 // 100),
        (20_000, 1010 - 4),  # not more than 30 seconds: no bonus
        (30_000, 1010 - 6),
        (45_999, 1010 - 8 + 700_000 // 45),
        (30_500, 1010 - 6 + 700_000 // 31),  # docstring: seconds rounded down, at least 31
    ],
)
def test_timed_win_bonus(won_at_ms, shown) -> None:
    game = one_card_left(TIMED, 1000)
    game.play("1>s", at_ms=won_at_ms)
    assert game.status == "won" and game.score == 1010
    assert game.score_at(won_at_ms) == shown
    assert game.score_at(won_at_ms + 3_600_000) == shown  # the clock stops at the win


def test_untimed_score_ignores_the_clock() -> None:
    game = one_card_left(STANDARD, 1000)
    assert game.score_at(600_000) == 1000
    game.play("1>s", at_ms=100_000)
    assert game.score_at(600_000) == 1010


def test_no_scoring_keeps_zero_and_shows_none() -> None:
    game = position(["5c | Ah", "| 6s"], waste="9c", found=(0, 0, 0, 0), fill=2)
    game.play("1>h")
    assert game.score == 0
    assert board_view(game)["score"] is None
