"""Spectator delay: the updates a node holds back for its spectators of a room that shows
its race ``spectator_delay`` seconds behind (about 1.5 KB a move, in memory)."""

from __future__ import annotations

import asyncio
import time
from collections.abc import Callable, Iterable
from typing import Any


class Delayed:
    """``send(connections, data)`` sends an update; ``viewers()`` lists the connections
    here that see the race behind it now (spectators, finished players), each with
    ``ws`` and ``view_from`` (epoch ms their view starts)."""

    def __init__(
        self, viewers: Callable[[], Iterable[Any]], send: Callable[[list[Any], bytes], None]
    ) -> None:
        self.viewers = viewers
        self.send = send
        self._handles: set[asyncio.TimerHandle] = set()

    def later(self, data: bytes, delay_ms: int) -> None:
        """Send ``data`` ``delay_ms`` from now to the viewers whose view had reached this
        moment (one who came later got it in their snapshot)."""
        sent = time.time_ns() // 1_000_000

        def send() -> None:
            self._handles.discard(handle)
            ws = [c.ws for c in self.viewers() if c.view_from <= sent]
            if ws:
                self.send(ws, data)

        handle = asyncio.get_running_loop().call_later(delay_ms / 1000, send)
        self._handles.add(handle)

    def call(self, delay_ms: int, fn: Callable[[], Any]) -> None:
        """Call ``fn`` ``delay_ms`` from now, unless dropped first."""

        def run() -> None:
            self._handles.discard(handle)
            fn()

        handle = asyncio.get_running_loop().call_later(delay_ms / 1000, run)
        self._handles.add(handle)

    def drop(self) -> None:
        """Forget every update still held (the results show everything at once)."""
        for handle in self._handles:
            handle.cancel()
        self._handles.clear()
