"""Text forms that round-trip: moves, settings, game records; and their errors."""

from __future__ import annotations

import itertools
import json

import pytest

from klondike_race.engine import (
    CARDS,
    DRAW_MOVE,
    FOUNDATION,
    RECYCLE_MOVE,
    UNDO_MOVE,
    UNLIMITED,
    Deal,
    Game,
    GameRecord,
    IllegalMove,
    Move,
    NotationError,
    Settings,
    pile_name,
)
from tests.engine.helpers import board

# ---- moves -------------------------------------------------------------------------------
EVERY_CARD_MOVE = [
    Move(CARDS, src, dst, n)
    for src in range(12)
    for dst in [*range(12), FOUNDATION]
    for n in range(1, 14)
]


def test_notation_examples() -> None:
    # the table of moves.py's docstring
    assert Move.parse("d") == DRAW_MOVE
    assert Move.parse("r") == RECYCLE_MOVE
    assert Move.parse("u") == UNDO_MOVE
    assert Move.parse("w>3") == Move(CARDS, 7, 2, 1)
    assert Move.parse("w>h") == Move(CARDS, 7, 10, 1)
    assert Move.parse("w>f") == Move(CARDS, 7, FOUNDATION, 1)
    assert Move.parse("3>h") == Move(CARDS, 2, 10, 1)
    assert Move.parse("h>3") == Move(CARDS, 10, 2, 1)
    assert Move.parse("3>7") == Move(CARDS, 2, 6, 1)
    assert Move.parse("3>7x4") == Move(CARDS, 2, 6, 4)
    assert str(Move(CARDS, 2, 6, 4)) == "3>7x4"
    assert str(Move(CARDS, 8, 0, 1)) == "c>1"


def test_every_move_round_trips() -> None:
    every = [DRAW_MOVE, RECYCLE_MOVE, UNDO_MOVE, *EVERY_CARD_MOVE]
    assert len(set(map(str, every))) == len(every) == 3 + 12 * 13 * 13
    for move in every:
        assert Move.parse(str(move)) == move
        assert eval(repr(move), {"Move": Move}) == move


def test_wire_forms_round_trip() -> None:
    for move in EVERY_CARD_MOVE:
        wire = move.to_wire()
        assert set(wire) == {"from", "to", "count"}
        assert Move.from_wire(wire["from"], wire["to"], wire["count"]) == move
    assert DRAW_MOVE.to_wire() == {"action": "draw"}
    assert RECYCLE_MOVE.to_wire() == {"action": "recycle"}
    assert UNDO_MOVE.to_wire() == {"action": "undo"}
    assert Move.from_wire("col3", "found-h") == Move.parse("3>h")
    assert Move.from_wire("waste", "foundation") == Move.parse("w>f")
    names = [pile_name(p) for p in range(14)]
    assert names[:8] == ["col1", "col2", "col3", "col4", "col5", "col6", "col7", "waste"]
    assert names[8:] == ["found-c", "found-d", "found-h", "found-s", "stock", "foundation"]


@pytest.mark.parametrize(
    "text",
    [
        "", "D", "d ", " d", "draw", "x", ">", "w>", ">3", "8>1", "1>8", "0>1", "1>0", "f>1",
        "s>", "w>>3", "ww>3", "1>2x", "1>2x0", "1>2x-1", "1>2x100", "1>2x2x2", "1>2 x2",
        "1>2x²", "1>2x\u0661", "1>2x\u0663", "1>2X2", "1->2", None, 3, ["d"], b"d",
    ],
)  # fmt: skip
def test_bad_notation(text) -> None:
    with pytest.raises(NotationError) as err:
        Move.parse(text)
    assert err.value.reason == "bad_move"


@pytest.mark.parametrize(
    ("src", "dst", "count", "reason"),
    [
        ("stock", "col1", 1, "bad_pile"),
        ("foundation", "col1", 1, "bad_pile"),
        ("col1", "stock", 1, "bad_pile"),
        ("col8", "col1", 1, "bad_pile"),
        ("col1", "Col2", 1, "bad_pile"),
        (None, "col1", 1, "bad_pile"),
        ("col1", "col2", 0, "bad_move"),
        ("col1", "col2", 53, "bad_move"),
        ("col1", "col2", True, "bad_move"),
        ("col1", "col2", "2", "bad_move"),
        ("col1", "col2", 2.0, "bad_move"),
    ],
)
def test_bad_wire_moves(src, dst, count, reason) -> None:
    with pytest.raises(NotationError) as err:
        Move.from_wire(src, dst, count)
    assert err.value.reason == reason


def test_canonical_forms_are_played_and_logged() -> None:
    game = Game.from_seed(3, Settings(undo=True))
    assert game.play(Move(1, 0, 0, 0)) == DRAW_MOVE  # a draw whatever its piles say
    assert game.play(Move(3, 5, 5, 0)) == UNDO_MOVE
    assert game.log == [DRAW_MOVE, UNDO_MOVE]


# ---- settings ----------------------------------------------------------------------------
def all_settings() -> list[Settings]:
    out = []
    for draw, passes, empty, f2c, scoring, undo in itertools.product(
        (1, 3),
        (UNLIMITED, 3, 1),
        ("kings", "any"),
        (True, False),
        ("none", "standard", "vegas"),
        (False, True),
    ):
        for timed in (False, True) if scoring == "standard" else (False,):
            out.append(Settings(draw, passes, empty, f2c, scoring, timed, undo))
    return out


def test_settings_round_trip() -> None:
    every = all_settings()
    assert len(every) == 2 * 3 * 2 * 2 * 4 * 2
    assert len(set(every)) == len(every)
    for s in every:
        assert Settings.parse(str(s)) == s
        assert Settings.from_dict(s.to_dict()) == s
        assert Settings.from_dict(json.loads(json.dumps(s.to_dict()))) == s
        assert eval(repr(s), {"Settings": Settings}) == s


def test_settings_text_and_defaults() -> None:
    text = "draw=1,passes=unlimited,empty=kings,foundation_to_column=allowed,scoring=none,undo=off"
    assert str(Settings()) == text
    assert Settings.parse("") == Settings() == Settings.from_dict({})
    assert Settings().recycles_allowed is None
    assert Settings(passes=3).recycles_allowed == 2
    assert Settings(passes=1).recycles_allowed == 0
    assert str(Settings(scoring="standard", timed=True)).endswith(
        ",scoring=standard,timed=on,undo=off"
    )
    assert Settings.parse(" draw = 3 , undo=on ,") == Settings(draw=3, undo=True)
    values = {"draw": "3", "passes": "3", "undo": "on", "foundation_to_column": "forbidden"}
    assert Settings.from_dict(values) == Settings(
        draw=3, passes=3, undo=True, foundation_to_column=False
    )
    assert Settings.from_dict({"passes": None}).passes == UNLIMITED
    assert Settings.from_dict({"undo": "true", "timed": False}).undo is True
    assert Settings.to_dict(Settings(passes=3))["passes"] == 3
    assert Settings().to_dict()["passes"] == "unlimited"


@pytest.mark.parametrize(
    "values",
    [
        {"draw": 2}, {"draw": "x"}, {"draw": True}, {"draw": 1.0}, {"draw": "²"},
        {"draw": "\u0663"},
        {"draw": "003"}, {"passes": 2}, {"passes": 0}, {"passes": "0"}, {"passes": True},
        {"passes": "Unlimited"}, {"passes": []}, {"empty": "queens"}, {"empty": None},
        {"scoring": "golf"}, {"scoring": 1}, {"undo": "maybe"}, {"undo": 1}, {"undo": None},
        {"foundation_to_column": "yes"}, {"timed": "on"}, {"timed": True, "scoring": "vegas"},
        {"colour": "red"}, [], "draw=1", None,
    ],
)  # fmt: skip
def test_bad_settings(values) -> None:
    with pytest.raises(NotationError) as err:
        Settings.from_dict(values)
    assert err.value.reason == "bad_setting"


@pytest.mark.parametrize("text", ["draw", "draw=2", "x=1", "draw=²", "undo", 3, None])
def test_bad_settings_text(text) -> None:
    with pytest.raises(NotationError) as err:
        Settings.parse(text)
    assert err.value.reason == "bad_setting"


@pytest.mark.parametrize(
    "kw", [{"draw": 2}, {"draw": True}, {"passes": 2}, {"empty": "x"}, {"undo": 1}, {"timed": True}]
)
def test_bad_settings_values(kw) -> None:
    with pytest.raises(NotationError):
        Settings(**kw)


# ---- game records ------------------------------------------------------------------------
def played(settings: Settings, end: str | None = None) -> Game:
    game = Game.from_seed(42, settings)
    t = 0
    for _ in range(40):
        moves = game.legal_moves()
        if not moves:
            break
        t += 250
        game.play(moves[len(moves) // 2], at_ms=t)
        if settings.undo and t % 1750 == 0:
            game.play("u", at_ms=t + 1)
    if end:
        getattr(game, end)()
    return game


@pytest.mark.parametrize("end", [None, "resign", "time_out"])
@pytest.mark.parametrize("settings", [Settings(), Settings.parse("draw=3,scoring=vegas,undo=on")])
def test_record_json_round_trip(settings, end) -> None:
    game = played(settings, end)
    record = GameRecord.of(game)
    data = json.loads(json.dumps(record.to_json()))
    assert data["format"] == "klondike-race/record/1"
    assert data["deal"] == {"seed": "42"}
    assert data["moves"] == [str(m) for m in game.log]
    assert data["times"] == game.times
    assert data.get("ended") == game.ended
    again = GameRecord.from_json(data)
    assert again == record
    replayed = again.game()
    assert board(replayed) == board(game)
    assert (replayed.moves, replayed.score, replayed.status) == (
        game.moves,
        game.score,
        game.status,
    )
    assert replayed.log == game.log and replayed.times == game.times


def test_record_without_times_and_with_explicit_cards() -> None:
    deal = Deal.from_cards(Deal.from_seed(5).names())
    game = Game(deal)
    game.play("d")
    data = GameRecord.of(game).to_json()
    assert "times" not in data and "ended" not in data
    assert data["deal"] == {"cards": deal.names()}
    assert GameRecord.from_json(data).game().waste == game.waste


def test_replay_yields_every_step_and_stops_at_an_illegal_move() -> None:
    record = GameRecord(Deal.from_seed(42), Settings(), [Move.parse(m) for m in ["d", "d", "r"]])
    steps = []
    with pytest.raises(IllegalMove) as err:
        for i, move, game in record.replay():
            steps.append((i, str(move), game.moves))
    assert steps == [(0, "d", 1), (1, "d", 2)]
    assert err.value.reason == "stock_not_empty"
    assert err.value.index == 2  # type: ignore[attr-defined]


GOOD = {"format": "klondike-race/record/1", "deal": {"seed": "1"}, "moves": ["d"]}


@pytest.mark.parametrize(
    ("change", "reason"),
    [
        ({"format": "klondike-race/record/2"}, "bad_record"),
        ({"format": None}, "bad_record"),
        ({"extra": 1}, "bad_record"),
        ({"moves": "d"}, "bad_record"),
        ({"moves": None}, "bad_record"),
        ({"moves": ["d", "zz"]}, "bad_move"),
        ({"times": [1, 2]}, "bad_record"),
        ({"times": [-1]}, "bad_record"),
        ({"times": [True]}, "bad_record"),
        ({"times": [1.5]}, "bad_record"),
        ({"times": "1"}, "bad_record"),
        ({"ended": "won"}, "bad_record"),
        ({"ended": "stuck"}, "bad_record"),
        ({"deal": None}, "bad_deal"),
        ({"deal": {"seed": ""}}, "bad_deal"),
        ({"settings": {"draw": 2}}, "bad_setting"),
        ({"settings": "draw=1"}, "bad_setting"),
    ],
)
def test_bad_records(change, reason) -> None:
    data = {**GOOD, **change}
    with pytest.raises(NotationError) as err:
        GameRecord.from_json(data)
    assert err.value.reason == reason


@pytest.mark.parametrize("data", [None, [], "{}", 3])
def test_a_record_is_an_object(data) -> None:
    with pytest.raises(NotationError) as err:
        GameRecord.from_json(data)
    assert err.value.reason == "bad_record"


def test_missing_deal_is_refused_and_settings_default() -> None:
    with pytest.raises(NotationError):
        GameRecord.from_json({k: v for k, v in GOOD.items() if k != "deal"})
    assert GameRecord.from_json(GOOD).settings == Settings()
