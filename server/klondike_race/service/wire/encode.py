"""The one encoder of server messages (docs/protocol.md lists every type; wire/outbound.py
gives each its shape)."""

from __future__ import annotations

from typing import Any

import orjson

from ..domain.assist import Flags
from . import outbound as out


def encode(message: out.ServerMessage) -> bytes:
    """A server message as compact JSON bytes."""
    return orjson.dumps(message)


def encode_text(message: out.ServerMessage) -> str:
    """Like ``encode``, as str: websockets sends str as a text frame."""
    return encode(message).decode()


def dumps(message: Any) -> bytes:
    """A room event as stored (``type`` included) or a part of a message as JSON bytes
    (a whole server message is ``encode``'s)."""
    return orjson.dumps(message)


def stored_event(
    event: dict[str, Any],
    phase: str,
    leaderboard: out.Standings | None,
    flags: Flags | None,
    player: str | None = None,
) -> bytes | None:
    """A room event as kept in Redis, as the message a resuming connection gets of it
    (progress without boards: a connection that sees boards resumes with a full welcome).
    A room is sent with the room's ``phase`` now, not as it was when the event was made,
    and, as every replayed event, with the ``leaderboard`` now (the stored events do not
    keep the standings after each; None: without one); ``flags``: a player's
    ``can_hint``/``can_finish`` now (None: not a player's); ``player``: the seat of the
    connection, which alone gets its own ``played`` (None: no seat's, none)."""
    kind, v = event.get("type"), event["v"]
    if kind == "progress":
        progress: out.Progress = {
            "type": "progress",
            "v": v,
            "player": event["player"],
            "progress": event["progress"],
        }
        if leaderboard is not None:
            progress["leaderboard"] = leaderboard
        return encode(progress)
    if kind == "room":
        room: out.Room = {"type": "room", "v": v, "room": {**event["room"], "phase": phase}}
        if leaderboard is not None:
            room["leaderboard"] = leaderboard
        if "results" in event:
            room["boards"] = event["results"]["boards"]
        if flags is not None:
            room["can_hint"], room["can_finish"] = flags["can_hint"], flags["can_finish"]
        return encode(room)
    if kind == "spectators":
        return encode({"type": "spectators", "v": v, "count": event["count"]})
    if kind == "analysis":
        return encode({"type": "analysis", "v": v, "analysis": event["analysis"]})
    if kind == "played":  # each player their own game's, nobody else
        own = event["played"].get(player) if player is not None else None
        return None if own is None else encode({"type": "played", "v": v, "played": own})
    return None
