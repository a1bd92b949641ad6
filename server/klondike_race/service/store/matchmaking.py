"""Quick match: a queue of tickets waiting for an opponent, and the news of a match."""

from __future__ import annotations

from typing import Any

import orjson

from .base import Part
from .keys import CHANNEL
from .scripts import QUICK_POP


class Matchmaking(Part):
    def __init__(self, *args: Any) -> None:
        super().__init__(*args)
        self._pop = self._script(QUICK_POP)

    async def pop(self) -> tuple[str, dict[str, Any]] | None:
        """The first ticket still waiting and its player (name, who, guest), taken off
        the queue."""
        got = await self._timed(self._pop(args=[]))
        if not got:
            return None
        return got[0].decode(), orjson.loads(got[1])

    async def push(self, ticket: str, player: dict[str, Any]) -> None:
        async with self.redis.pipeline(transaction=True) as pipe:
            pipe.set(f"mm:t:{ticket}", orjson.dumps(player), ex=3600)
            pipe.rpush("mm:queue", ticket)
            await self._timed(pipe.execute())

    async def cancel(self, ticket: str) -> None:
        async with self.redis.pipeline(transaction=True) as pipe:
            pipe.delete(f"mm:t:{ticket}")
            pipe.lrem("mm:queue", 0, ticket)
            await self._timed(pipe.execute())

    async def notify(self, ticket: str, payload: dict[str, Any]) -> None:
        """Tell the node holding ``ticket`` (whichever it is) that it was matched."""
        await self._timed(
            self.redis.publish(
                CHANNEL, f"mm:{ticket}|{self.node}|".encode() + orjson.dumps(payload)
            )
        )
