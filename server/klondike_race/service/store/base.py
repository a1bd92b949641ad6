"""What every part of the store shares: the client, this node's id, round-trip timing,
and the replica acknowledgements a write that answers a client waits for."""

from __future__ import annotations

import time
from collections.abc import Awaitable, Callable
from typing import Any, TypeVar

import redis.asyncio as aioredis
from redis.asyncio.cluster import RedisCluster
from redis.exceptions import RedisClusterException, RedisError

from ..clock import Clock
from .cluster import script_and_wait

T = TypeVar("T")


# Redis cannot answer now: redis-py's errors, and a whole Redis Cluster unreachable (a
# RedisClusterException, which is not a RedisError); a connection closes with 1013 and
# /readyz says unreachable
UNAVAILABLE = (RedisError, RedisClusterException)


class NotReplicated(RedisError):
    """The primary stored a write, but fewer replicas than required acknowledged it in
    time: it is not acknowledged to the client (the connection closes with 1013; after a
    failover a resume finds it stored, or not)."""


class Part:
    """One part of the store. ``latency`` is called with the seconds of each round trip;
    ``clock`` is the node's (a fresh one reads the machine's time)."""

    def __init__(
        self,
        redis: aioredis.Redis | RedisCluster,
        node: str,
        latency: Callable[[float], None],
        replicas: tuple[int, int] = (0, 0),
        clock: Clock | None = None,
    ) -> None:
        self.redis: Any = redis
        # on a Redis Cluster every step touches one slot (store/cluster.py)
        self.cluster = isinstance(redis, RedisCluster)
        self.node = node
        self._latency = latency
        # (replicas, ms): a write that answers a client returns only once that many
        # replicas hold it, waiting at most ms (WAIT); (0, _): once the primary has it
        self.replicas = replicas
        self.clock = clock or Clock()  # the node's

    async def _timed(self, call: Awaitable[T]) -> T:
        t0 = time.perf_counter()
        try:
            return await call
        finally:
            self._latency(time.perf_counter() - t0)

    def _script(self, source: str) -> Any:
        return self.redis.register_script(source)

    async def _durably(self, script: Any, args: list[Any], keys: list[str] | None = None) -> Any:
        """Run ``script``; with ``replicas`` set, a ``WAIT`` follows in the same round trip
        on the same connection (WAIT counts the writes of its own connection). On a
        cluster, ``keys`` (of one slot) route it."""
        if not self.replicas[0]:
            return await self._timed(script(keys=keys, args=args))
        if self.cluster:
            assert keys, "a cluster script declares its keys"
            replicas, ms = self.replicas
            result, acked = await self._timed(
                script_and_wait(self.redis, script, keys, args, replicas, ms)
            )
            if acked < replicas:
                raise NotReplicated(f"{acked} of {replicas} replicas acknowledged within {ms} ms")
            return result
        async with self.redis.pipeline(transaction=False) as pipe:
            await script(args=args, client=pipe)
            return (await self._replicated(pipe))[0]

    async def _replicated(self, pipe: Any) -> list[Any]:
        """Execute ``pipe``, its commands followed by the ``WAIT`` of ``replicas`` when set:
        the commands' results, or NotReplicated. On a cluster the commands go to their
        slots' primaries and no ``WAIT`` follows (only script steps wait there)."""
        replicas, ms = self.replicas
        if self.cluster:
            replicas = 0
        if replicas:
            pipe.execute_command("WAIT", replicas, ms)
        results: list[Any] = await self._timed(pipe.execute())
        if replicas:
            acked = results.pop()
            if int(acked) < replicas:
                raise NotReplicated(f"{acked} of {replicas} replicas acknowledged within {ms} ms")
        return results
