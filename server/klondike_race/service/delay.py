"""Spectator delay: the calls a room hub makes later for its viewers of a race shown
``spectator_delay`` seconds behind (the updates held back, about 1.5 KB a move in memory,
and their catch-ups), all dropped at once."""

from __future__ import annotations

import asyncio
import itertools
from collections.abc import Callable
from typing import Any


class Delayed:
    """Calls made later, unless dropped first. Nothing here refers back to its owner once
    a call is made or dropped: a finished room's hub is freed as soon as it is let go, not
    at a later run of the cyclic garbage collector."""

    def __init__(self) -> None:
        self._handles: dict[int, asyncio.TimerHandle] = {}
        self._keys = itertools.count()

    def call(self, delay_ms: int, fn: Callable[..., Any], *args: Any) -> None:
        """Call ``fn(*args)`` ``delay_ms`` from now, unless dropped first."""
        key = next(self._keys)
        loop = asyncio.get_running_loop()
        self._handles[key] = loop.call_later(delay_ms / 1000, self._run, key, fn, args)

    def _run(self, key: int, fn: Callable[..., Any], args: tuple[Any, ...]) -> None:
        del self._handles[key]
        fn(*args)

    def drop(self) -> None:
        """Forget every call still held (the results show everything at once)."""
        for handle in self._handles.values():
            handle.cancel()
        self._handles.clear()
