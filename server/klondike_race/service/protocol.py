"""The wire: every client message is decoded here, and every server message encoded here.

``decode(data)`` is the one decode point: it parses JSON (orjson) and validates it into a
frozen, typed message, or raises ``ProtocolError`` with a machine-readable ``reason``
(docs/protocol.md lists them). ``encode(type, **fields)`` is the one encoder.

Errors of the wire (``ProtocolError.reason``):

``bad_json``       the frame is not a JSON object (or not UTF-8 text)
``unknown_type``   ``type`` is missing or not a message this server knows
``missing_field``  a required field is absent
``bad_field``      a field has the wrong type, an unknown field is present, or a value is
                   out of range (the message names the field)
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import Any

import orjson

from ..engine import DRAW_MOVE, RECYCLE_MOVE, UNDO_MOVE, Move, NotationError, Settings

MAX_NAME = 24
MAX_SEQ = 1_000_000
MIN_CAPACITY, MAX_CAPACITY = 2, 8
MIN_TIME_LIMIT, MAX_TIME_LIMIT = 10, 4 * 3600  # seconds
MAX_SPECTATOR_DELAY = 300  # seconds
CODE_ALPHABET = "ABCDEFGHJKLMNPQRSTUVWXYZ23456789"
CODE_LENGTH = 6


class ProtocolError(Exception):
    """A client message that cannot be accepted as it stands. Nothing was changed."""

    def __init__(self, reason: str, message: str, about: str | None = None) -> None:
        super().__init__(message)
        self.reason = reason
        self.about = about  # the message type, when it is known

    def __repr__(self) -> str:
        return f"ProtocolError({self.reason!r}, {str(self)!r})"


# ---- client messages -------------------------------------------------------------------
@dataclass(frozen=True, slots=True)
class Create:
    name: str
    settings: Settings
    capacity: int = 2
    private: bool = False
    time_limit: int | None = None  # seconds
    rank_by: str = "progress"
    deal: dict | None = None  # {"seed": S} or {"cards": [...]}, only on a dev server
    practice: bool = False  # one player, starts at once, hints and finish allowed
    winnable_only: bool = False  # deal a seed the solver proves winnable
    spectator_delay: int = 0  # seconds spectators see the race behind it


@dataclass(frozen=True, slots=True)
class Join:
    code: str
    name: str


@dataclass(frozen=True, slots=True)
class Quick:
    name: str


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
    | Rooms
    | Hint
    | Finish
    | Rematch
    | Ping
)


class _Fields:
    """Reads the fields of one message, refusing anything missing, ill-typed or extra."""

    def __init__(self, data: dict, kind: str) -> None:
        self.data = data
        self.kind = kind
        self.seen = {"type"}

    def fail(self, reason: str, message: str) -> ProtocolError:
        return ProtocolError(reason, message, self.kind)

    def get(self, name: str, types: tuple, required: bool = False, default: Any = None) -> Any:
        self.seen.add(name)
        if name not in self.data or self.data[name] is None:
            if required:
                raise self.fail("missing_field", f"{self.kind}: field {name!r} is required")
            return default
        value = self.data[name]
        if not isinstance(value, types) or (isinstance(value, bool) and bool not in types):
            names = "/".join(t.__name__ for t in types)
            raise self.fail("bad_field", f"{self.kind}: field {name!r} must be {names}")
        return value

    def int_in(self, name: str, low: int, high: int, required: bool = False, default=None):
        value = self.get(name, (int,), required, default)
        if value is not None and not low <= value <= high:
            raise self.fail("bad_field", f"{self.kind}: {name!r} must be {low} to {high}")
        return value

    def name(self) -> str:
        value = self.get("name", (str,), True).strip()
        if not 1 <= len(value) <= MAX_NAME or not value.isprintable():
            raise self.fail("bad_field", f"{self.kind}: 'name' must be 1 to {MAX_NAME} characters")
        return value

    def code(self) -> str:
        value = self.get("code", (str,), True).strip().upper()
        if len(value) != CODE_LENGTH or any(c not in CODE_ALPHABET for c in value):
            raise self.fail("bad_field", f"{self.kind}: 'code' is {CODE_LENGTH} letters/digits")
        return value

    def player(self) -> str | None:
        value = self.get("player", (str,))
        if value is not None and len(value) > 16:
            raise self.fail("bad_field", f"{self.kind}: 'player' is a player id")
        return value

    def done(self) -> None:
        extra = sorted(set(self.data) - self.seen)
        if extra:
            raise self.fail("bad_field", f"{self.kind}: unknown field {extra[0]!r}")


def _create(f: _Fields) -> Create:
    name = f.name()
    raw = f.get("settings", (dict,), default={})
    try:
        settings = Settings.from_dict(raw)
    except NotationError as err:
        raise f.fail("bad_field", f"create: settings: {err}") from None
    capacity = f.int_in("capacity", MIN_CAPACITY, MAX_CAPACITY, default=2)
    private = f.get("private", (bool,), default=False)
    limit = f.int_in("time_limit", MIN_TIME_LIMIT, MAX_TIME_LIMIT)
    rank_by = f.get("rank_by", (str,), default="progress")
    if rank_by not in ("progress", "score"):
        raise f.fail("bad_field", "create: 'rank_by' must be progress or score")
    if rank_by == "score" and settings.scoring == "none":
        raise f.fail("bad_field", "create: ranking by score needs standard or vegas scoring")
    deal = f.get("deal", (dict,))
    practice = f.get("practice", (bool,), default=False)
    winnable_only = f.get("winnable_only", (bool,), default=False)
    delay = f.int_in("spectator_delay", 0, MAX_SPECTATOR_DELAY, default=0)
    if practice:
        capacity, private = 1, True
    return Create(
        name, settings, capacity, private, limit, rank_by, deal, practice, winnable_only, delay
    )


_ACTIONS = {"draw": DRAW_MOVE, "recycle": RECYCLE_MOVE, "undo": UNDO_MOVE}


def _move(f: _Fields) -> MoveRequest:
    seq = f.int_in("seq", 1, MAX_SEQ, required=True)
    player = f.player()
    action = f.get("action", (str,))
    if action is not None:
        if action not in _ACTIONS:
            raise f.fail("bad_field", "move: 'action' must be draw, recycle or undo")
        move = _ACTIONS[action]
    else:
        src = f.get("from", (str,), True)
        dst = f.get("to", (str,), True)
        count = f.int_in("count", 1, 13, default=1)
        try:
            move = Move.from_wire(src, dst, count)
        except NotationError as err:
            raise f.fail("bad_field", f"move: {err}") from None
    return MoveRequest(seq, move, player)


def _resume(f: _Fields) -> Resume:
    token = f.get("token", (str,), True)
    if not 10 <= len(token) <= 100:
        raise f.fail("bad_field", "resume: 'token' is the token given at join")
    return Resume(token, f.int_in("since", 0, 2**62))


def _ping(f: _Fields) -> Ping:
    value = f.get("id", (int, str))
    if isinstance(value, str) and len(value) > 64:
        raise f.fail("bad_field", "ping: 'id' is at most 64 characters")
    return Ping(value)


_PARSERS = {
    "create": _create,
    "join": lambda f: Join(f.code(), f.name()),
    "quick": lambda f: Quick(f.name()),
    "watch": lambda f: Watch(f.code()),
    "resume": _resume,
    "ready": lambda f: Ready(f.get("ready", (bool,), default=True)),
    "start": lambda f: Start(),
    "move": _move,
    "resign": lambda f: Resign(f.int_in("seq", 1, MAX_SEQ, required=True), f.player()),
    "leave": lambda f: Leave(),
    "rooms": lambda f: Rooms(),
    "hint": lambda f: Hint(),
    "finish": lambda f: Finish(),
    "rematch": lambda f: Rematch(),
    "ping": _ping,
}
CLIENT_TYPES = tuple(_PARSERS)
TYPE_OF = {
    Create: "create",
    Join: "join",
    Quick: "quick",
    Watch: "watch",
    Resume: "resume",
    Ready: "ready",
    Start: "start",
    MoveRequest: "move",
    Resign: "resign",
    Leave: "leave",
    Rooms: "rooms",
    Hint: "hint",
    Finish: "finish",
    Rematch: "rematch",
    Ping: "ping",
}


def decode(data: str | bytes) -> Message:
    """The one decode point: a frame's text -> a typed message, or ProtocolError."""
    try:
        obj = orjson.loads(data)
    except orjson.JSONDecodeError:
        raise ProtocolError("bad_json", "a message is one JSON object") from None
    if not isinstance(obj, dict):
        raise ProtocolError("bad_json", "a message is one JSON object")
    kind = obj.get("type")
    parser = _PARSERS.get(kind) if isinstance(kind, str) else None
    if parser is None:
        shown = kind if isinstance(kind, str) and len(kind) < 32 else "?"
        raise ProtocolError("unknown_type", f"unknown message type {shown!r}")
    fields = _Fields(obj, kind)
    message = parser(fields)
    fields.done()
    return message


# ---- server messages -------------------------------------------------------------------
def encode(type: str, **fields: Any) -> bytes:
    """The one encoder: ``{"type": type, **fields}`` as compact JSON bytes."""
    return orjson.dumps({"type": type, **fields})


def dumps(message: dict) -> bytes:
    """A whole message (``type`` included) as compact JSON bytes, e.g. a room event."""
    return orjson.dumps(message)


def encode_text(type: str, **fields: Any) -> str:
    """Like ``encode``, as str: websockets sends str as a text frame."""
    return encode(type, **fields).decode()


def error(reason: str, message: str, about: str | None = None, **extra: Any) -> str:
    return encode_text("error", reason=reason, message=message, about=about, **extra)
