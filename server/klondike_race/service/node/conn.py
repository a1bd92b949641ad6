"""One WebSocket connection: its role, its room, its own game (players only)."""

from __future__ import annotations

import asyncio
import collections
import hmac
import secrets
import time
from collections.abc import Awaitable, Callable
from typing import Any

import structlog
from websockets.asyncio.server import ServerConnection

from ...engine import Game
from ..domain.players import Identity
from ..fanout import Fanout
from ..hub import RoomHub

log = structlog.get_logger("klondike_race.node")


class Conn:
    __slots__ = (
        "address",
        "address_key",
        "arena",
        "board",
        "board_v",
        "board_you",
        "busy",
        "credit",
        "entering",
        "fanout",
        "game",
        "guest",
        "hub",
        "id",
        "identity",
        "idle",
        "inbox",
        "log",
        "over",
        "player",
        "role",
        "session",
        "shut",
        "stamp",
        "table",
        "table_rows",
        "table_v",
        "table_you",
        "ticket",
        "view_from",
        "watched",
        "ws",
    )

    def __init__(
        self, ws: ServerConnection, burst: float, fanout: Fanout, address: str = ""
    ) -> None:
        self.ws = ws
        self.address = address  # the client's IP address (rate limits)
        self.address_key: str | None = None  # as the store keeps it (``Addresses.of``)
        self.identity: Identity | None = None  # who the player is, once said (hello)
        self.guest: Identity | None = None  # the device's guest identity (hello)
        self.session: str | None = None  # the signed-in session's token hash
        self.board: tuple[str, int] | None = None  # the challenge leaderboard watched
        self.board_you = 0  # when (epoch ms) the player's own place was last sent
        self.board_v = -1  # the version of the leaderboard rows this connection holds
        self.fanout = fanout
        self.id = secrets.token_hex(4)
        self.log: Any = log.bind(conn=self.id)
        self.credit = burst  # the rate limit's (node/dispatch.py, ``spend``)
        self.stamp = time.monotonic()
        self.watched: set[str] = set()  # rooms this connection has watched
        self.hub: RoomHub | None = None
        self.role: str | None = None  # "player" or "spectator"
        self.player: str | None = None
        self.game: Game | None = None
        self.over = False  # own game over, as acknowledged: may see the others' boards
        self.ticket: str | None = None  # waiting for a quick match
        self.arena: str | None = None  # the arena tournament it plays in (node/arenas.py)
        # the arena whose table it is sent (node/arena_table.py): the one it plays in,
        # paused in, or watches; the rows it holds (the node's last pushed, or its own
        # since its last whole table) and their version; the player's own line and
        # place last sent
        self.table: str | None = None
        self.table_rows: dict[str, Any] | None = None
        self.table_v = -1
        self.table_you: Any = None
        self.entering: asyncio.Task[None] | None = None  # entering the race it was matched to
        # messages in order (node/dispatch.py): one at a time, the rest wait in ``inbox``
        self.inbox: collections.deque[tuple[str | bytes, float]] = collections.deque()
        self.busy = False  # a message is being answered
        self.shut = False  # closing: nothing more is read
        self.idle: asyncio.Future[None] | None = None  # the handler waits for the last answer
        self.view_from = (
            0  # a delayed view (spectators, finished players): when it starts, epoch ms
        )

    def send(self, data: str | bytes) -> None:
        """Queue a message (every server message goes through the node's fan-out, in order)."""
        self.fanout.push((self.ws,), data)


def keyed(secret: bytes, text: str) -> str:
    """A keyed hash of ``text`` (HMAC-SHA256 with the challenge secret, 96 bits)."""
    return hmac.new(secret, text.encode(), "sha256").hexdigest()[:24]


class Addresses:
    """Client addresses as the store keeps them: a keyed hash (``keyed``) with the
    challenge secret (``KR_CHALLENGE_SECRET``, else the one kept in Redis), read once."""

    def __init__(self, given: str | None, load: Callable[[], Awaitable[bytes]]) -> None:
        self._given = given
        self._load = load
        self._secret: bytes | None = None

    async def secret(self) -> bytes:
        if self._secret is None:
            self._secret = self._given.encode() if self._given else await self._load()
        return self._secret

    async def of(self, conn: Conn) -> str:
        """``conn``'s client address, keyed."""
        if conn.address_key is None:
            conn.address_key = keyed(await self.secret(), f"address:{conn.address}")
        return conn.address_key


def seat_owner(conn: Conn) -> tuple[str, bool]:
    """(who, guest) of a seat ``conn`` takes: its player's key, "" when anonymous."""
    if conn.identity is None:
        return "", True
    return conn.identity.key, conn.identity.guest


def seat_name(conn: Conn, typed: str) -> str:
    """The name a seat shows: an account's own name, else the one typed."""
    identity = conn.identity
    return identity.name if identity is not None and identity.name else typed
