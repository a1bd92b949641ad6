"""What a room hub needs of its node (``HubHost``) and of a connection (``Recipient``): the
hub depends on these, not on the node; and ``Spawn``, how a part of the node runs work in
the background (node/tasks.py)."""

from __future__ import annotations

import asyncio
from collections.abc import Callable, Coroutine
from dataclasses import dataclass
from typing import Any, Protocol

from websockets.asyncio.connection import Connection

from ..engine import Game
from .clock import Clock
from .config import Config
from .fanout import Fanout
from .metrics import Metrics
from .store import Store


class Recipient(Protocol):
    """A connection in a room, as the hub sees it."""

    @property
    def ws(self) -> Connection: ...

    role: str | None  # "player" or "spectator"
    player: str | None
    game: Game | None
    over: bool  # a player's own game is over, as acknowledged
    view_from: int  # spectators: the race time (epoch ms) their view starts from


# runs a coroutine in the background: a failure is logged, the task cancelled at stop
Spawn = Callable[[Coroutine[Any, Any, Any]], asyncio.Task[Any]]


@dataclass(frozen=True)
class HubHost:
    """What a hub needs of its node: the store, the fan-out, the settings, background
    work, ``finish_room(code, reason)`` (the race's end: its time limit, or every player's
    game over), ``time_out(code, player)`` (a sprinter's own time limit passed), the
    node's clock and its metrics."""

    store: Store
    fanout: Fanout
    config: Config
    spawn: Spawn
    finish_room: Callable[[str, str], Coroutine[Any, Any, None]]
    time_out: Callable[[str, str], Coroutine[Any, Any, None]]
    clock: Clock
    metrics: Metrics
