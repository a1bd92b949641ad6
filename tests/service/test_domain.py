"""The service's pure domain, without a server: who may see what, when the solver may
help, the phase rule, the move-log entry and room options."""

from __future__ import annotations

import itertools
from dataclasses import replace

import pytest

from klondike_race.engine import NAMES, Deal, Game, Move, Settings, board_view
from klondike_race.service.domain import assist, movelog
from klondike_race.service.domain import challenge as ch
from klondike_race.service.domain import visibility as V
from klondike_race.service.domain.errors import ProtocolError, RoomError, ServiceError
from klondike_race.service.domain.options import RoomOptions
from klondike_race.service.domain.room import (
    COUNTDOWN,
    FINISHED,
    RACING,
    WAITING,
    Room,
    RoomView,
    add_player,
    finish,
    phase_at,
    random_deal,
    sprint,
    start,
)

ROLES = list(V.Role)


def test_a_random_deal_is_never_one_stuck_from_the_start(monkeypatch) -> None:
    """Seed 00000000000000c7 is stuck from the start in Draw 3 (no card can ever move), not
    in Draw 1: drawn at random for a Draw 3 race, it is drawn again."""
    stuck, fine = "00000000000000c7", "00000000000000c8"
    assert Game(Deal.from_seed(stuck), Settings(draw=3)).over
    assert not Game(Deal.from_seed(fine), Settings(draw=3)).over
    drawn = iter([stuck, stuck, fine])
    monkeypatch.setattr("secrets.token_hex", lambda n: next(drawn))
    assert random_deal(Settings(draw=3)) == {"seed": fine}
    drawn = iter([stuck, fine])  # with undo on too (stuck, yet not over: undo may come)
    assert not Game(Deal.from_seed(stuck), Settings(draw=3, undo=True)).over
    assert random_deal(Settings(draw=3, undo=True)) == {"seed": fine}
    drawn = iter([stuck])
    assert random_deal(Settings(draw=1)) == {"seed": stuck}  # a deal like any in Draw 1


# ---- visibility --------------------------------------------------------------------------
# the operator's KR_RATED_SPECTATORS settings: outlines, or boards forced that far behind
SETTINGS = [("outline", 0), ("delayed", 30)]
KINDS = (False, True)  # a room that is rated play, or not
DELAYS = (0, 60)  # the owner's spectator_delay


def _expected_view(rated: bool, delay: int, setting: tuple[str, int]) -> tuple[str, int]:
    """docs/rules.md, "Who sees what": rated play gets the operator's setting (a delay
    never shorter than the owner's), an unrated room its owner's delay."""
    if not rated:
        return ("delayed", delay) if delay else ("live", 0)
    if setting[0] == "outline":
        return "outline", 0
    return "delayed", max(delay, setting[1])


def _expected_sight(role: V.Role, phase: str, view: str) -> V.Sight:
    """docs/rules.md, "Who sees what", written out case by case."""
    if phase == FINISHED:
        return V.Sight.BOARDS  # after the race everyone sees everything
    if role is V.Role.RACER:
        return V.Sight.PROGRESS  # never an opponent's board while their own game is on
    if view == "outline":  # spectators and finished players alike, countdown too
        return V.Sight.OUTLINES
    if view == "delayed" and phase == RACING:
        return V.Sight.DELAYED_BOARDS
    return V.Sight.BOARDS


CASES = list(itertools.product(ROLES, V.PHASES, KINDS, SETTINGS, DELAYS))


@pytest.mark.parametrize(
    ("rated", "setting", "delay"), list(itertools.product(KINDS, SETTINGS, DELAYS))
)
def test_the_view_of_every_room_kind_and_setting(
    rated: bool, setting: tuple[str, int], delay: int
) -> None:
    assert V.room_view(rated, delay, setting) == _expected_view(rated, delay, setting)


def test_rated_play_is_a_rated_race_or_a_challenge_attempt() -> None:
    assert V.rated_play(rated=True, challenge=False)
    assert V.rated_play(rated=False, challenge=True)
    assert not V.rated_play(rated=False, challenge=False)


@pytest.mark.parametrize(("role", "phase", "rated", "setting", "delay"), CASES)
def test_sight_for_every_role_phase_room_kind_and_setting(
    role: V.Role, phase: str, rated: bool, setting: tuple[str, int], delay: int
) -> None:
    view, _ = V.room_view(rated, delay, setting)
    assert V.sight(role, phase, view) is _expected_sight(role, phase, view)


@pytest.mark.parametrize(
    ("role", "phase", "rated", "setting", "delay", "kind"),
    [(*case, kind) for case in CASES for kind in V.EVENT_KINDS],
)
def test_no_racer_ever_gets_a_board_of_a_race_that_is_on(
    role: V.Role, phase: str, rated: bool, setting: tuple[str, int], delay: int, kind: str
) -> None:
    view, _ = V.room_view(rated, delay, setting)
    s = V.sight(role, phase, view)
    how = V.delivery(kind, s)
    carries_board = how in (V.Delivery.WITH_BOARD, V.Delivery.DELAYED)
    if role is V.Role.RACER and phase != FINISHED:
        assert not carries_board and how is not V.Delivery.WITH_OUTLINE
    if rated and setting[0] == "outline" and phase != FINISHED:
        assert not carries_board  # rated play under outlines: no board before the results
    if kind == "progress":  # everyone hears of every move, boards or not
        assert how is not V.Delivery.SKIP
    if kind in ("room", "analysis", "spectators"):
        assert how is V.Delivery.PLAIN
    if how is V.Delivery.DELAYED:
        assert role is not V.Role.RACER and view == "delayed" and phase == RACING
    if how is V.Delivery.WITH_OUTLINE:
        assert s is V.Sight.OUTLINES and kind in ("progress", "boards")
    if kind == "boards":  # whole boards go only to live sight; delayed ones never early
        assert (how is V.Delivery.WITH_BOARD) == (s is V.Sight.BOARDS)


def test_roles_unknown_events_and_views() -> None:
    assert V.role_of(spectator=True, own_game_over=False) is V.Role.SPECTATOR
    assert V.role_of(spectator=False, own_game_over=False) is V.Role.RACER
    assert V.role_of(spectator=False, own_game_over=True) is V.Role.FINISHED_PLAYER
    assert V.sees_boards(V.Sight.DELAYED_BOARDS) and not V.sees_boards(V.Sight.PROGRESS)
    assert V.sees_boards(V.Sight.OUTLINES)
    with pytest.raises(ValueError):
        V.delivery("seed", V.Sight.BOARDS)
    with pytest.raises(ValueError):
        V.sight(V.Role.SPECTATOR, RACING, "blurred")
    # a room's view from its public form; one stored before views existed: its delay
    public = Room("ABCDEF", 0, {"seed": "1"}, "salt").view(0).to_json()

    def view(**fields: object) -> str:
        return RoomView.from_json({**public, **fields}).options.spectator_view

    assert view(spectator_view="outline", spectator_delay=0) == "outline"
    del public["spectator_view"]
    assert view(spectator_delay=30) == "delayed" and view(spectator_delay=0) == "live"


def _played(moves: int) -> Game:
    game = Game(Deal.from_seed("outline"), Settings(draw=3))
    for _ in range(moves):
        legal = [m for m in game.legal_moves() if m.to_wire().get("action") != "recycle"]
        game.play((legal or game.legal_moves())[-1], 0)
    return game


def test_an_outline_names_no_card_and_keeps_every_pile_size() -> None:
    for moves in (0, 5, 40):
        board = board_view(_played(moves), 1000)
        out = V.outline(board)
        assert not [s for s in _strings(out) if s in NAMES], out
        assert out["outline"] is True
        assert out["columns"] == [{"down": c["down"]} for c in board["columns"]]  # no face-up
        assert out["waste"] == {"count": board["waste"]["count"]}
        assert out["stock"] == board["stock"] and out["foundation"] == board["foundation"]
        for key in ("moves", "reached_moves", "reached_ms", "status", "score", "over"):
            assert out[key] == board[key]
        assert "foundations" not in out and "autocomplete_next" not in out
    boards = {"p1": board_view(_played(3)), "p2": board_view(_played(7))}
    assert V.shown(boards, V.Sight.BOARDS) is boards
    assert V.shown(boards, V.Sight.OUTLINES) == {p: V.outline(b) for p, b in boards.items()}


def _strings(value: object) -> list[str]:
    if isinstance(value, str):
        return [value]
    if isinstance(value, dict):
        return [s for v in value.values() for s in _strings(v)]
    if isinstance(value, list):
        return [s for v in value for s in _strings(v)]
    return []


# ---- assist ------------------------------------------------------------------------------
STATUSES = ("playing", "won", "stuck", "resigned", "out_of_time")


@pytest.mark.parametrize(
    ("practice", "phase", "status", "over"),
    list(itertools.product((False, True), V.PHASES, STATUSES, (False, True))),
)
def test_assist_rule_and_flags_agree(practice: bool, phase: str, status: str, over: bool) -> None:
    hint = assist.refusal(assist.HINT, practice, phase, status, over)
    finish = assist.refusal(assist.FINISH, practice, phase, status, over)
    # hints: a practice game that is on, nothing else
    assert (hint is None) == (practice and phase == RACING and not over)
    # finish: a practice game that is on, or a race once the race itself has finished
    # (not the player's own game: a line played meanwhile would show the live deal);
    # never a won game
    if status == "won":
        expected = False
    elif practice:
        expected = phase == RACING and not over
    else:
        expected = phase == FINISHED
    assert (finish is None) == expected
    for refused in (hint, finish):
        assert refused is None or (isinstance(refused, ServiceError) and refused.reason)
    flags = assist.flags(practice, phase, status, over)
    assert flags == {"can_hint": hint is None, "can_finish": finish is None}


def test_assist_reasons() -> None:
    def reason(*args: object) -> str | None:
        refused = assist.refusal(*args)  # type: ignore[arg-type]
        return refused.reason if refused else None

    assert reason(assist.HINT, False, RACING, "playing", False) == "not_in_practice"
    assert reason(assist.HINT, True, COUNTDOWN, "playing", False) == "not_started"
    assert reason(assist.HINT, True, FINISHED, "playing", False) == "race_over"
    assert reason(assist.HINT, True, RACING, "stuck", True) == "game_over"
    assert reason(assist.FINISH, False, RACING, "playing", False) == "race_not_over"
    assert reason(assist.FINISH, False, RACING, "resigned", True) == "race_not_over"
    assert reason(assist.FINISH, False, FINISHED, "resigned", True) is None
    assert reason(assist.FINISH, False, RACING, "won", True) == "game_over"


# ---- phase -------------------------------------------------------------------------------
def test_one_phase_rule_for_rooms_and_their_public_form() -> None:
    options = RoomOptions(time_limit=60)
    rooms = [
        Room("ABCDEF", 0, {"seed": "1"}, "salt", options),
        Room("ABCDEF", 0, {"seed": "1"}, "salt", options, status="started", start_at=1000),
        Room("ABCDEF", 0, {"seed": "1"}, "salt", options, status="finished", start_at=1000),
    ]
    for room, now in itertools.product(rooms, (0, 999, 1000, 60_999, 61_000, 99_000)):
        # the public form, made at any earlier time, gives the same phase now
        for made in range(0, now + 1, 20_000):
            view = RoomView.from_json(room.view(made).to_json())
            assert view.phase_at(now) == room.phase(now)
    assert phase_at(False, None, None, 5) == WAITING
    assert phase_at(False, 10, None, 5) == COUNTDOWN
    assert phase_at(False, 10, 20, 15) == RACING
    assert phase_at(False, 10, 20, 20) == FINISHED
    assert phase_at(True, None, None, 0) == FINISHED


def test_a_rooms_view_and_its_public_form_are_one_either_way() -> None:
    """The typed view a hub holds and the protocol's "room" (what a room event carries to
    the other nodes): every field, in the same order, whichever way round."""
    options = RoomOptions(Settings(draw=3), capacity=4, time_limit=60, spectator_delay=30)
    room, _ = add_player(Room("ABCDEF", 0, {"seed": "1"}, "salt", options), "ann", "h", 0)
    room, _ = add_player(room, "bob", "h2", 0, who="a:bob", guest=False)
    kinds = [
        room,
        replace(room, parent="QWERTY"),
        replace(
            room,
            rematch="ZXCVBN",
            challenge="daily-2026-01-01/1",
            reveal_at=99_000,
            ghost={"code": "GHOSTS", "player": "p1"},
            arena="arena-hourly",
        ),
        replace(room, arena="arena-hourly", seats=(replace(room.seats[0], sprint=True),)),
    ]
    for kind in kinds:
        started = start(kind, 0, 1000)
        for stage in (kind, started, finish(started, 5000, "all_over")):
            for now in (0, 2000, 5000, 100_000):
                public = stage.view(now).to_json()
                view = RoomView.from_json(public)
                assert view == stage.view(now)
                assert list(view.to_json().items()) == list(public.items())
                assert view.to_json(RACING)["phase"] == RACING


def test_a_sprint_is_one_seats_own_time_limit() -> None:
    """docs/rules.md, "Sprint": an arena race's player, once, before half the time limit
    has passed and the race is over; their own phase ends at it, and a race that ended
    after it with nobody there to log it judges their game out of time by it."""
    options = RoomOptions(time_limit=61, quick=True)  # a sprint: 30 s (rounded down)
    room, _ = add_player(Room("ABCDEF", 0, {"seed": "1"}, "salt", options), "ann", "h", 0)
    room, _ = add_player(room, "bob", "h2", 0)
    room = start(room, 0, 1000)  # racing from 1000 to 62_000
    with pytest.raises(RoomError) as refused:
        sprint(room, "p1", 1000)
    assert refused.value.reason == "not_arena_race"
    room = replace(room, arena="arena-hourly")
    sprinted = sprint(room, "p1", 500)  # in the countdown too
    assert [s.sprint for s in sprinted.seats] == [True, False]
    for stage, player, now, reason in [
        (sprinted, "p1", 2000, "already_sprinting"),
        (room, "p2", 31_000, "too_late"),
        (room, "p3", 2000, "not_in_room"),
        (finish(room, 5000, "all_over"), "p1", 5000, "race_over"),
    ]:
        with pytest.raises(RoomError) as refused:
            sprint(stage, player, now)
        assert refused.value.reason == reason, (player, now)
    assert sprint(room, "p2", 30_999).seats[1].sprint
    assert (sprinted.sprint_ends_at("p1"), sprinted.sprint_ends_at("p2")) == (31_000, None)
    view = RoomView.from_json(sprinted.view(2000).to_json())
    assert [(p.get("sprint"), p.get("ends_at")) for p in view.to_json()["players"]] == [
        (True, 31_000),
        (None, None),
    ]
    assert (view.phase_for("p1", 30_999), view.phase_for("p1", 31_000)) == (RACING, FINISHED)
    assert view.phase_for("p2", 31_000) == RACING and view.phase_for("p2", 62_000) == FINISHED
    assert Room.from_json(sprinted.to_json()) == sprinted
    # the race ends (everyone else's game over) after the sprinter's own limit: their game,
    # never logged out of time, is judged by it
    log = [movelog.entry("d", 1500)]
    after, before = finish(sprinted, 40_000, "all_over"), finish(sprinted, 20_000, "all_over")
    assert after.game_of(log, "p1").status == "out_of_time"
    assert after.elapsed_at_end("p1", 99_000) == 30_000
    assert after.elapsed_at_end("p2", 99_000) == 39_000
    assert after.game_of(log, "p2").status == before.game_of(log, "p1").status == "playing"


# ---- the move-log entry ------------------------------------------------------------------
def test_log_entries_round_trip_and_replay() -> None:
    game = Game.from_seed(7)
    log = []
    for at in range(3):
        played = game.play(game.legal_moves()[0], at * 100)
        log.append(movelog.entry(str(played), at * 100))
    log.append(movelog.entry(movelog.RESIGN, 900))
    assert movelog.parse(log[0]) == (str(game.log[0]), 0)
    assert movelog.at_ms(log[-1]) == 900 and not movelog.is_move(log[-1])
    assert movelog.solver_moves(log) == [str(m) for m in game.log]
    assert movelog.moves_only(log) == log[:-1]
    assert movelog.until(log, 100) == log[:2]
    replayed = movelog.replay(Game.from_seed(7), log)
    assert replayed.status == "resigned" and replayed.log == game.log
    assert movelog.logged(replayed) == 4  # the resignation took the client's seq 4
    # a sprinter's time-out, the server's: the game ends out of time; no client's seq
    timed = [*log[:-1], movelog.entry(movelog.TIMEOUT, 30_000)]
    assert not movelog.is_move(timed[-1]) and movelog.moves_only(timed) == log[:-1]
    assert movelog.solver_moves(timed) == [str(m) for m in game.log]
    replayed = movelog.replay(Game.from_seed(7), timed)
    assert replayed.status == "out_of_time" and replayed.log == game.log
    assert movelog.logged(replayed) == 3 and replayed.last_ms == 200
    # notation with "@"-free text only: the last "@" splits
    assert movelog.text_of(movelog.entry("2>5x3", 12)) == "2>5x3"
    assert Move.parse(movelog.text_of(log[0])) == game.log[0]


# ---- options and errors ------------------------------------------------------------------
def test_room_options_round_trip_and_practice_is_one_private_seat() -> None:
    options = RoomOptions(Settings(draw=3), capacity=4, time_limit=60, spectator_delay=30)
    assert RoomOptions.from_dict(options.to_dict()) == options
    practice = RoomOptions(capacity=5, practice=True)
    assert (practice.capacity, practice.private) == (1, True)
    room = Room("ABCDEF", 0, {"seed": "1"}, "salt", options)
    assert Room.from_json(room.to_json()) == room
    listed = room.listed(0)
    assert set(listed) == {
        "code",
        "phase",
        "settings",
        "capacity",
        "time_limit",
        "rank_by",
        "spectator_view",
        "players",
    }
    assert "salt" not in str(room.view(0).to_json()) and "seed" not in str(room.view(0).to_json())


def test_every_service_error_has_one_base_with_a_reason() -> None:
    for cls in (ProtocolError, RoomError):
        err = cls("why", "because", "move")
        assert isinstance(err, ServiceError) and err.reason == "why" and err.about == "move"
        assert repr(err) == f"{cls.__name__}('why', 'because')"


# ---- what opens when a challenge is final ------------------------------------------------
FINAL = 1_796_517_000_000  # 2026-12-06 00:30:00 UTC


@pytest.mark.parametrize("what", [ch.WATCH, ch.REPLAY, ch.GHOST, ch.PRACTICE, ch.SOLVER])
@pytest.mark.parametrize("own", [False, True])
def test_nothing_of_a_challenge_deal_opens_before_final_but_watching_ones_own_attempt(
    what: str, own: bool
) -> None:
    sealed = ch.sealed(what, FINAL, FINAL - 1, own)
    if own and what == ch.WATCH:  # one's own board as played, one's own result
        assert sealed is None
    else:
        assert sealed is not None and sealed.reason == "not_yet"
        assert sealed.fields() == {"opens_at": FINAL}
        when = "2026-12-06 00:30:00 UTC"
        assert str(sealed) == f"{what} opens once the challenge is final, at {when}"
    assert ch.sealed(what, FINAL, FINAL, own) is None  # at final_at, for everyone
    assert ch.sealed(what, None, 0, own) is None  # no challenge's deal
    # the solver's help asks the same rule: a resigned attempt's finish, and its flag
    refused = assist.refusal(assist.FINISH, False, FINISHED, "resigned", True, FINAL, FINAL - 1)
    assert refused is not None and refused.fields() == {"opens_at": FINAL}
    assert assist.flags(False, FINISHED, "resigned", True, FINAL, FINAL - 1)["can_finish"] is False
    assert assist.flags(False, FINISHED, "resigned", True, FINAL, FINAL)["can_finish"] is True
