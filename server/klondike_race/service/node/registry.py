"""The node's rooms: a hub for each room with a connection here (``Hubs``, where this node's
own committed events are delivered), opened with its first connection and closed with its
last (``Attendance``)."""

from __future__ import annotations

from collections.abc import Awaitable, Callable
from typing import Any

import structlog

from ..contracts import HubHost
from ..domain.errors import ServiceError
from ..hub import RoomHub
from ..roomevent import OwnMove, RoomEvent
from ..wire import events
from .conn import Conn

log = structlog.get_logger("klondike_race.node")


class Hubs:
    """The hubs open on this node, by room code."""

    def __init__(self) -> None:
        self.hubs: dict[str, RoomHub] = {}

    def __len__(self) -> int:
        return len(self.hubs)

    def get(self, code: str) -> RoomHub | None:
        return self.hubs.get(code)

    def feed(
        self, code: str, v: int, body: events.Event | None, own: OwnMove | None = None
    ) -> None:
        """Deliver our own committed event locally (other nodes get it by pub/sub)."""
        hub = self.hubs.get(code)
        if hub is not None and v > 0 and body is not None:
            hub.feed(RoomEvent(v, body, own))

    def seated(self) -> dict[str, list[str]]:
        """The rooms with players connected here, and those players."""
        out: dict[str, list[str]] = {}
        for code, hub in self.hubs.items():
            players = {c.player for c in hub.conns if c.role == "player" and c.player}
            if players:
                out[code] = sorted(players)
        return out


class Attendance:
    """Connections in and out of the rooms here: a room's hub is opened with its first
    connection (or one arriving) and closed with its last."""

    def __init__(self, hubs: Hubs, host: HubHost) -> None:
        self.hubs = hubs.hubs  # the one place that adds hubs to it and removes them
        self.host = host
        self.clock = host.clock
        self.store = host.store

    async def open(self, code: str) -> RoomHub:
        """Room ``code``'s hub here, opened by this call or by one under way. An opening
        that failed (or a hub closed before this caller's turn) is not handed on: the
        caller opens it anew (and gets that opening's own refusal)."""
        while (hub := self.hubs.get(code)) is not None:
            await hub.opened.wait()
            if self.hubs.get(code) is hub and not hub.closed:
                return hub
        hub = self.hubs[code] = RoomHub(self.host, code)
        try:
            await hub.open()
        except BaseException:
            self.hubs.pop(code, None)
            try:
                await self.store.rooms.exit(code)
            except Exception:
                log.exception("leaving a room that failed to open failed", room=code)
            raise
        return hub

    async def attach(
        self,
        conn: Conn,
        code: str,
        role: str,
        welcome: Callable[[RoomHub], Awaitable[None]],
        player: str | None = None,
        game: Any = None,
    ) -> RoomHub:
        """Put ``conn`` in room ``code`` as a ``player`` (with their game) or ``spectator``.
        ``welcome(hub)`` sends its first message (``welcome`` or ``resumed``), and must send
        it after its last await: the room's events reach ``conn`` from that moment on, so
        per connection versions only go up and nothing comes before the welcome."""
        try:
            hub = await self.open(code)  # first: a refusal leaves conn where it was
        except LookupError:
            raise ServiceError("no_room", f"no room {code}") from None
        hub.arriving.add(conn)  # keeps the hub open meanwhile
        try:
            await self.detach(conn)
            conn.hub, conn.role, conn.player, conn.game = hub, role, player, game
            conn.over = game is not None and game.over
            conn.log = log.bind(conn=conn.id, room=code, player=player, role=role)
            await welcome(hub)
            hub.conns.add(conn)  # no await since the welcome was sent
        except BaseException:
            hub.arriving.discard(conn)
            if conn.hub is hub:
                await self.detach(conn)
            else:
                await self._close_if_unused(hub)
            raise
        hub.arriving.discard(conn)
        if role == "player":
            await self.store.sweeping.touch([code], self.clock.now_ms())
        if role == "spectator":
            conn.watched.add(code)
            await hub.count_spectators()
        return hub

    async def detach(self, conn: Conn) -> None:
        hub = conn.hub
        if hub is None:
            return
        conn.hub, conn.role, conn.player, conn.game = None, None, None, None
        hub.conns.discard(conn)
        if not await self._close_if_unused(hub):
            await hub.count_spectators()

    async def _close_if_unused(self, hub: RoomHub) -> bool:
        """Close ``hub`` if no connection is in it or arriving; True when closed."""
        if hub.conns or hub.arriving or self.hubs.get(hub.code) is not hub:
            return False
        del self.hubs[hub.code]
        await hub.close()
        again = self.hubs.get(hub.code)
        if again is not None:  # opened anew meanwhile: our leaving may have come after
            await self.rejoin([again])  # its joining (a Redis call retried, say)
        return True

    async def rejoin(self, hubs: list[RoomHub] | None = None) -> None:
        """This node is in the node set of each open room here (``hubs``: these), so that
        their events are published to it: a Redis restart may have lost the entry, or a
        closing hub's leaving may have come after a new one's joining. A room it was
        missing from, and with ``hubs`` given each of them, catches up on the events it
        may have missed meanwhile."""
        chosen = hubs if hubs is not None else [h for h in self.hubs.values() if h.opened.is_set()]
        open_ = [h for h in chosen if not h.closed]
        if not open_:
            return
        added = await self.store.rooms.rejoin([h.code for h in open_])
        for hub, was_missing in zip(open_, added, strict=True):
            if was_missing or hubs is not None:
                self.host.spawn(hub.events_missed())

    async def close_all(self) -> None:
        for hub in list(self.hubs.values()):
            try:
                await hub.close()
            except Exception:
                log.exception("closing a room failed", room=hub.code)
        self.hubs.clear()
