"""Who may see what: the fairness core, as pure functions every delivery path asks.

On identical deals an opponent's board is hidden information (every card it shows is one
you may not have uncovered yet), so:

- a **racer** (a player whose own game is on, in a race that is on) sees the others'
  progress (foundation count, moves, time, status), never their boards;
- a **finished player** (their own game is over; the race goes on) and a **spectator**
  see what the room's **spectator view** shows while the race runs: every board live
  (``live``), every board ``spectator_delay`` behind (``delayed``), or every board's
  **outline** (``outline``: pile sizes and progress, no card at all), the same for both
  (a resigned seat, or a second browser, is no second screen);
- once the race has **finished**, everyone sees everything (and the deal is revealed).

A room's spectator view is fixed when it is made (``room_view``): rated play (a public
room, a quick match, a rated private room, a challenge attempt) gets the operator's
``KR_RATED_SPECTATORS`` (outlines by default, or boards forced that far behind); an
unrated room its owner's ``spectator_delay`` (live by default).

``sight`` answers what one recipient may see now; ``delivery`` what they get of each kind
of room event; ``outline`` what an outline shows of a board. docs/rules.md states the
same rule.
"""

from __future__ import annotations

from collections.abc import Mapping
from enum import Enum
from typing import Any

from .room import COUNTDOWN, FINISHED, RACING, WAITING

PHASES = (WAITING, COUNTDOWN, RACING, FINISHED)
EVENT_KINDS = ("progress", "boards", "room", "analysis", "spectators")

# a room's spectator view (its public ``spectator_view``): what spectators and finished
# players see of the boards while the race runs
LIVE, DELAYED, OUTLINE = "live", "delayed", "outline"
VIEWS = (LIVE, DELAYED, OUTLINE)
# what an outline keeps of a board besides its piles: the progress and the game's state,
# none of which names a card
OUTLINE_FIELDS = (
    "stock", "recycles", "passes_left", "autocomplete", "over",
    "foundation", "moves", "reached_moves", "reached_ms", "status", "score",
)  # fmt: skip


class Role(Enum):
    RACER = "racer"
    FINISHED_PLAYER = "finished_player"
    SPECTATOR = "spectator"


class Sight(Enum):
    PROGRESS = "progress"  # the others' progress only
    BOARDS = "boards"  # every board, live
    DELAYED_BOARDS = "delayed_boards"  # every board, as it was spectator_delay ago
    OUTLINES = "outlines"  # every board's outline, live


class Delivery(Enum):
    SKIP = "skip"  # nothing of this event
    PLAIN = "plain"  # the event without boards
    WITH_BOARD = "with_board"  # the event with the board it changed, now
    WITH_OUTLINE = "with_outline"  # the event with the outline of the board it changed
    DELAYED = "delayed"  # the event with its board, spectator_delay later


def rated_play(rated: bool, challenge: bool) -> bool:
    """Whether a room is rated play, whose spectators see what the operator says: a race
    that moves ratings (public, quick match, rated private) or a challenge attempt."""
    return rated or challenge


def room_view(rated: bool, delay: int, setting: tuple[str, int]) -> tuple[str, int]:
    """The spectator view and ``spectator_delay`` (seconds) a new room gets: rated play
    (``rated``) the operator's ``setting`` (``KR_RATED_SPECTATORS``: ``("outline", 0)``, or
    ``("delayed", seconds)``, never less than the owner's own ``delay``); an unrated room
    its owner's ``delay`` (0: live). An outline room has no delay: it shows no card."""
    if not rated:
        return (DELAYED if delay else LIVE), delay
    kind, seconds = setting
    if kind == OUTLINE:
        return OUTLINE, 0
    return DELAYED, max(delay, seconds)


def role_of(spectator: bool, own_game_over: bool) -> Role:
    if spectator:
        return Role.SPECTATOR
    return Role.FINISHED_PLAYER if own_game_over else Role.RACER


def sight(role: Role, phase: str, view: str) -> Sight:
    """What ``role`` may see of the others' games in ``phase`` of a room whose spectator
    view is ``view``."""
    if view not in VIEWS:
        raise ValueError(f"unknown spectator view {view!r}")
    if phase == FINISHED:
        return Sight.BOARDS
    if role is Role.RACER:
        return Sight.PROGRESS
    if view == OUTLINE:
        return Sight.OUTLINES
    return Sight.DELAYED_BOARDS if view == DELAYED and phase == RACING else Sight.BOARDS


def sees_boards(s: Sight) -> bool:
    return s is not Sight.PROGRESS


def delivery(kind: str, s: Sight) -> Delivery:
    """What a recipient with sight ``s`` gets of a room event of ``kind``."""
    if kind == "progress":
        if s is Sight.PROGRESS:
            return Delivery.PLAIN
        if s is Sight.OUTLINES:
            return Delivery.WITH_OUTLINE
        return Delivery.DELAYED if s is Sight.DELAYED_BOARDS else Delivery.WITH_BOARD
    if kind == "boards":  # every board now: live sight in full, outline sight outlined
        if s is Sight.OUTLINES:
            return Delivery.WITH_OUTLINE
        return Delivery.WITH_BOARD if s is Sight.BOARDS else Delivery.SKIP
    if kind in ("room", "analysis", "spectators"):
        return Delivery.PLAIN
    raise ValueError(f"unknown event kind {kind!r}")


def outline(board: Mapping[str, Any]) -> dict[str, Any]:
    """What an outline shows of a ``board`` (engine ``board_view``): each column's
    face-down count, the stock's and the waste's counts, the foundation count and the
    progress, and no card: not a face-up one, not the waste's, not a foundation's top
    (with the pile sizes of each move, a top that changed would say which card lay where,
    in the stock or face down, on everyone's deal), and no column's face-up count (a card
    that lands on a column whose top every racer of the deal saw dealt would be one of two:
    docs/rules.md, "Who sees what")."""
    return {
        "outline": True,
        "columns": [{"down": c["down"]} for c in board["columns"]],
        "waste": {"count": board["waste"]["count"]},
        **{k: board[k] for k in OUTLINE_FIELDS},
    }


def shown(boards: dict[str, Any], s: Sight) -> dict[str, Any]:
    """Every board of ``boards`` as a recipient with sight ``s`` may see it."""
    if s is Sight.OUTLINES:
        return {pid: outline(board) for pid, board in boards.items()}
    return boards
