"""Who may see what: the fairness core, as pure functions every delivery path asks.

On identical deals an opponent's board is hidden information (every card it shows is one
you may not have uncovered yet), so:

- a **racer** (a player whose own game is on, in a race that is on) sees the others'
  progress (foundation count, moves, time, status), never their boards;
- a **finished player** (their own game is over; the race goes on) and a **spectator**
  see the boards, ``spectator_delay`` behind the race while it runs when the room asks
  for it (a resigned seat is no second screen);
- once the race has **finished**, everyone sees everything (and the deal is revealed).

``sight`` answers what one recipient may see now; ``delivery`` what they get of each kind
of room event. docs/rules.md states the same rule.
"""

from __future__ import annotations

from enum import Enum

from .room import COUNTDOWN, FINISHED, RACING, WAITING

PHASES = (WAITING, COUNTDOWN, RACING, FINISHED)
EVENT_KINDS = ("progress", "boards", "room", "analysis", "spectators")


class Role(Enum):
    RACER = "racer"
    FINISHED_PLAYER = "finished_player"
    SPECTATOR = "spectator"


class Sight(Enum):
    PROGRESS = "progress"  # the others' progress only
    BOARDS = "boards"  # every board, live
    DELAYED_BOARDS = "delayed_boards"  # every board, as it was spectator_delay ago


class Delivery(Enum):
    SKIP = "skip"  # nothing of this event
    PLAIN = "plain"  # the event without boards
    WITH_BOARD = "with_board"  # the event with the board it changed, now
    DELAYED = "delayed"  # the event with its board, spectator_delay later


def role_of(spectator: bool, own_game_over: bool) -> Role:
    if spectator:
        return Role.SPECTATOR
    return Role.FINISHED_PLAYER if own_game_over else Role.RACER


def sight(role: Role, phase: str, delayed: bool) -> Sight:
    """What ``role`` may see of the others' games in ``phase``; ``delayed``: the room has
    a spectator delay."""
    if phase == FINISHED:
        return Sight.BOARDS
    if role is Role.RACER:
        return Sight.PROGRESS
    return Sight.DELAYED_BOARDS if delayed and phase == RACING else Sight.BOARDS


def sees_boards(s: Sight) -> bool:
    return s is not Sight.PROGRESS


def delivery(kind: str, s: Sight) -> Delivery:
    """What a recipient with sight ``s`` gets of a room event of ``kind``."""
    if kind == "progress":
        if s is Sight.PROGRESS:
            return Delivery.PLAIN
        return Delivery.DELAYED if s is Sight.DELAYED_BOARDS else Delivery.WITH_BOARD
    if kind == "boards":  # every board in full: live sight only
        return Delivery.WITH_BOARD if s is Sight.BOARDS else Delivery.SKIP
    if kind in ("room", "analysis", "spectators"):
        return Delivery.PLAIN
    raise ValueError(f"unknown event kind {kind!r}")
