"""Quick match by rating: tickets waiting for an opponent (a sorted set by display
rating, one by arrival time and a hash of their players, the three in one slot per
variant: ``mm:{D}:...``), paired atomically in Lua with a window that widens with the
time waited, and the news of a match, sent to the node holding the ticket."""

from __future__ import annotations

from typing import Any

import orjson

from .base import Part
from .keys import CHANNEL
from .scripts import QUICK_MATCH
from .slot_scripts import node_channel

WINDOW = 100  # rating points either side at first ...
PER_S = 50  # ... widened by this many per second waited ...
ANYONE_MS = 10_000  # ... and anyone at all after this long

Pair = tuple[tuple[str, dict[str, Any]], tuple[str, dict[str, Any]]]


def queue_keys(draw: int) -> list[str]:
    """``mm:{D}:rating``, ``mm:{D}:since``, ``mm:{D}:players`` of variant ``draw``."""
    return [f"mm:{{{draw}}}:{part}" for part in ("rating", "since", "players")]


class Matchmaking(Part):
    def __init__(self, *args: Any) -> None:
        super().__init__(*args)
        source = (
            QUICK_MATCH.replace("ANYONE_MS", str(ANYONE_MS))
            .replace("PER_S", str(PER_S))
            .replace("WINDOW", str(WINDOW))
        )
        self._match = self._script(source)

    async def match(
        self,
        now: int,
        draw: int,
        ticket: str | None = None,
        rating: int = 1500,
        player: dict[str, Any] | None = None,
    ) -> list[Pair]:
        """Add ``ticket`` (its player's display ``rating``; ``player``: name, who, guest)
        to the queue of variant ``draw`` when given, then pair whoever in that queue can
        be paired at ``now`` (epoch ms): each pair's tickets (the one waiting longer
        first) and players (with the ``node`` holding the ticket), taken off the queue."""
        args: list[Any] = [now, draw]
        if ticket is not None:
            held = {**(player or {}), "node": self.node}
            args += [ticket, rating, orjson.dumps(held).decode()]
        got: Any = await self._timed(self._match(keys=queue_keys(draw), args=args))
        out: list[Pair] = []
        for i in range(0, len(got), 4):
            first = (got[i].decode(), orjson.loads(got[i + 1]))
            second = (got[i + 2].decode(), orjson.loads(got[i + 3]))
            out.append((first, second))
        return out

    async def cancel(self, ticket: str, draw: int) -> None:
        by_rating, by_since, players = queue_keys(draw)
        async with self.redis.pipeline(transaction=True) as pipe:
            pipe.hdel(players, ticket)
            pipe.zrem(by_since, ticket)
            pipe.zrem(by_rating, ticket)
            await self._timed(pipe.execute())

    async def waiting(self, draw: int) -> int:
        return int(await self._timed(self.redis.zcard(queue_keys(draw)[1])))

    async def tell(self, node: str, key: str, payload: dict[str, Any]) -> None:
        """News for ``node`` (on one Redis, every node hears it and ``key`` says whose):
        ``KEY|THIS NODE|JSON``, as a quick match's (``mm:TICKET``) or an arena race's
        (``ar:WHO``, node/arenas.py)."""
        message = f"{key}|{self.node}|".encode() + orjson.dumps(payload)
        if self.cluster:
            await self._timed(self.redis.spublish(node_channel(node), message))
        else:
            await self._timed(self.redis.publish(CHANNEL, message))

    async def notify(self, ticket: str, player: dict[str, Any], payload: dict[str, Any]) -> None:
        """Tell the node holding ``ticket`` (``player["node"]``; on one Redis, whichever
        it is) that it was matched."""
        await self.tell(str(player.get("node", "")), f"mm:{ticket}", payload)
