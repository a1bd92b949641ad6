"""The wire: client messages (typed, decoded at one point) and the one encoder."""

from .decode import CLIENT_TYPES, TYPE_OF, decode
from .encode import dumps, encode, encode_text, error
from .messages import (
    Create,
    Finish,
    Hint,
    Join,
    Leave,
    Message,
    MoveRequest,
    Ping,
    Quick,
    Ready,
    Rematch,
    Resign,
    Resume,
    Rooms,
    Start,
    Watch,
)

__all__ = [
    "CLIENT_TYPES",
    "TYPE_OF",
    "Create",
    "Finish",
    "Hint",
    "Join",
    "Leave",
    "Message",
    "MoveRequest",
    "Ping",
    "Quick",
    "Ready",
    "Rematch",
    "Resign",
    "Resume",
    "Rooms",
    "Start",
    "Watch",
    "decode",
    "dumps",
    "encode",
    "encode_text",
    "error",
]
