"""What a room hub needs of its node (``HubHost``) and of a connection (``Recipient``): the
hub depends on these, not on the node."""

from __future__ import annotations

import asyncio
from collections.abc import Coroutine
from typing import Any, Protocol

from websockets.asyncio.connection import Connection

from ..engine import Game
from .config import Config
from .fanout import Fanout
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


class HubHost(Protocol):
    """What a hub needs of its node."""

    store: Store
    fanout: Fanout
    config: Config

    def spawn(self, coro: Coroutine[Any, Any, Any]) -> asyncio.Task[Any]: ...

    async def finish_room(self, code: str, reason: str) -> None: ...
