"""Sharded pub/sub on a Redis Cluster: the node listens to each room it has a
connection in on the room's own channel ``kr:events:{CODE}`` (published by the room's
scripts in the room's slot, so only that shard carries it) and to its own
``kr:node:{NODE}`` (quick-match news), with ``SSUBSCRIBE``.

One plain connection per shard primary holds the subscriptions of the channels whose
slot that primary serves. When a connection breaks (its primary died), when the server
unsubscribes us (a failover or a slot migration moved the slot: Redis sends
``sunsubscribe``), and every few seconds as a check, each channel is placed again on
the primary the slot map names now, read again from the cluster. Events published while
a room was not listened to are then read back from its kept events (``resubscribed``).
"""

from __future__ import annotations

import asyncio
import contextlib
from collections.abc import Callable
from typing import Any

import redis.asyncio as aioredis
import structlog
from redis.asyncio.cluster import RedisCluster
from redis.asyncio.retry import Retry
from redis.backoff import NoBackoff
from redis.exceptions import TimeoutError as RedisTimeoutError

from ..store.cluster import primary_of

log = structlog.get_logger("klondike_race.shards")
CHECK_S = 2.0  # how often the placement is checked against the slot map
CONFIRM_S = 5.0  # how long a subscription may take to be confirmed


class _Shard:
    """One primary's subscriptions on one connection, read by one task. The connection
    is never reconnected by redis-py (no retries): its reader and a ``ssubscribe`` sent
    meanwhile would each reconnect it at once, one's new socket dropped unclosed and
    the other's reads clashing. A broken connection ends the reader; the checker closes
    the shard and places its channels on a new one."""

    def __init__(self, name: str, host: str, port: int, options: dict[str, Any]) -> None:
        self.name = name
        self.client = aioredis.Redis(
            host=host, port=port, retry=Retry(NoBackoff(), 0, supported_errors=()), **options
        )
        self.pubsub = self.client.pubsub()
        self.task: asyncio.Task[None] | None = None
        self.channels: set[str] = set()

    async def close(self) -> None:
        if self.task is not None:
            self.task.cancel()
            await asyncio.gather(self.task, return_exceptions=True)
        with contextlib.suppress(Exception):
            await self.pubsub.aclose()
        with contextlib.suppress(Exception):
            await self.client.aclose()


class ShardedEvents:
    """``received(data)`` with each message; ``resubscribed(channels)`` with the channels
    placed again after a gap (their messages in between may be lost)."""

    def __init__(
        self,
        cluster: RedisCluster,
        received: Callable[[bytes], None],
        resubscribed: Callable[[list[str]], None],
        options: dict[str, Any] | None = None,
    ) -> None:
        self.cluster = cluster
        self.received = received
        self.resubscribed = resubscribed
        self.options = options or {"socket_connect_timeout": 5}
        self.wanted: dict[str, int] = {}  # channel -> how many asked for it
        self.shards: dict[str, _Shard] = {}  # primary's name -> its connection
        self.placed: dict[str, str] = {}  # channel -> the primary it is subscribed on
        self._lock = asyncio.Lock()
        self._dirty = asyncio.Event()
        self._checker: asyncio.Task[None] | None = None
        self._closing = False
        self._confirmed: dict[str, asyncio.Event] = {}  # channel -> its ssubscribe came

    def start(self) -> None:
        self._checker = asyncio.create_task(self._check(), name="sharded-pubsub")

    async def listen(self, channel: str, on: bool) -> None:
        """Count one more (``on``) or one fewer listener of ``channel``; the channel is
        subscribed while any."""
        count = self.wanted.get(channel, 0) + (1 if on else -1)
        if count > 0:
            self.wanted[channel] = count
            async with self._lock:  # also waits for a placing of it under way
                await self._place(channel)
        else:
            self.wanted.pop(channel, None)
            async with self._lock:
                name = self.placed.pop(channel, None)
                shard = self.shards.get(name) if name else None
                if shard is not None:
                    shard.channels.discard(channel)
                    with contextlib.suppress(Exception):
                        await shard.pubsub.sunsubscribe(channel)

    async def _place(self, channel: str) -> None:
        """Subscribe ``channel`` on the primary of its slot (the lock held)."""
        if channel not in self.wanted or channel in self.placed:
            return
        node = primary_of(self.cluster, channel)
        shard = self.shards.get(node.name)
        if shard is None:
            shard = _Shard(node.name, node.host, int(node.port), self.options)
            self.shards[node.name] = shard
        confirmed = self._confirmed[channel] = asyncio.Event()
        try:
            await shard.pubsub.ssubscribe(channel)
            shard.channels.add(channel)
            self.placed[channel] = node.name
            if shard.task is None:
                shard.task = asyncio.create_task(self._read(shard), name=f"ssubscribe {node.name}")
            # subscribed once the primary says so: only then may the room's events be
            # counted on (the caller joins the room's node set and reads its snapshot next)
            try:
                async with asyncio.timeout(CONFIRM_S):
                    await confirmed.wait()
            except TimeoutError:  # as Redis being unreachable: the client tries again
                raise RedisTimeoutError(f"{channel} not confirmed by {node.name}") from None
        finally:
            self._confirmed.pop(channel, None)

    async def _read(self, shard: _Shard) -> None:
        try:
            while True:  # not listen(): it ends whenever no channel is subscribed
                message = await shard.pubsub.get_message(timeout=None)
                if message is None:
                    continue
                kind = message.get("type")
                if kind == "ssubscribe":
                    confirmed = self._confirmed.get(message["channel"].decode())
                    if confirmed is not None:
                        confirmed.set()
                elif kind == "smessage":
                    try:
                        self.received(message["data"])
                    except Exception:
                        log.exception("a sharded message failed", shard=shard.name)
                elif kind == "sunsubscribe":
                    channel = message["channel"].decode()
                    if channel in self.wanted and self.placed.get(channel) == shard.name:
                        self._dirty.set()  # not asked for: the slot moved away
        except asyncio.CancelledError:
            raise
        except Exception as err:
            log.warning("sharded pub/sub connection lost", shard=shard.name, error=repr(err))
        self._dirty.set()  # its channels are placed again by the checker

    async def _check(self) -> None:
        while not self._closing:
            # asyncio.timeout, not wait_for: 3.11's wait_for can swallow a cancellation
            # that comes as the wait ends, and this loop would never stop
            with contextlib.suppress(TimeoutError):
                async with asyncio.timeout(CHECK_S):
                    await self._dirty.wait()
            dirty = self._dirty.is_set()
            self._dirty.clear()
            try:
                await self._rebalance(refresh=dirty)
            except asyncio.CancelledError:
                raise
            except Exception as err:  # the cluster may still be electing: try again
                log.warning("sharded pub/sub placement failed", error=repr(err))
                await asyncio.sleep(0.2)
                self._dirty.set()

    async def _rebalance(self, refresh: bool) -> None:
        """Move each channel whose slot's primary changed, or whose connection broke."""
        if refresh:
            await self.cluster.nodes_manager.initialize()
        moved: list[str] = []
        async with self._lock:
            for name, shard in list(self.shards.items()):
                if shard.task is not None and shard.task.done():  # its connection broke
                    del self.shards[name]
                    for channel in shard.channels:
                        self.placed.pop(channel, None)
                    await shard.close()
            for channel in list(self.wanted):
                owner = primary_of(self.cluster, channel).name
                held = self.placed.get(channel)
                if held == owner:
                    continue
                if held is not None:
                    self.placed.pop(channel)
                    old = self.shards.get(held)
                    if old is not None:
                        old.channels.discard(channel)
                        with contextlib.suppress(Exception):
                            await old.pubsub.sunsubscribe(channel)
                await self._place(channel)
                moved.append(channel)
            for name, shard in list(self.shards.items()):
                if not shard.channels:
                    del self.shards[name]
                    await shard.close()
        if moved:
            log.info("sharded channels placed again", channels=len(moved))
            self.resubscribed(moved)

    async def close(self) -> None:
        self._closing = True
        if self._checker is not None:
            self._checker.cancel()
            await asyncio.gather(self._checker, return_exceptions=True)
        for shard in list(self.shards.values()):
            await shard.close()
        self.shards.clear()
