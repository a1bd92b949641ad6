"""The one encoder of server messages (docs/protocol.md lists every type)."""

from __future__ import annotations

from typing import Any, Literal

import orjson

ServerType = Literal[
    "identity",
    "challenges",
    "leaderboard",
    "leaderboard_you",
    "leaderboard_changes",
    "arenas",
    "arena",
    "arena_race",
    "replay",
    "welcome",
    "resumed",
    "resync",
    "start",
    "ack",
    "refused",
    "progress",
    "boards",
    "room",
    "analysis",
    "spectators",
    "left",
    "rooms",
    "queued",
    "matched",
    "hint",
    "finishing",
    "pong",
    "error",
]


def encode(type: ServerType, **fields: Any) -> bytes:
    """``{"type": type, **fields}`` as compact JSON bytes."""
    return orjson.dumps({"type": type, **fields})


def encode_text(type: ServerType, **fields: Any) -> str:
    """Like ``encode``, as str: websockets sends str as a text frame."""
    return encode(type, **fields).decode()


def dumps(message: Any) -> bytes:
    """A whole message, a room event (``type`` included) or a part of one as JSON bytes."""
    return orjson.dumps(message)


def error(reason: str, message: str, about: str | None = None, **extra: Any) -> str:
    return encode_text("error", reason=reason, message=message, about=about, **extra)


def stored_event(
    event: dict[str, Any], phase: str, leaderboard: Any, flags: dict[str, bool]
) -> bytes | None:
    """A room event as kept in Redis, as the message a resuming connection gets of it
    (progress without boards: a connection that sees boards resumes with a full welcome).
    A room is sent with the room's ``phase`` now, not as it was when the event was made,
    and, as every replayed event, with the ``leaderboard`` now (the stored events do not
    keep the standings after each; None: without one); ``flags``: a player's
    ``can_hint``/``can_finish`` now."""
    kind, v = event.get("type"), event["v"]
    standings = {} if leaderboard is None else {"leaderboard": leaderboard}
    if kind == "progress":
        return encode(
            "progress", v=v, player=event["player"], progress=event["progress"], **standings
        )
    if kind == "room":
        fields = {"v": v, "room": {**event["room"], "phase": phase}, **standings}
        if "results" in event:
            fields["boards"] = event["results"]["boards"]
        return encode("room", **fields, **flags)
    if kind == "spectators":
        return encode("spectators", v=v, count=event["count"])
    if kind == "analysis":
        return encode("analysis", v=v, analysis=event["analysis"])
    return None
