"""Client messages as frozen, typed values (docs/protocol.md describes each)."""

from __future__ import annotations

from dataclasses import dataclass, field
from typing import Any

from ...engine import Move
from ..domain.options import RoomOptions


@dataclass(frozen=True, slots=True)
class Create:
    name: str
    options: RoomOptions
    deal: dict[str, Any] | None = None  # {"seed": S} or {"cards": [...]}, dev servers only


@dataclass(frozen=True, slots=True)
class Join:
    code: str
    name: str


@dataclass(frozen=True, slots=True)
class Quick:
    name: str
    draw: int = 1  # the variant: Draw 1 or Draw 3, default settings otherwise


@dataclass(frozen=True, slots=True)
class Watch:
    code: str


@dataclass(frozen=True, slots=True)
class Resume:
    token: str
    since: int | None = None


@dataclass(frozen=True, slots=True)
class Ready:
    ready: bool = True


@dataclass(frozen=True, slots=True)
class Start:
    pass


@dataclass(frozen=True, slots=True)
class MoveRequest:
    seq: int
    move: Move
    player: str | None = None


@dataclass(frozen=True, slots=True)
class Resign:
    seq: int
    player: str | None = None


@dataclass(frozen=True, slots=True)
class Leave:
    pass


@dataclass(frozen=True, slots=True)
class LeaveQueue:
    pass


@dataclass(frozen=True, slots=True)
class Rooms:
    pass


@dataclass(frozen=True, slots=True)
class Hint:
    pass


@dataclass(frozen=True, slots=True)
class Finish:
    pass


@dataclass(frozen=True, slots=True)
class Rematch:
    pass


@dataclass(frozen=True, slots=True)
class Ping:
    id: int | str | None = None


@dataclass(frozen=True, slots=True)
class Hello:
    """Who this connection is: a guest (``device``), or an account (``session``)."""

    device: str | None = None
    session: str | None = None


@dataclass(frozen=True, slots=True)
class Register:
    name: str
    password: str = field(repr=False)


@dataclass(frozen=True, slots=True)
class SignIn:
    name: str
    password: str = field(repr=False)


@dataclass(frozen=True, slots=True)
class SignOut:
    everywhere: bool = False


@dataclass(frozen=True, slots=True)
class ChangePassword:
    password: str = field(repr=False)
    new_password: str = field(repr=False)


@dataclass(frozen=True, slots=True)
class ChallengesRequest:
    pass


@dataclass(frozen=True, slots=True)
class AttemptRequest:
    challenge: str
    name: str
    deal: int = 0
    practice: bool = False


@dataclass(frozen=True, slots=True)
class WatchBoard:
    challenge: str
    deal: int = 0


@dataclass(frozen=True, slots=True)
class ArenasRequest:
    pass


@dataclass(frozen=True, slots=True)
class CreateArena:
    """A player's own arena (domain/arena.py's ``created`` checks the bounds)."""

    starts: int  # epoch ms
    minutes: int
    size: int | None = None
    time_limit: int | None = None
    settings: dict[str, Any] | None = None
    private: bool = False


@dataclass(frozen=True, slots=True)
class JoinArena:
    arena: str
    name: str


@dataclass(frozen=True, slots=True)
class PauseArena:
    arena: str


@dataclass(frozen=True, slots=True)
class Sprint:
    """Race this arena race with half its time limit (before one's first move)."""


@dataclass(frozen=True, slots=True)
class WatchArena:
    arena: str


@dataclass(frozen=True, slots=True)
class GhostRequest:
    code: str
    player: str
    name: str


@dataclass(frozen=True, slots=True)
class ReplayRequest:
    code: str
    player: str | None = None


Message = (
    Create
    | Join
    | Quick
    | Watch
    | Resume
    | Ready
    | Start
    | MoveRequest
    | Resign
    | Leave
    | LeaveQueue
    | Rooms
    | Hint
    | Finish
    | Rematch
    | Ping
    | Hello
    | Register
    | SignIn
    | SignOut
    | ChangePassword
    | ChallengesRequest
    | AttemptRequest
    | WatchBoard
    | ArenasRequest
    | CreateArena
    | JoinArena
    | PauseArena
    | Sprint
    | WatchArena
    | GhostRequest
    | ReplayRequest
)
