"""What every part of the store shares: the client, this node's id, round-trip timing."""

from __future__ import annotations

import time
from collections.abc import Awaitable, Callable
from typing import Any, TypeVar

import redis.asyncio as aioredis

T = TypeVar("T")


class Part:
    """One part of the store. ``latency`` is called with the seconds of each round trip."""

    def __init__(self, redis: aioredis.Redis, node: str, latency: Callable[[float], None]) -> None:
        self.redis = redis
        self.node = node
        self._latency = latency

    async def _timed(self, call: Awaitable[T]) -> T:
        t0 = time.perf_counter()
        try:
            return await call
        finally:
            self._latency(time.perf_counter() - t0)

    def _script(self, source: str) -> Any:
        return self.redis.register_script(source)
