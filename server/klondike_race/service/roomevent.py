"""A room event as a hub delivers it (``RoomEvent``), with what the node that stored a
move knows of it beyond the stored event (``OwnMove``, its ``Ack``)."""

from __future__ import annotations

from dataclasses import dataclass
from typing import Any

import orjson

from ..engine import BoardView
from .contracts import Recipient
from .wire import events


@dataclass(slots=True, frozen=True)
class Ack:
    """What the ack of a connection's move says beside the event's version, the board and
    the standings: its seq and move, and when its frame was read (``perf_counter``: the
    ack's latency is measured from it)."""

    seq: int
    move: str
    t0: float


@dataclass(slots=True)
class OwnMove:
    """What this node knows of a move it stored itself, beyond the stored event: the
    player's board (and its JSON, encoded once for every message of the move), and for a
    connection's move that connection (the mover: its ack, sent in the event's place,
    tells it instead of a progress) and what its ack says."""

    board: BoardView
    board_json: orjson.Fragment
    mover: Recipient | None = None
    ack: Ack | None = None


@dataclass(slots=True)
class RoomEvent:
    """A room event: its version ``v`` and ``body`` as stored (wire/events.py; what
    another node published or the store gave back holds "v" too), with ``own`` when this
    node stored the move."""

    v: int
    body: events.Event
    own: OwnMove | None = None

    @classmethod
    def stored(cls, data: Any) -> RoomEvent | None:
        """An event as published or kept in the store (None: not one)."""
        v = data.get("v") if isinstance(data, dict) else None
        return cls(v, data) if isinstance(v, int) else None
