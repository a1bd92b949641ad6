"""Spectator delay: the calls a room hub makes later for its viewers of a race shown
``spectator_delay`` seconds behind (the updates held back, 1.5-4.6 KB a move in memory,
up to a limit, and their catch-ups), all dropped at once."""

from __future__ import annotations

import asyncio
import itertools
from collections.abc import Callable
from typing import Any


class Delayed:
    """Calls made later, unless dropped first. Nothing here refers back to its owner once
    a call is made or dropped: a finished room's hub is freed as soon as it is let go, not
    at a later run of the cyclic garbage collector."""

    def __init__(self, limit: int = 0) -> None:
        self._handles: dict[int, asyncio.TimerHandle] = {}
        self._keys = itertools.count()
        self.limit = limit  # bytes of updates held at most (0: no limit)
        self.held = 0  # bytes of updates held now

    def call(self, delay_ms: int, fn: Callable[..., Any], *args: Any) -> None:
        """Call ``fn(*args)`` ``delay_ms`` from now, unless dropped first."""
        key = next(self._keys)
        loop = asyncio.get_running_loop()
        self._handles[key] = loop.call_later(delay_ms / 1000, self._run, key, fn, args)

    def hold(self, delay_ms: int, fn: Callable[..., Any], data: bytes, *args: Any) -> bool:
        """Call ``fn(data, *args)`` ``delay_ms`` from now, ``data`` counted as held until
        then; False, and nothing held, when that would pass the limit."""
        if self.limit and self.held + len(data) > self.limit:
            return False
        self.held += len(data)
        self.call(delay_ms, self._release, fn, data, args)
        return True

    def _release(self, fn: Callable[..., Any], data: bytes, args: tuple[Any, ...]) -> None:
        self.held -= len(data)
        fn(data, *args)

    def _run(self, key: int, fn: Callable[..., Any], args: tuple[Any, ...]) -> None:
        del self._handles[key]
        fn(*args)

    def drop(self) -> None:
        """Forget every call still held (the results show everything at once)."""
        for handle in self._handles.values():
            handle.cancel()
        self._handles.clear()
        self.held = 0
