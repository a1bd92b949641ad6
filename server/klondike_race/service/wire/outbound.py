"""Server messages as typed shapes: one ``TypedDict`` a type, named after it
(docs/protocol.md shows each), and the parts some share (``Own``, ``Seen``).

A message is built as a dict literal of its shape, ``type`` first, and handed to the one
encoder (wire/encode.py) as it is: mypy checks every field's name and presence where the
message is made, and nothing is checked at run time. A field holding a board or the
standings may hold them as JSON already encoded once (``orjson.Fragment``) for every
message of a move.

(No ``from __future__ import annotations`` here: ``NotRequired`` is read at run time,
by tests/service/test_outbound.py, only from evaluated annotations.)
"""

from collections.abc import Mapping
from typing import Any, Literal, NotRequired, TypedDict

import orjson

from ..domain.errors import ErrorFields

AnyBoard = Mapping[str, Any] | orjson.Fragment  # a board, its outline, or its JSON
PlayerBoards = Mapping[str, Any]  # player id -> board (or outline)
Standings = list[Any] | orjson.Fragment  # a leaderboard
PublicRoom = Mapping[str, Any]  # docs/protocol.md's "room"
Rows = list[dict[str, Any]]


# ---- players and challenges ------------------------------------------------------------
class Identity(TypedDict):
    type: Literal["identity"]
    player: Mapping[str, object] | None  # id, name, guest; None: nobody
    rooms: list[dict[str, Any]]
    session: NotRequired[str]  # a session just made


class Challenges(TypedDict):
    type: Literal["challenges"]
    server_time: int
    challenges: list[dict[str, Any]]


class Leaderboard(TypedDict):
    type: Literal["leaderboard"]
    challenge: str
    deal: int
    v: int
    ranks: str
    players: int
    final: bool
    rows: Rows
    guests: int
    guest_rows: Rows


class LeaderboardChanges(TypedDict):
    type: Literal["leaderboard_changes"]
    challenge: str
    deal: int
    v: int
    base: int
    players: int
    final: bool
    changed: Rows
    gone: list[str]
    guests: int
    guest_changed: Rows
    guest_gone: list[str]


class LeaderboardYou(TypedDict):
    type: Literal["leaderboard_you"]
    challenge: str
    deal: int
    guests: bool  # which list: the guests' or the ranked one
    rows: Rows


class Replay(TypedDict):
    type: Literal["replay"]
    replay: dict[str, Any]


# ---- a room's state --------------------------------------------------------------------
class Own(TypedDict, total=False):
    """A player's own part of a ``welcome``, ``resync`` or ``resumed`` (none for others):
    id, sequence number, board (once the race has started), flags."""

    player: str
    seq: int
    board: AnyBoard
    can_hint: bool
    can_finish: bool


class Seen(Own):
    """Everything a connection may see of a room now: a ``welcome`` or ``resync``."""

    v: int
    role: str
    room: PublicRoom
    progress: Mapping[str, Any]  # player id -> progress
    leaderboard: Standings
    spectators: int
    server_time: int
    token: NotRequired[str]  # a seat just taken (a welcome's only)
    boards: NotRequired[PlayerBoards]
    analysis: NotRequired[dict[str, Any]]
    played: NotRequired[dict[str, Any]]  # a player's own, once their room's games counted


class Welcome(Seen):
    type: Literal["welcome"]


class Resync(Seen):
    type: Literal["resync"]


class Resumed(Own):
    type: Literal["resumed"]
    v: int
    role: str
    server_time: int
    room: PublicRoom


class Start(TypedDict):
    type: Literal["start"]
    player: NotRequired[str]  # a racer: their board and flags
    board: NotRequired[AnyBoard]
    can_hint: NotRequired[bool]
    can_finish: NotRequired[bool]
    boards: NotRequired[PlayerBoards]  # anyone else: every board as they see them
    server_time: int
    room: PublicRoom


# ---- moves and room events ---------------------------------------------------------------
class Ack(TypedDict):
    type: Literal["ack"]
    seq: int
    move: str
    v: NotRequired[int]  # not in a duplicate's
    duplicate: NotRequired[bool]
    board: AnyBoard
    leaderboard: NotRequired[Standings]  # not in a duplicate's
    can_hint: bool
    can_finish: bool


class Refused(TypedDict):
    type: Literal["refused"]
    seq: int
    reason: str
    message: str


class Progress(TypedDict):
    type: Literal["progress"]
    v: int
    player: str
    progress: Mapping[str, Any]
    board: NotRequired[AnyBoard]  # for those who see boards (or outlines)
    leaderboard: NotRequired[Standings]  # none replayed to those who see the race behind


class Boards(TypedDict):
    type: Literal["boards"]
    boards: PlayerBoards


class Room(TypedDict):
    type: Literal["room"]
    v: int
    room: PublicRoom
    leaderboard: NotRequired[Standings]  # none to those who see the race behind
    boards: NotRequired[PlayerBoards]  # the results'
    can_hint: NotRequired[bool]  # a player's flags
    can_finish: NotRequired[bool]


class Analysis(TypedDict):
    type: Literal["analysis"]
    v: int
    analysis: dict[str, Any]


class Played(TypedDict):
    """A player's own game's effect on their play statistics (node/played.py)."""

    type: Literal["played"]
    v: int
    played: dict[str, Any]


class Spectators(TypedDict):
    type: Literal["spectators"]
    v: int
    count: int


# ---- the lobby, the solver's help, the rest ------------------------------------------------
class Left(TypedDict):
    type: Literal["left"]
    code: str


class Rooms(TypedDict):
    type: Literal["rooms"]
    rooms: list[dict[str, Any]]
    online: int
    racing: int


class Queued(TypedDict):
    type: Literal["queued"]
    draw: int


class Unqueued(TypedDict):
    type: Literal["unqueued"]
    draw: int


class Matched(TypedDict):
    type: Literal["matched"]
    token: str


# (functional form: ``from`` is a keyword)
Hint = TypedDict(
    "Hint",
    {
        "type": Literal["hint"],
        "result": str,
        "move": str,
        "line": int,
        "from": NotRequired[str],  # the move's wire fields: a card move's
        "to": NotRequired[str],
        "count": NotRequired[int],
        "action": NotRequired[str],  # or an action's
    },
)


class Finishing(TypedDict):
    type: Literal["finishing"]
    seq: int
    moves: int


# ---- arenas ------------------------------------------------------------------------------
class Arenas(TypedDict):
    type: Literal["arenas"]
    server_time: int
    arenas: list[dict[str, Any]]


class Arena(TypedDict):
    type: Literal["arena"]
    arena: Mapping[str, Any]
    v: int
    table: Rows
    top_race: str | None  # the race of the best placed player racing (the arena's TV)
    you: Mapping[str, Any] | None
    server_time: int


class ArenaChanges(TypedDict):
    type: Literal["arena_changes"]
    arena: str
    v: int
    base: int  # the v of the rows it changes
    changed: Rows
    gone: list[str]
    top_race: str | None
    phase: str  # where the arena is at (its public state's)
    pairing: bool
    final: bool
    server_time: int


class ArenaYou(TypedDict):
    type: Literal["arena_you"]
    arena: str
    you: Mapping[str, Any] | None
    rows: Rows  # the player's place and the rows around it, outside the first rows


class ArenaRace(TypedDict):
    type: Literal["arena_race"]
    arena: str
    token: str


class ArenaMade(TypedDict):  # the answer to create_arena, to its maker only
    type: Literal["arena_made"]
    arena: Mapping[str, Any]
    server_time: int


class Pong(TypedDict):
    type: Literal["pong"]
    id: int | str | None
    server_time: int


class Error(ErrorFields):  # with retry_after (rate_limited), opens_at (not_yet)
    type: Literal["error"]
    reason: str
    message: str
    about: str | None  # the client message type, when it is known


ServerMessage = (
    Identity
    | Challenges
    | Leaderboard
    | LeaderboardChanges
    | LeaderboardYou
    | Replay
    | Welcome
    | Resync
    | Resumed
    | Start
    | Ack
    | Refused
    | Progress
    | Boards
    | Room
    | Analysis
    | Played
    | Spectators
    | Left
    | Rooms
    | Queued
    | Unqueued
    | Matched
    | Hint
    | Finishing
    | Arenas
    | Arena
    | ArenaChanges
    | ArenaYou
    | ArenaRace
    | ArenaMade
    | Pong
    | Error
)
