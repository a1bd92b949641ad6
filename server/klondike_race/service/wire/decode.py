"""The one decode point: a frame's text -> a typed client message, or ``ProtocolError``.

``decode(data)`` parses JSON (orjson) and validates it into a frozen message
(wire/messages.py). Anything else raises ``ProtocolError`` with a machine-readable reason:

``bad_json``       the frame is not a JSON object (or not UTF-8 text)
``unknown_type``   ``type`` is missing or not a message this server knows
``missing_field``  a required field is absent
``bad_field``      a field has the wrong type, an unknown field is present, or a value is
                   out of range (the message names the field)
"""

from __future__ import annotations

import re
from collections.abc import Callable
from typing import Any

import orjson

from ...engine import DRAW_MOVE, RECYCLE_MOVE, UNDO_MOVE, Move, NotationError, Settings
from ..domain import options as O
from ..domain.errors import ProtocolError
from ..domain.room import CODE_ALPHABET, CODE_LENGTH
from . import messages as M

MAX_NAME = 24
MAX_SEQ = 1_000_000
PLAYER_ID = re.compile(r"p[1-9][0-9]{0,5}")


class _Fields:
    """Reads the fields of one message, refusing anything missing, ill-typed or extra."""

    def __init__(self, data: dict[str, Any], kind: str) -> None:
        self.data = data
        self.kind = kind
        self.seen = {"type"}

    def fail(self, reason: str, message: str) -> ProtocolError:
        return ProtocolError(reason, message, self.kind)

    def get(
        self,
        name: str,
        types: tuple[type, ...],
        required: bool = False,
        default: Any = None,
        nullable: bool = False,
    ) -> Any:
        """A field's value; absent: ``default`` (or ``missing_field``). ``null`` counts as
        absent only where the protocol allows it (``nullable``)."""
        self.seen.add(name)
        if name not in self.data or (nullable and self.data[name] is None):
            if required:
                raise self.fail("missing_field", f"{self.kind}: field {name!r} is required")
            return default
        value = self.data[name]
        if not isinstance(value, types) or (isinstance(value, bool) and bool not in types):
            names = "/".join(t.__name__ for t in types)
            raise self.fail("bad_field", f"{self.kind}: field {name!r} must be {names}")
        return value

    def int_in(
        self,
        name: str,
        low: int,
        high: int,
        required: bool = False,
        default: int | None = None,
        nullable: bool = False,
    ) -> Any:
        value = self.get(name, (int,), required, default, nullable)
        if value is not None and not low <= value <= high:
            raise self.fail("bad_field", f"{self.kind}: {name!r} must be {low} to {high}")
        return value

    def name(self) -> str:
        value: str = self.get("name", (str,), True).strip()
        if not 1 <= len(value) <= MAX_NAME:
            raise self.fail("bad_field", f"{self.kind}: 'name' must be 1 to {MAX_NAME} characters")
        if not value.isprintable():
            why = "has a control or invisible character"
            raise self.fail("bad_field", f"{self.kind}: 'name' {why}")
        return value

    def code(self) -> str:
        value: str = self.get("code", (str,), True)
        if len(value) != CODE_LENGTH or any(c not in CODE_ALPHABET for c in value):
            raise self.fail(
                "bad_field", f"{self.kind}: 'code' is {CODE_LENGTH} capitals and digits"
            )
        return value

    def player(self, required: bool = False) -> str | None:
        """A seat id: ``p1``, ``p2``, … (seats are numbered in order of joining, so a
        room may seat ``p9`` and on); whether the room has that seat is checked later."""
        value: str | None = self.get("player", (str,), required)
        if value is not None and not PLAYER_ID.fullmatch(value):
            raise self.fail("bad_field", f"{self.kind}: 'player' is a player id (p1, p2, …)")
        return value

    def done(self) -> None:
        extra = sorted(set(self.data) - self.seen)
        if extra:
            raise self.fail("bad_field", f"{self.kind}: unknown field {extra[0]!r}")


def _options(f: _Fields) -> O.RoomOptions:
    raw = f.get("settings", (dict,), default={})
    try:
        settings = Settings.from_wire(raw)  # each value as the docs write it
    except NotationError as err:
        raise f.fail("bad_field", f"create: settings: {err}") from None
    capacity = f.int_in("capacity", O.MIN_CAPACITY, O.MAX_CAPACITY, default=2)
    private = f.get("private", (bool,), default=False)
    limit = f.int_in("time_limit", O.MIN_TIME_LIMIT, O.MAX_TIME_LIMIT, nullable=True)
    rank_by = f.get("rank_by", (str,), default=O.RANK_BY[0])
    if rank_by not in O.RANK_BY:
        raise f.fail("bad_field", "create: 'rank_by' must be progress or score")
    if rank_by == "score" and settings.scoring == "none":
        raise f.fail("bad_field", "create: ranking by score needs standard or vegas scoring")
    rated = f.get("rated", (bool,), default=False)
    if rated and not private:
        raise f.fail("bad_field", "create: 'rated' is for private rooms (public ones always are)")
    practice = f.get("practice", (bool,), default=False)
    if rated and practice:
        raise f.fail("bad_field", "create: a practice game is never rated")
    if practice and ("capacity" in f.data or f.data.get("private") is False):
        why = "a practice game is one private seat (no 'capacity', no 'private': false)"
        raise f.fail("bad_field", f"create: {why}")
    if settings.undo and not practice and (rated or not private):
        why = "undo is off in rated races (a public room, or a private one with 'rated')"
        raise f.fail("bad_field", f"create: {why}")
    return O.RoomOptions(
        settings=settings,
        capacity=capacity,
        private=private,
        time_limit=limit,
        rank_by=rank_by,
        practice=practice,
        rated=rated,
        winnable_only=f.get("winnable_only", (bool,), default=False),
        spectator_delay=f.int_in("spectator_delay", 0, O.MAX_SPECTATOR_DELAY, default=0),
    )


def _create(f: _Fields) -> M.Create:
    name = f.name()
    options = _options(f)
    return M.Create(name, options, f.get("deal", (dict,)))


_ACTIONS = {"draw": DRAW_MOVE, "recycle": RECYCLE_MOVE, "undo": UNDO_MOVE}


def _move(f: _Fields) -> M.MoveRequest:
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
    return M.MoveRequest(seq, move, player)


def _resume(f: _Fields) -> M.Resume:
    token = f.get("token", (str,), True)  # any string: one that is no token is bad_token
    return M.Resume(token, f.int_in("since", 0, 2**62))


def _ping(f: _Fields) -> M.Ping:
    value = f.get("id", (int, str))
    if isinstance(value, str) and len(value) > 64:
        raise f.fail("bad_field", "ping: 'id' is at most 64 characters")
    return M.Ping(value)


def _text(f: _Fields, name: str, low: int, high: int | None, required: bool = True) -> Any:
    """A string field of ``low``-``high`` characters (``high`` None: at least ``low``; a
    password, a device identity, a session token, an account name, a challenge id: each
    one's own rules are checked where it is used)."""
    value = f.get(name, (str,), required)
    if value is None:
        return value
    if high is None and len(value) < low:
        raise f.fail("bad_field", f"{f.kind}: {name!r} has at least {low} character")
    if high is not None and not low <= len(value) <= high:
        raise f.fail("bad_field", f"{f.kind}: {name!r} has {low} to {high} characters")
    return value


def _hello(f: _Fields) -> M.Hello:
    # any string as the device: one that is not 32-64 characters of A-Z a-z 0-9 - _ is
    # ``bad_device`` (domain/players.py), whatever its length
    hello = M.Hello(f.get("device", (str,)), _text(f, "session", 1, 100, False))
    if hello.device is None and hello.session is None:
        raise f.fail("missing_field", "hello: 'device' or 'session' is required")
    return hello


def _attempt(f: _Fields) -> M.AttemptRequest:
    return M.AttemptRequest(
        _text(f, "challenge", 3, 48),
        f.name(),
        f.int_in("deal", 0, 19, default=0),
        f.get("practice", (bool,), default=False),
    )


def _quick_draw(f: _Fields) -> int:
    draw: int = f.int_in("draw", 1, 3, default=1)
    if draw == 2:
        raise f.fail("bad_field", "quick: 'draw' is 1 or 3")
    return draw


_PARSERS: dict[str, Callable[[_Fields], M.Message]] = {
    "create": _create,
    "join": lambda f: M.Join(f.code(), f.name()),
    "quick": lambda f: M.Quick(f.name(), _quick_draw(f)),
    "watch": lambda f: M.Watch(f.code()),
    "resume": _resume,
    "ready": lambda f: M.Ready(f.get("ready", (bool,), default=True)),
    "start": lambda f: M.Start(),
    "move": _move,
    "resign": lambda f: M.Resign(f.int_in("seq", 1, MAX_SEQ, required=True), f.player()),
    "leave": lambda f: M.Leave(),
    "leave_queue": lambda f: M.LeaveQueue(),
    "rooms": lambda f: M.Rooms(),
    "hint": lambda f: M.Hint(),
    "finish": lambda f: M.Finish(),
    "rematch": lambda f: M.Rematch(),
    "ping": _ping,
    "hello": _hello,
    # a new name and a new password of any length: their rules (domain/players.py) answer
    # ``bad_name`` and ``bad_password`` (the frame limit bounds them)
    "register": lambda f: M.Register(_text(f, "name", 1, None), _text(f, "password", 1, None)),
    "sign_in": lambda f: M.SignIn(_text(f, "name", 1, 64), _text(f, "password", 1, 256)),
    "sign_out": lambda f: M.SignOut(f.get("everywhere", (bool,), default=False)),
    "challenges": lambda f: M.ChallengesRequest(),
    "ghost": lambda f: M.GhostRequest(f.code(), str(f.player(required=True)), f.name()),
    "attempt": _attempt,
    "replay": lambda f: M.ReplayRequest(f.code(), f.player()),
    "watch_board": lambda f: M.WatchBoard(
        _text(f, "challenge", 3, 48), f.int_in("deal", 0, 19, default=0)
    ),
    "arenas": lambda f: M.ArenasRequest(),
    "create_arena": lambda f: M.CreateArena(
        f.get("starts", (int,), True),
        f.get("minutes", (int,), True),
        f.get("size", (int,)),
        f.get("time_limit", (int,)),
        f.get("settings", (dict,)),
        f.get("private", (bool,), default=False),
    ),
    "join_arena": lambda f: M.JoinArena(_text(f, "arena", 3, 64), f.name()),
    "pause_arena": lambda f: M.PauseArena(_text(f, "arena", 3, 64)),
    "sprint": lambda f: M.Sprint(),
    "watch_arena": lambda f: M.WatchArena(_text(f, "arena", 3, 64)),
    "change_password": lambda f: M.ChangePassword(
        _text(f, "password", 1, 256), _text(f, "new_password", 1, None)
    ),
}
CLIENT_TYPES = tuple(_PARSERS)
TYPE_OF: dict[type, str] = {
    M.Create: "create",
    M.Join: "join",
    M.Quick: "quick",
    M.Watch: "watch",
    M.Resume: "resume",
    M.Ready: "ready",
    M.Start: "start",
    M.MoveRequest: "move",
    M.Resign: "resign",
    M.Leave: "leave",
    M.LeaveQueue: "leave_queue",
    M.Rooms: "rooms",
    M.Hint: "hint",
    M.Finish: "finish",
    M.Rematch: "rematch",
    M.Ping: "ping",
    M.Hello: "hello",
    M.Register: "register",
    M.SignIn: "sign_in",
    M.SignOut: "sign_out",
    M.ChangePassword: "change_password",
    M.ChallengesRequest: "challenges",
    M.AttemptRequest: "attempt",
    M.WatchBoard: "watch_board",
    M.ArenasRequest: "arenas",
    M.CreateArena: "create_arena",
    M.JoinArena: "join_arena",
    M.PauseArena: "pause_arena",
    M.Sprint: "sprint",
    M.WatchArena: "watch_arena",
    M.GhostRequest: "ghost",
    M.ReplayRequest: "replay",
}


def decode(data: str | bytes) -> M.Message:
    """A frame's text -> a typed message, or ProtocolError (nothing else is raised)."""
    try:
        obj = orjson.loads(data)
    except orjson.JSONDecodeError:
        raise ProtocolError("bad_json", "a message is one JSON object") from None
    if not isinstance(obj, dict):
        raise ProtocolError("bad_json", "a message is one JSON object")
    kind = obj.get("type")
    parser = _PARSERS.get(kind) if isinstance(kind, str) else None
    if parser is None or not isinstance(kind, str):
        shown = kind if isinstance(kind, str) and len(kind) < 32 else "?"
        raise ProtocolError("unknown_type", f"unknown message type {shown!r}")
    fields = _Fields(obj, kind)
    message = parser(fields)
    fields.done()
    return message
