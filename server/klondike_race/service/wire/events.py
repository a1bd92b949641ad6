"""A room's events as stored (``room:{CODE}:events``) and published to the other nodes:
one ``TypedDict`` a kind, ``type`` first. The store adds the version ``v`` to what it
keeps and publishes; a hub delivers them in version order (hub.py), and a resuming
connection is sent those it missed (encode.py, ``stored_event``)."""

from typing import Any, Literal, NotRequired, TypedDict


class Progress(TypedDict):
    """A player's move (or resignation): who, their progress after it, its sequence
    number and its move-log entry (``MOVE@MS``: a node that shows boards plays it)."""

    type: Literal["progress"]
    player: str
    progress: dict[str, Any]
    seq: int
    entry: str


class Results(TypedDict):
    """A finished race's final progress and boards, by player id."""

    progress: dict[str, dict[str, Any]]
    boards: dict[str, Any]


class Room(TypedDict):
    """A change of the room: the room as anyone may know it (``RoomView.to_json``), and
    the results when it finished the race."""

    type: Literal["room"]
    room: dict[str, Any]
    results: NotRequired[Results]


class Analysis(TypedDict):
    type: Literal["analysis"]
    analysis: dict[str, Any]


class Spectators(TypedDict):
    """The room's spectators, every node's counted."""

    type: Literal["spectators"]
    count: int


Event = Progress | Room | Analysis | Spectators
