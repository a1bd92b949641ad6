"""Each rule of docs/rules.md, on crafted deals and explicit positions (see helpers.py)."""

from __future__ import annotations

import json

import pytest

from klondike_race.engine import (
    BEST,
    CARDS,
    DRAW_MOVE,
    RECYCLE_MOVE,
    Deal,
    Game,
    GameRecord,
    IllegalMove,
    Move,
    Settings,
    board_view,
)
from tests.conftest import reference_deals
from tests.engine.helpers import (
    cards,
    check_invariants,
    crafted_deal,
    names,
    position,
    refused,
    snapshot,
)

DEAL0 = reference_deals()[0]["cards"]
# tests/data/README.md spells out deal 0's layout; these lines are copied from it.
DEAL0_COLUMNS = [
    "Qd",
    "9h 3h",
    "7c Qc 2s",
    "5s 8s 5c 6s",
    "Qs 3c Kd Ad 6h",
    "Js Ac 8c Qh 5d Jc",
    "Kc Ah 8h 9d 6c 4d 2c",
]
DEAL0_STOCK = "Kh 5h 9s 4s 3s 2h Th 3d 4c 9c Ks Jd Tc 4h 2d As Jh 6d 7s 8d 7h Ts Td 7d"


def draw_through(game: Game) -> int:
    n = 0
    while game.stock:
        game.play("d")
        n += 1
    return n


# ---- the deal ----------------------------------------------------------------------------
def test_layout_is_dealt_row_by_row_as_the_readme_says() -> None:
    game = Game(Deal.from_cards(DEAL0))
    assert [" ".join(names(col)) for col in game.columns] == DEAL0_COLUMNS
    assert game.down == [0, 1, 2, 3, 4, 5, 6]
    assert sum(game.down) == 21
    assert names(reversed(game.stock)) == DEAL0_STOCK.split()
    assert game.waste == [] and game.found == [0, 0, 0, 0]
    assert game.moves == 0 and game.score == 0 and game.status == "playing"


# ---- draw --------------------------------------------------------------------------------
def test_draw_1_turns_the_first_stock_card() -> None:
    game = Game(Deal.from_cards(DEAL0))
    assert game.play("d") == DRAW_MOVE
    assert names(game.waste) == ["Kh"]
    assert len(game.stock) == 23
    game.play("d")
    assert names(game.waste) == ["Kh", "5h"]
    assert game.moves == 2


def test_draw_3_turns_three_cards_keeping_their_order() -> None:
    game = Game(Deal.from_cards(DEAL0), Settings(draw=3))
    game.play("d")
    assert names(game.waste) == ["Kh", "5h", "9s"]  # 9s on top, the only playable one
    assert game.fan == 3 and len(game.stock) == 21 and game.moves == 1
    assert board_view(game)["waste"] == {"count": 3, "fan": ["Kh", "5h", "9s"]}
    assert draw_through(game) == 7  # 24 cards = 8 draws
    assert names(game.waste[-3:]) == ["Ts", "Td", "7d"]
    refused(game, "d", "stock_empty")


@pytest.mark.parametrize(("stock", "expect"), [("Ac 2d", ["Ac", "2d"]), ("Ac", ["Ac"])])
def test_draw_3_with_fewer_than_three_left_turns_what_is_left(stock, expect) -> None:
    game = position(["| Kc"], stock=stock, waste="9s", settings=Settings(draw=3), fill=1)
    game.play("d")
    assert names(game.waste) == ["9s", *expect]
    assert game.stock == [] and game.fan == len(expect) and game.moves == 1
    assert board_view(game)["waste"]["fan"] == expect
    check_invariants(game)


def test_only_the_waste_top_is_playable_in_draw_3() -> None:
    game = position(["| Kc"], stock="Ac 5d 9s", settings=Settings(draw=3), fill=1)
    game.play("d")
    assert names(game.waste) == ["Ac", "5d", "9s"]
    refused(game, "w>c", "illegal_target")  # Ac is under 5d and 9s
    assert Move.parse("w>c") not in game.legal_moves()


# ---- recycle -----------------------------------------------------------------------------
def test_recycle_keeps_the_order_draw_1() -> None:
    game = Game(Deal.from_cards(DEAL0))
    draw_through(game)
    assert names(game.waste[-1:]) == ["7d"]
    assert game.play("r") == RECYCLE_MOVE
    assert game.waste == [] and game.recycles == 1 and game.moves == 25
    assert names(reversed(game.stock)) == DEAL0_STOCK.split()
    game.play("d")
    assert names(game.waste) == ["Kh"]  # the card turned first is turned first again


def test_recycle_keeps_the_order_draw_3_after_a_card_left_the_waste() -> None:
    game = position(["| Td", "| Kc"], stock="Ac 5d 9s 2h 7c Jd", settings=Settings(draw=3), fill=2)
    game.play("d")
    game.play("w>1")  # 9s onto Td
    assert names(game.waste) == ["Ac", "5d"] and game.fan == 2
    game.play("d")
    assert names(game.waste) == ["Ac", "5d", "2h", "7c", "Jd"]
    game.play("r")
    assert names(reversed(game.stock)) == ["Ac", "5d", "2h", "7c", "Jd"]
    game.play("d")  # the groups of three now start again from the first card
    assert names(game.waste) == ["Ac", "5d", "2h"]
    assert game.moves == 5


def test_recycle_refusals() -> None:
    game = Game(Deal.from_cards(DEAL0))
    refused(game, "r", "stock_not_empty")
    empty = position(["| Kc"], fill=1)
    refused(empty, "r", "waste_empty")
    refused(empty, "d", "stock_empty")


@pytest.mark.parametrize("draw", [1, 3])
@pytest.mark.parametrize(("passes", "recycles"), [(3, 2), (1, 0)])
def test_passes_run_out_exactly_when_the_setting_says(draw, passes, recycles) -> None:
    game = Game(Deal.from_cards(DEAL0), Settings(draw=draw, passes=passes))
    view = board_view(game)
    assert view["passes_left"] == passes
    for done in range(recycles):
        draw_through(game)
        assert RECYCLE_MOVE in game.legal_moves()
        game.play("r")
        assert game.recycles == done + 1
        assert board_view(game)["passes_left"] == passes - done - 1
    draw_through(game)
    assert RECYCLE_MOVE not in game.legal_moves()
    refused(game, "r", "passes_exhausted")
    assert board_view(game)["passes_left"] == 1  # the last pass, now used up to its end


def test_unlimited_passes_never_run_out() -> None:
    game = Game(Deal.from_cards(DEAL0), Settings(draw=3))
    for _ in range(12):
        draw_through(game)
        game.play("r")
    assert game.recycles == 12 and game.moves == 12 * 9
    assert board_view(game)["passes_left"] is None
    assert names(reversed(game.stock)) == DEAL0_STOCK.split()


def test_the_move_counter_counts_draws_and_recycles() -> None:
    game = Game(Deal.from_cards(DEAL0))
    for i in range(24):
        game.play("d")
        assert game.moves == i + 1
    game.play("r")
    assert game.moves == 25
    game.play("6>1")  # Jc onto Qd, flipping Qh
    assert game.moves == 26
    assert game.log[-2:] == [RECYCLE_MOVE, Move.parse("6>1")]
    assert game.found_count == 0 and game.reached_moves == 0


# ---- column to column --------------------------------------------------------------------
def runs() -> Game:
    """Column 1: 2c face down under Kd Qs Jh Ts 9h; targets for each part of the run."""
    return position(["2c | Kd Qs Jh Ts 9h", "| Qc", "| Jd", "| Tc", "| 8c"], fill=5)


@pytest.mark.parametrize(
    ("move", "moved", "target"),
    [
        ("1>2x3", "Jh Ts 9h", 1),  # from inside the face-up run, not only the whole run
        ("1>3x2", "Ts 9h", 2),
        ("1>4", "9h", 3),
    ],
)
def test_a_run_moves_from_any_card_inside_it(move, moved, target) -> None:
    game = runs()
    assert Move.parse(move) in game.legal_moves()
    game.play(move)
    assert names(game.columns[target][-len(moved.split()) :]) == moved.split()
    left = 6 - len(moved.split())
    assert names(game.columns[0]) == ["2c", "Kd", "Qs", "Jh", "Ts", "9h"][:left]
    assert game.down[0] == 1 and game.moves == 1
    check_invariants(game)


def test_column_move_refusals() -> None:
    game = runs()
    refused(game, "1>2x2", "illegal_target")  # Ts onto Qc: two ranks apart
    refused(game, "1>3", "illegal_target")  # 9h onto Jd
    refused(game, "5>4", "illegal_target")  # 8c onto Tc
    refused(game, "1>2x6", "card_not_available")  # reaches into the face-down 2c
    refused(game, "1>2x9", "card_not_available")
    refused(game, Move(0, 0, 1, 0), "card_not_available")
    refused(game, "1>1", "same_pile")
    refused(game, "6>1", "empty_source")
    refused(game, "1>w", "not_supported")


def test_same_colour_is_refused() -> None:
    game = position(["| Td", "| 9d", "| 9c"], fill=1)
    refused(game, "2>1", "illegal_target")
    game.play("3>1")
    assert names(game.columns[0][-2:]) == ["Td", "9c"]


# ---- empty columns -----------------------------------------------------------------------
def empties(empty: str) -> Game:
    return position(
        ["| Qh", "", "3d | Kh Qs Jh", "| 5d", "| 8d"],
        waste="Qd Ks",
        found=(5, 0, 0, 0),
        settings=Settings(empty=empty),
        fill=5,
    )


def test_kings_only_in_an_empty_column() -> None:
    game = empties("kings")
    refused(game, "1>2", "kings_only")
    refused(game, "3>2x2", "kings_only")  # a run headed by a Queen
    refused(game, "c>2", "kings_only")  # 5c from the foundation
    game.play("w>2")  # Ks from the waste
    assert names(game.columns[1]) == ["Ks"]
    refused(game, "w>6", "kings_only")  # now Qd


def test_a_run_headed_by_a_king_fills_an_empty_column() -> None:
    game = empties("kings")
    assert Move.parse("3>2x3") in game.legal_moves()
    game.play("3>2x3")
    assert names(game.columns[1]) == ["Kh", "Qs", "Jh"]
    assert names(game.columns[2]) == ["3d"] and game.down[2] == 0  # flipped by the move
    assert game.moves == 1


def test_any_card_in_an_empty_column() -> None:
    for move, expect in [("1>2", ["Qh"]), ("3>2x2", ["Qs", "Jh"]), ("c>2", ["5c"])]:
        game = empties("any")
        assert Move.parse(move) in game.legal_moves()
        game.play(move)
        assert names(game.columns[1]) == expect
    game = empties("any")
    game.play("w>2")
    game.play("w>6")  # Qd into another empty column
    assert names(game.columns[5]) == ["Qd"]


def test_a_king_from_the_foundation_fills_an_empty_column() -> None:
    game = position(["| 5c", ""], found=(0, 0, 13, 0), fill=1)
    game.play("h>2")
    assert names(game.columns[1]) == ["Kh"] and game.found == [0, 0, 12, 0]


# ---- foundations -------------------------------------------------------------------------
def homes() -> Game:
    return position(["5c 7d | Ah", "| 3s 2h", "| 2d"], waste="3h", found=(0, 1, 0, 0), fill=3)


def test_column_to_foundation() -> None:
    game = homes()
    assert game.play("1>h") == Move.parse("1>h")  # an Ace onto an empty foundation
    assert game.found == [0, 1, 1, 0]
    assert names(game.columns[0]) == ["5c", "7d"] and game.down[0] == 1  # 7d flipped
    assert game.play("2>f") == Move.parse("2>h")  # 'f': its own suit, named in the log
    assert game.log == [Move.parse("1>h"), Move.parse("2>h")]
    assert game.play("w>f") == Move.parse("w>h")
    assert game.found == [0, 1, 3, 0] and game.found_count == 4
    assert game.reached_moves == 3


def test_foundation_refusals() -> None:
    game = homes()
    refused(game, "1>c", "illegal_target")  # the wrong suit
    refused(game, "w>h", "illegal_target")  # 3h before Ah and 2h
    refused(game, "2>f", "illegal_target")
    refused(game, "2>hx2", "bad_count")
    refused(game, "3>c", "illegal_target")  # 2d is next on diamonds, not on clubs
    game.play("3>d")
    assert game.found == [0, 2, 0, 0]


def best(game: Game, src: int, count: int = 1) -> str:
    """The move a request to ``BEST`` becomes, played; its compact notation."""
    return str(game.play(Move(CARDS, src, BEST, count)))


def test_best_target_home_first_then_leftmost_column() -> None:
    # 2h fits on 3s (column 2) and on 3c (column 4), and could also go home
    layout = dict(columns=["| 9d", "| 3s", "| Kh", "| 3c 2h", "", "| 7s"], found=(0, 0, 1, 0))
    game = position(**layout, fill=1)
    assert best(game, 3) == "4>h"  # home before any column
    game = position(**{**layout, "found": (0, 0, 0, 0)}, fill=1)
    assert best(game, 3) == "4>2"  # no home yet: the leftmost column it fits on
    assert game.log == [Move.parse("4>2")]


def test_best_target_runs_empty_columns_and_foundations() -> None:
    layout = dict(columns=["7h | Kd Qs Jh", "| Ks", "| Qc", "", "| 5d"], found=(0, 0, 0, 4))
    game = position(**layout, fill=3)
    refused_best(game, 0, 2, "no_target")  # Qs Jh: no red King free, and Kings only
    refused_best(game, 1, 1, "no_target")  # the whole column to an empty one changes nothing
    assert best(game, 0, 3) == "1>4x3"  # a King's run off a face-down card: the empty column
    game = position(**layout, fill=3, settings=Settings(empty="any"))
    assert best(game, 0, 2) == "1>4x2"  # any card may fill an empty column here
    assert best(game, 11) == "s>5"  # off a foundation: the 4s onto the 5d
    refused_best(game, 7, 1, "empty_source")  # the source is checked first: no waste


def refused_best(game: Game, src: int, count: int, reason: str) -> None:
    before = snapshot(game)
    with pytest.raises(IllegalMove) as err:
        game.play(Move(CARDS, src, BEST, count))
    assert err.value.reason == reason
    assert snapshot(game) == before


def test_foundation_to_column_allowed_and_forbidden() -> None:
    layout = dict(columns=["| 6s", "| 9c", "| 8h"], found=(0, 0, 5, 3), fill=2)
    game = position(**layout)
    refused(game, "h>2", "illegal_target")
    refused(game, "h>1x2", "bad_count")
    refused(game, "h>c", "not_supported")
    refused(game, "h>w", "not_supported")
    refused(game, "c>1", "empty_source")
    assert Move.parse("h>1") in game.legal_moves()
    game.play("h>1")
    assert names(game.columns[0]) == ["6s", "5h"]
    assert game.found == [0, 0, 4, 3] and game.found_count == 7 and game.reached_moves == 1
    forbidden = position(**layout, settings=Settings(foundation_to_column=False))
    assert not any(m.src >= 8 for m in forbidden.legal_moves())
    refused(forbidden, "h>1", "foundation_to_column_forbidden")


# ---- waste -------------------------------------------------------------------------------
def test_waste_to_column_and_waste_refusals() -> None:
    game = position(["| Td"], waste="Kc 9s", fill=1)
    refused(game, "w>1x2", "bad_count")
    refused(game, "w>w", "same_pile")
    game.play("w>1")
    assert names(game.columns[0][-2:]) == ["Td", "9s"] and names(game.waste) == ["Kc"]
    refused(game, "w>1", "illegal_target")
    nothing = position(["| Td"], stock="Kd", fill=1)
    refused(nothing, "w>1", "empty_source")
    refused(nothing, "w>f", "empty_source")


# ---- auto-flip ---------------------------------------------------------------------------
def test_auto_flip_is_part_of_the_move() -> None:
    game = position(["5c 7d | Ah", "9s | 8h", "| 9c"], fill=3)
    game.play("1>h")
    assert game.columns[0] == cards("5c 7d") and game.down[0] == 1
    game.play("2>3")
    assert game.columns[1] == cards("9s") and game.down[1] == 0
    assert game.moves == 2 and len(game.log) == 2
    check_invariants(game)


# ---- a crafted deal, from move 0 -----------------------------------------------------------
def crafted() -> Deal:
    """Tops Ah, Kd, Qs, 2h, Jh, 3h, Ts; the stock turns 4h then 5h first."""
    tops = ["Ah", "Kd", "Qs", "2h", "Jh", "3h", "Ts"]
    first = ["4h", "5h"]
    rest = [n for n in (r + s for s in "cdhs" for r in "A23456789TJQK") if n not in tops + first]
    under = [rest[sum(range(c)) : sum(range(c)) + c] for c in range(7)]  # 0, 1, ... 6 cards
    columns = [" ".join([*under[c], tops[c]]) for c in range(7)]
    return crafted_deal(columns, " ".join(first + rest[21:]))


def test_a_crafted_deal_plays_as_laid_out() -> None:
    deal = crafted()
    game = Game(deal, Settings(scoring="standard"))
    assert names(col[-1] for col in game.columns) == ["Ah", "Kd", "Qs", "2h", "Jh", "3h", "Ts"]
    line = ["1>h", "4>h", "6>h", "d", "w>h", "d", "w>h", "2>1", "3>1", "5>1", "7>1"]
    for move in line:
        game.play(move)
    assert game.found == [0, 0, 5, 0] and game.moves == len(line)
    assert names(game.columns[0]) == ["Kd", "Qs", "Jh", "Ts"]
    assert game.down == [0, 0, 1, 2, 3, 4, 5]  # every source column turned a card up
    # +10 x5 home; +5 for each of the six cards turned up
    assert game.score == 10 * 5 + 5 * 6
    record = GameRecord.from_json(json.loads(json.dumps(GameRecord.of(game).to_json())))
    assert record.deal == deal and snapshot(record.game()) == snapshot(game)
    check_invariants(game)


def test_a_copy_is_independent() -> None:
    game = Game(crafted())
    game.play("1>h")
    other = game.copy()
    before = snapshot(game)
    other.play("4>h")
    other.play("d")
    assert snapshot(game) == before
    game.play("2>1")
    assert other.columns[0] == [] and names(game.columns[0]) == ["Kd"]
