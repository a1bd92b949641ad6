"""Move logs and the group commit that appends to them.

All moves that arrive while a write is in flight go to Redis in the next single round
trip: one ``EVALSHA`` of ``APPEND_MOVES`` that, per move and atomically, checks that its
sequence number is the next one, appends it, updates progress and rank, and emits the
event. A move is acknowledged only when that call has returned.

On a Redis Cluster a batch is split per slot: one call per slot (the room's, declared
in KEYS), the slots' calls at once; a challenge attempt's leaderboard rows are then
written in the board's slot, before the moves are acknowledged (store/slot_scripts.py).
"""

from __future__ import annotations

import asyncio
import contextlib
import time
from typing import Any

import orjson
from redis.exceptions import NoScriptError

from . import slot_scripts
from .base import NotReplicated, Part
from .cluster import slot_of
from .commit import Command, CommitConnection
from .keys import moves_key, room_key
from .scripts import APPEND_MOVES

# a queued move: its packed fields, its future, its room and player, its board row
Pending = tuple[bytes, "asyncio.Future[int]", str, str, "tuple[str, str, bytes, int] | None"]


class MoveLog(Part):
    def __init__(self, *args: Any, line: CommitConnection | None = None) -> None:
        super().__init__(*args)
        self._append = self._script(APPEND_MOVES)
        self._append_slot = self._script(slot_scripts.APPEND_MOVES)
        self._rows = self._script(slot_scripts.BOARD_ROWS)
        self._pending: list[Pending] = []
        self._wake = asyncio.Event()
        self._writer: asyncio.Task[None] | None = None
        self.max_batch = 1000
        self.batches = 0
        # the group commit's own connection (one Redis or Sentinel's primary): None writes
        # through the command client
        self.line = line

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
        if self.line is not None:
            self.line.close()

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
        row = None if board is None else (*board, rank)
        self._pending.append((args, fut, code, player, row))
        self._wake.set()
        return fut

    async def _write_loop(self) -> None:
        while True:
            await self._wake.wait()
            self._wake.clear()
            while self._pending:
                batch = self._pending[: self.max_batch]
                del self._pending[: self.max_batch]
                try:
                    if self.cluster:
                        results = await self._write_slots(batch)
                    else:
                        args = [self.node.encode()] + [item[0] for item in batch]
                        results = (await self._commit(args)).split(b",")
                except Exception as err:  # each waiting move gets the error
                    for item in batch:
                        if not item[1].done():
                            item[1].set_exception(err)
                    continue
                self.batches += 1
                for item, result in zip(batch, results, strict=True):
                    if not item[1].done():
                        item[1].set_result(int(result))

    async def _commit(self, args: list[bytes]) -> bytes:
        """One group commit on one Redis: through the commit connection when there is one
        (store/commit.py), the script and the replicas' ``WAIT`` in one write."""
        line = self.line
        if line is None:
            result: bytes = await self._durably(self._append, args)
            return result
        commands: list[Command] = [(b"EVALSHA", self._append.sha, 0, *args)]
        replicas, ms = self.replicas
        if replicas:
            commands.append((b"WAIT", replicas, ms))
        t0 = time.perf_counter()
        try:
            try:
                replies = await line.call(commands)
            except NoScriptError:  # a Redis restarted empty, or SCRIPT FLUSH
                await self.redis.script_load(APPEND_MOVES)
                replies = await line.call(commands)
        finally:
            self._latency(time.perf_counter() - t0)
        if replicas and int(replies[1]) < replicas:
            raise NotReplicated(f"{replies[1]} of {replicas} replicas acknowledged within {ms} ms")
        result = replies[0]
        return result

    async def _write_slots(self, batch: list[Pending]) -> list[bytes]:
        """A batch on a cluster: one call per slot, all at once, then the leaderboard
        rows of the attempts' moves stored, each board's in one call. The answers in
        the batch's order; any slot's failure fails the whole batch (a move that was
        stored after all is found by the client's resume, as after any failure)."""
        slots: dict[int, list[int]] = {}
        for i, item in enumerate(batch):
            slots.setdefault(slot_of(room_key(item[2])), []).append(i)
        answers: list[bytes] = [b""] * len(batch)

        async def one(indexes: list[int]) -> None:
            keys: list[str] = []
            for i in indexes:
                code, player = batch[i][2], batch[i][3]
                base = room_key(code)
                keys += slot_scripts.room_keys(code)
                keys += [moves_key(code, player), base + ":prog", base + ":rank"]
            args = [self.node.encode()] + [batch[i][0] for i in indexes]
            got = await self._durably(self._append_slot, args, keys)
            for i, answer in zip(indexes, got.split(b","), strict=True):
                answers[i] = answer

        await asyncio.gather(*(one(indexes) for indexes in slots.values()))
        rows: dict[str, list[Any]] = {}
        for item, answer in zip(batch, answers, strict=True):
            if item[4] is not None and int(answer) > 0:
                base, who, row, rank = item[4]
                rows.setdefault(base, []).extend([who, rank, row])
        if rows:
            await asyncio.gather(
                *(
                    self._timed(self._rows(keys=_board_keys(base), args=args))
                    for base, args in rows.items()
                )
            )
        return answers

    async def read(self, code: str, player: str) -> list[str]:
        """A player's whole log, ``TEXT@AT_MS`` entries in order (domain/movelog.py)."""
        raw: Any = await self._timed(self.redis.lrange(moves_key(code, player), 0, -1))
        return [m.decode() for m in raw]

    async def read_each(self, code: str, players: list[str]) -> list[list[str]]:
        """Several players' whole logs in one round trip (a room's keys share a slot)."""
        async with self.redis.pipeline(transaction=False) as pipe:
            for player in players:
                pipe.lrange(moves_key(code, player), 0, -1)
            raws: list[Any] = await self._timed(pipe.execute())
        return [[m.decode() for m in raw] for raw in raws]

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


def _board_keys(base: str) -> list[str]:
    return [f"{base}:{part}" for part in ("board", "rows", "ver", "out")]
