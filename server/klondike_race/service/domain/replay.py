"""Replays of finished rooms (docs/protocol.md, "Replays"), pure: from a room and its
players' stored move logs to each player's game record and the frames a browser shows.

A player's frames are the board (engine ``board_view``) after each log entry, sent as
the difference from the board before it (``delta``): only the top-level fields that
changed, ``columns`` as ``{index: column}`` of the changed columns and ``foundations``
as ``{suit: top}`` of the changed suits. ``apply_delta`` goes forward; a client keeps
the boards it computed, so stepping back is a look-up. The timeline merges every
player's entries by race time (``at_ms``; equal times in seat order), as spectators saw
them. Who may see a replay, and when, is ``refusal``'s question.
"""

from __future__ import annotations

from collections.abc import Mapping
from typing import Any

from ...engine import Game, GameRecord, board_view, progress
from . import challenge, movelog
from .errors import ServiceError
from .room import CODE_ALPHABET, CODE_LENGTH, FINISHED, Room, as_ended

END = "end"  # the frame of a race's end when it changed a board (out of time, a timed score)


def valid_code(code: str) -> bool:
    return len(code) == CODE_LENGTH and all(c in CODE_ALPHABET for c in code)


def refusal(room: Room, parent: Room | None, now: int) -> tuple[int, ServiceError] | None:
    """Why ``room`` cannot be replayed now, as (HTTP status, the error), or None. A room
    is replayed once finished; a game on a challenge's deal (an attempt, a practice game
    or ghost race on it, or a practice continuation of one: ``parent``) only once its
    challenge is final (``reveal_at``), whoever asks (``challenge.sealed``: ``not_yet``,
    with ``opens_at``)."""
    gate = parent if room.parent else room
    sealed = challenge.sealed(challenge.REPLAY, gate.reveal_at if gate else None, now)
    if sealed is not None:
        return 403, sealed
    if room.status != FINISHED:  # (its time limit passed: the results are being made)
        if room.phase(now) == FINISHED:
            message = f"room {room.code} is ending: its results come shortly"
            return 409, ServiceError("not_finished", message)
        return 409, ServiceError("not_finished", f"room {room.code} has not finished")
    if gate is None:  # a continuation whose race has expired: nothing to check it by
        return 404, ServiceError("no_replay", f"no replay of {room.code}")
    return None


def delta(before: Mapping[str, Any], after: Mapping[str, Any]) -> dict[str, Any]:
    """The fields of board ``after`` that differ from ``before`` (see the module's doc)."""
    out: dict[str, Any] = {}
    for key, value in after.items():
        old = before.get(key)
        if old == value:
            continue
        if key == "columns":
            pairs = enumerate(zip(before[key], value, strict=True))
            out[key] = {str(i): c for i, (o, c) in pairs if o != c}
        elif key == "foundations":
            out[key] = {s: c for s, c in value.items() if before[key].get(s) != c}
        else:
            out[key] = value
    return out


def apply_delta(before: Mapping[str, Any], change: Mapping[str, Any]) -> dict[str, Any]:
    """The board after ``change`` (``delta``'s inverse: apply_delta(a, delta(a, b)) == b)."""
    out = dict(before)
    for key, value in change.items():
        if key == "columns":
            columns = list(before["columns"])
            for i, column in value.items():
                columns[int(i)] = column
            out[key] = columns
        elif key == "foundations":
            out[key] = {**before["foundations"], **value}
        else:
            out[key] = value
    return out


def player_replay(room: Room, pid: str, log: list[str], now: int) -> dict[str, Any]:
    """One player's replay: their game record, the initial board, one frame per log entry
    (``at_ms``, ``move`` the entry's text: a move's notation, ``resign`` or ``timeout``;
    ``board`` the delta), an ``end`` frame when the race's end changed the board, and
    the final progress."""
    game = Game(room.game_deal, room.settings)
    first = board_view(game, 0)
    last = first
    frames: list[dict[str, Any]] = []
    for line in log:
        text = movelog.apply(game, line)
        ms = movelog.at_ms(line)
        board = board_view(game, ms)
        frames.append({"at_ms": ms, "move": text, "board": delta(last, board)})
        last = board
    elapsed = room.elapsed_at_end(pid, now, game, log)
    as_ended(game, room.ended_for(pid))
    final = board_view(game, elapsed)
    if final != last:
        frames.append(
            {
                "at_ms": max(elapsed, frames[-1]["at_ms"] if frames else 0),
                "move": END,
                "board": delta(last, final),
            }
        )
    record = GameRecord(
        room.game_deal, room.settings, game.log[:], game.times[:], game.ended
    ).to_json()
    return {
        "record": record,
        "initial": first,
        "frames": frames,
        "final": {**progress(game, elapsed), "last_ms": game.last_ms},
    }


def timeline(players: list[tuple[str, list[dict[str, Any]]]]) -> list[str]:
    """Every frame of every player in race-time order, as the player id of each (the
    n-th time a player appears is their n-th frame); equal times in seat order."""
    steps = [
        (frame["at_ms"], seat, i, pid)
        for seat, (pid, frames) in enumerate(players)
        for i, frame in enumerate(frames)
    ]
    return [pid for *_, pid in sorted(steps)]


def replay(room: Room, logs: dict[str, list[str]], now: int) -> dict[str, Any]:
    """A finished room's replay (``refusal`` was asked first): the room's public form
    (with its reveal), each player's replay and the merged timeline."""
    players = []
    for seat in room.seats:
        one = player_replay(room, seat.id, logs.get(seat.id, []), now)
        players.append({"id": seat.id, "name": seat.name, "who": seat.who or None, **one})
    public = room.view(now).to_json()
    if room.parent and "reveal" not in public:  # the race's deal, revealed by its own room
        deal = room.game_deal
        public["reveal"] = {"seed": deal.seed, "deal": deal.id}
    return {
        "code": room.code,
        "room": public,
        "players": players,
        "timeline": timeline([(p["id"], p["frames"]) for p in players]),
    }
