"""Move logs and the group commit that appends to them.

All moves that arrive while a write is in flight go to Redis in the next single round
trip: one ``EVALSHA`` of ``APPEND_MOVES`` that, per move and atomically, checks that its
sequence number is the next one, appends it, updates progress and rank, and emits the
event. A move is acknowledged only when that call has returned. A batch spans rooms, so
on Redis Cluster it would have to be split per slot (not done: one Redis is assumed).
"""

from __future__ import annotations

import asyncio
import contextlib
from typing import Any

import orjson

from .base import Part
from .keys import moves_key, room_key
from .scripts import APPEND_MOVES


class MoveLog(Part):
    def __init__(self, *args: Any) -> None:
        super().__init__(*args)
        self._append = self._script(APPEND_MOVES)
        self._pending: list[tuple[bytes, asyncio.Future[int]]] = []
        self._wake = asyncio.Event()
        self._writer: asyncio.Task[None] | None = None
        self.max_batch = 1000
        self.batches = 0

    def start(self) -> None:
        self._writer = asyncio.create_task(self._write_loop(), name="group-commit")

    async def close(self) -> None:
        """Write what is pending, then stop the writer."""
        if self._writer is not None:
            while self._pending:
                await asyncio.sleep(0.005)
            self._writer.cancel()
            with contextlib.suppress(asyncio.CancelledError):
                await self._writer
            self._writer = None

    def append(
        self,
        code: str,
        player: str,
        seq: int,
        entry: str,
        progress: dict[str, Any],
        rank: int,
        body: bytes,
        board: tuple[str, str, bytes] | None = None,
    ) -> asyncio.Future[int]:
        """Queue one move for the next group commit; the future gets the script's answer
        for it: the event version (> 0) if appended, 0 if the race is finished, or
        -(length + 1) if ``seq`` was not length + 1 (nothing was written). ``board``:
        (challenge leaderboard, player key, row JSON) of an attempt's move."""
        fut: asyncio.Future[int] = asyncio.get_running_loop().create_future()
        # one argument per move, its fields joined by \x1f (never raw in JSON or notation):
        # redis-py's cost is per argument
        fields = [
            code.encode(),
            player.encode(),
            b"%d" % seq,
            entry.encode(),
            orjson.dumps(progress),
            b"%d" % rank,
            body,
        ]
        if board is not None:
            fields += [board[0].encode(), board[1].encode(), board[2]]
        args = b"\x1f".join(fields)
        self._pending.append((args, fut))
        self._wake.set()
        return fut

    async def _write_loop(self) -> None:
        while True:
            await self._wake.wait()
            self._wake.clear()
            while self._pending:
                batch = self._pending[: self.max_batch]
                del self._pending[: self.max_batch]
                args = [self.node.encode()]
                args += [item for item, _ in batch]
                try:
                    results = await self._durably(self._append, args)
                except Exception as err:  # each waiting move gets the error
                    for _, fut in batch:
                        if not fut.done():
                            fut.set_exception(err)
                    continue
                self.batches += 1
                for (_, fut), result in zip(batch, results.split(b","), strict=True):
                    if not fut.done():
                        fut.set_result(int(result))

    async def read(self, code: str, player: str) -> list[str]:
        """A player's whole log, ``TEXT@AT_MS`` entries in order (domain/movelog.py)."""
        raw: Any = await self._timed(self.redis.lrange(moves_key(code, player), 0, -1))
        return [m.decode() for m in raw]

    async def seed(
        self, code: str, player: str, log: list[str], progress: dict[str, Any], rank: int
    ) -> None:
        """The first moves of a new practice continuation (copied from its race's log),
        before anyone else knows the room."""
        base = room_key(code)
        async with self.redis.pipeline(transaction=False) as pipe:
            if log:
                pipe.rpush(moves_key(code, player), *log)
            pipe.hset(base + ":prog", player, orjson.dumps(progress))
            pipe.zadd(base + ":rank", {player: rank})
            await self._replicated(pipe)
