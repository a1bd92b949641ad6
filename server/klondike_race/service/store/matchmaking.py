"""Quick match by rating: tickets waiting for an opponent (a sorted set by display
rating and one by arrival time), paired atomically in Lua with a window that widens with
the time waited, and the news of a match."""

from __future__ import annotations

from typing import Any

import orjson

from .base import Part
from .keys import CHANNEL
from .scripts import QUICK_MATCH

WINDOW = 100  # rating points either side at first ...
PER_S = 50  # ... widened by this many per second waited ...
ANYONE_MS = 10_000  # ... and anyone at all after this long

Pair = tuple[tuple[str, dict[str, Any]], tuple[str, dict[str, Any]]]


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
        self, now: int, draw: int, ticket: str | None = None, rating: int = 1500,
        player: dict[str, Any] | None = None,
    ) -> list[Pair]:  # fmt: skip
        """Add ``ticket`` (its player's display ``rating``; ``player``: name, who, guest)
        to the queue of variant ``draw`` when given, then pair whoever in that queue can
        be paired at ``now`` (epoch ms): each pair's tickets (the one waiting longer
        first) and players, taken off the queue."""
        args: list[Any] = [now, draw]
        if ticket is not None:
            args += [ticket, rating, orjson.dumps(player or {}).decode()]
        got: Any = await self._timed(self._match(args=args))
        out: list[Pair] = []
        for i in range(0, len(got), 4):
            first = (got[i].decode(), orjson.loads(got[i + 1]))
            second = (got[i + 2].decode(), orjson.loads(got[i + 3]))
            out.append((first, second))
        return out

    async def cancel(self, ticket: str, draw: int) -> None:
        async with self.redis.pipeline(transaction=True) as pipe:
            pipe.delete(f"mm:t:{ticket}")
            pipe.zrem(f"mm:since:{draw}", ticket)
            pipe.zrem(f"mm:rating:{draw}", ticket)
            await self._timed(pipe.execute())

    async def waiting(self, draw: int) -> int:
        return int(await self._timed(self.redis.zcard(f"mm:since:{draw}")))

    async def notify(self, ticket: str, payload: dict[str, Any]) -> None:
        """Tell the node holding ``ticket`` (whichever it is) that it was matched."""
        await self._timed(
            self.redis.publish(
                CHANNEL, f"mm:{ticket}|{self.node}|".encode() + orjson.dumps(payload)
            )
        )
