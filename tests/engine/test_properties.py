"""Random play in every combination of settings, checking the game after each move.

Each example deals a seed (or a reference deal), then plays a random sequence: mostly a
legal move chosen from legal_moves() (foundation moves and the stock favoured, so games
get deep and passes run out),
undo when the room allows it, and now and then a random request through play() that must
either be legal or raise IllegalMove and change nothing. After every step:

* the position is legal: 52 distinct cards, face-down cards only at the bottom of
  columns, face-up cards forming runs, counters consistent (helpers.check_invariants);
* legal_moves() is exactly what an independent naive generator finds, and every move in
  it passes check(); status (stuck above all) agrees with a brute-force oracle;
* board_view and progress never name a face-down or stock card;
* scores follow their rules (vegas is -52 + 5 per card home; standard never below 0);
* an undo restores the position and score from before the move it undoes;
* GameRecord.of(game), replayed directly and through JSON text, gives the same game.
"""

from __future__ import annotations

import itertools
import json
import re

import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from klondike_race.engine import (
    BEST,
    CARDS,
    DRAW_MOVE,
    FOUNDATION,
    NAMES,
    RECYCLE_MOVE,
    UNDO_MOVE,
    UNLIMITED,
    WON,
    Deal,
    Game,
    GameRecord,
    IllegalMove,
    Move,
    NotationError,
    Settings,
    board_view,
    progress,
)
from tests.conftest import reference_deals, step_to_move
from tests.engine.helpers import (
    board,
    check_invariants,
    hidden_cards,
    reference_legal_moves,
    reference_status,
    snapshot,
)

EVERY_SETTINGS = [
    Settings(draw, passes, empty, f2c, scoring, timed, undo)
    for draw, passes, empty, f2c, scoring, undo in itertools.product(
        (1, 3),
        (UNLIMITED, 3, 1),
        ("kings", "any"),
        (True, False),
        ("none", "standard", "vegas"),
        (False, True),
    )
    for timed in ((False, True) if scoring == "standard" else (False,))
]
assert len(EVERY_SETTINGS) == 192

# Requests a client might send, legal or not: every pile pair and count, and some junk.
REQUESTS = [DRAW_MOVE, RECYCLE_MOVE, UNDO_MOVE] + [
    Move(CARDS, src, dst, n)
    for src in range(12)
    for dst in [*range(12), FOUNDATION, BEST]
    for n in (1, 2, 3, 5, 13)
]
REQUESTS += [Move(CARDS, 12, 0, 1), Move(CARDS, 0, 12, 1), Move(9, 0, 0, 0), "1>2x²", "?"]

WINNABLE = [d["cards"] for d in reference_deals() if d["result"] == "win"][::7]
CARD_NAME = re.compile(r"\b[A2-9TJQK][cdhs]\b")


def strings(value: object) -> list[str]:
    """Every string inside a JSON-like value, keys included."""
    if isinstance(value, str):
        return [value]
    if isinstance(value, dict):
        return [s for k, v in value.items() for s in [*strings(k), *strings(v)]]
    if isinstance(value, list | tuple):
        return [s for v in value for s in strings(v)]
    return []


def check_views(game: Game, elapsed_ms: int) -> None:
    hidden = {NAMES[c] for c in hidden_cards(game)}
    for view in (board_view(game, elapsed_ms), progress(game, elapsed_ms)):
        shown = strings(view)
        assert hidden.isdisjoint(shown)
        assert hidden.isdisjoint(CARD_NAME.findall(json.dumps(view)))
    view = board_view(game, elapsed_ms)
    assert view["stock"] == len(game.stock)
    assert [c["down"] for c in view["columns"]] == game.down
    assert view["waste"]["count"] == len(game.waste)
    if game.waste:
        assert view["waste"]["fan"][-1] == NAMES[game.waste[-1]]
    assert view["over"] is game.over
    auto = game.autocomplete_moves()
    assert view["autocomplete"] is bool(auto)
    assert view["autocomplete_next"] == (auto[0].to_wire() if auto else None)


def check_scores(game: Game) -> None:
    scoring = game.settings.scoring
    if scoring == "none":
        assert game.score == 0
    elif scoring == "vegas":
        assert game.score == -52 + 5 * game.found_count
    else:
        assert game.score >= 0
        assert game.score_at(10**9) >= 0


def check_replay(game: Game) -> None:
    record = GameRecord.of(game)
    text = json.dumps(record.to_json())
    for again in (record, GameRecord.from_json(json.loads(text))):
        replayed = again.game()
        assert snapshot(replayed) == snapshot(game)


def check_position(game: Game, elapsed_ms: int) -> None:
    check_invariants(game)
    assert game.status == reference_status(game)
    legal = game.legal_moves()
    assert len(legal) == len(set(legal))
    assert set(legal) == reference_legal_moves(game)
    for move in legal:
        assert game.check(move) == move
    check_views(game, elapsed_ms)
    check_scores(game)
    if game.autocomplete_available():
        finish = game.copy()
        for move in game.autocomplete_moves():
            finish.play(move)
        assert finish.status == WON


def random_game(game: Game, choices: list[int]) -> None:
    undo = game.settings.undo
    undo_stack: list[tuple] = []  # (board, score) before each move an undo may take back
    t = 0
    # (count, moves, ms): when the foundation count last changed
    found_at = (game.found_count, game.reached_moves, game.reached_ms)
    for c in choices:
        t += c % 997
        before = snapshot(game)
        legal = game.legal_moves()
        kind = c % 10
        if kind == 0:  # a random request: legal, or refused with nothing changed
            request = REQUESTS[(c // 10) % len(REQUESTS)]
            try:
                move = game.play(request, at_ms=t)
            except (IllegalMove, NotationError):
                assert snapshot(game) == before
                continue
            assert move in legal or move == UNDO_MOVE
        elif kind == 1 and undo:
            if game.over or not game.history:
                with pytest.raises(IllegalMove):
                    game.play("u", at_ms=t)
                assert snapshot(game) == before
                continue
            move = game.play("u", at_ms=t)
        else:
            if not legal:
                break
            home = [m for m in legal if m.dst >= 8]
            stock = [m for m in legal if m.kind != CARDS]
            if home and kind < 5:
                pick = home
            elif stock and kind < 7:  # through the stock faster: passes run out, games stick
                pick = stock
            else:
                pick = legal
            move = pick[(c // 10) % len(pick)]
            assert game.play(move, at_ms=t) == move
        if move == UNDO_MOVE:
            position, score = undo_stack.pop()
            assert board(game) == position and game.score == score
        elif undo:
            undo_stack.append((before[:6], before[8]))  # board(), then score
        assert game.moves == before[7] + 1 and game.log[-1] == move and game.times[-1] == t
        if game.found_count != found_at[0]:
            found_at = (game.found_count, game.moves, t)
        assert (game.reached_moves, game.reached_ms) == found_at[1:]
        check_position(game, t)
        check_replay(game)


@pytest.mark.parametrize("rules", EVERY_SETTINGS, ids=str)
@settings(max_examples=2, deadline=None, suppress_health_check=[HealthCheck.too_slow])
@given(
    deal=st.one_of(
        st.integers(0, 2**40).map(Deal.from_seed),
        st.sampled_from(WINNABLE).map(Deal.from_cards),
    ),
    choices=st.lists(st.integers(0, 10**6), min_size=30, max_size=90),
)
def test_random_play(rules: Settings, deal: Deal, choices: list[int]) -> None:
    game = Game(deal, rules)
    check_position(game, 0)
    random_game(game, choices)


@settings(max_examples=25, deadline=None)
@given(
    seed=st.one_of(st.integers(), st.text(min_size=1, max_size=30)),
    rules=st.sampled_from(EVERY_SETTINGS),
    choices=st.lists(st.integers(0, 10**6), max_size=40),
    end=st.sampled_from([None, "resign", "time_out"]),
)
def test_random_play_then_an_ending(seed, rules, choices, end) -> None:
    game = Game.from_seed(seed, rules)
    random_game(game, choices)
    if end and not game.over:
        getattr(game, end)()
        assert game.over and game.legal_moves() == []
        check_position(game, 0)
        check_replay(game)


@settings(max_examples=80, deadline=None)
@given(
    ref=st.sampled_from([d for d in reference_deals() if d["result"] == "win"]),
    cut=st.floats(0.3, 1.0),
    choices=st.lists(st.integers(0, 10**6), max_size=30),
)
def test_random_play_from_deep_in_a_winning_line(ref, cut, choices) -> None:
    """Late positions (few cards left, auto-complete, wins) are rare in random play from
    the deal: start part-way down a reference winning line instead."""
    game = Game(Deal.from_cards(ref["cards"]), Settings(draw=ref["draw"]))
    for step in ref["line"][: int(len(ref["line"]) * cut)]:
        game.play(step_to_move(step))
    check_position(game, 0)
    random_game(game, choices)
