"""Redis: key names, the Lua scripts, and the group commit of moves.

Keys (the ``{CODE}`` hash tag keeps one room's keys in one Redis Cluster slot):

==========================  ======  ===================================================
``room:{CODE}``             hash    ``state`` (the Room as JSON, secrets included),
                                    ``rev`` (compare-and-set revision), ``status``,
                                    ``analysis`` (JSON, once a finished race is analysed)
``room:{CODE}:moves:{pid}`` list    the player's accepted moves ``TEXT@AT_MS`` in order
                                    (``resign@AT_MS`` for a resignation); the source of
                                    truth: index + 1 is the client's sequence number
``room:{CODE}:prog``        hash    pid -> latest progress JSON (a cache of the log)
``room:{CODE}:rank``        zset    pid -> exact composite (ranking.py), smaller = better
``room:{CODE}:ver``         string  the room's event version counter
``room:{CODE}:events``      zset    version -> event JSON, the last ~500 (for resume and
                                    gaps); a ``progress`` event names the move, not the
                                    board (nodes replay moves: RoomHub.games)
``room:{CODE}:nodes``       set     server nodes with a connection in the room
``room:{CODE}:spect``       hash    node -> its spectator count
``rooms:public``            zset    code -> creation time, open public rooms
``rooms:active``            zset    code -> last time a player was connected (epoch ms),
                                    rooms not finished; what the sweeper looks at
``rooms:analysis``          zset    code -> when (epoch ms) a finished race still without
                                    its analysis is due to be analysed again by the
                                    sweeper (its node died before storing it)
``kr:sweep``                string  the node sweeping now (a lock with a short TTL)
``mm:queue``, ``mm:t:{T}``  list    quick-match tickets waiting, and their names
``node:{NODE}``             string  a live node (30 s TTL, renewed every 10 s)
==========================  ======  ===================================================

Events are published on the channel ``kr:events`` as ``CODE|JSON`` only when the room has a
connection on another node (``room:{CODE}:nodes``); the committing node delivers its own.

All moves that arrive while a write is in flight go to Redis in the next single round
trip: one ``EVALSHA`` of ``APPEND_MOVES`` that, per move and atomically, checks that its
sequence number is the next one, appends it, updates progress and rank, and emits the
event. A move is acknowledged only when that call has returned. A batch spans rooms, so
on Redis Cluster it would have to be split per slot (not done: one Redis is assumed).
"""

from __future__ import annotations

import asyncio
import contextlib
import time
from collections.abc import Awaitable, Callable
from typing import Any

import orjson
import redis.asyncio as aioredis

CHANNEL = "kr:events"
EVENTS_KEPT = 500

_EMIT = """
local function emit(rid, body, origin)
  local base = 'room:{' .. rid .. '}'
  local v = redis.call('INCR', base .. ':ver')
  local payload = '{"v":' .. v .. ',' .. string.sub(body, 2)
  redis.call('ZADD', base .. ':events', v, payload)
  if v % 50 == 0 then
    redis.call('ZREMRANGEBYSCORE', base .. ':events', '-inf', v - KEPT)
  end
  local n = redis.call('SCARD', base .. ':nodes')
  if n > 1 or (n == 1 and redis.call('SISMEMBER', base .. ':nodes', origin) == 0) then
    redis.call('PUBLISH', 'CHANNEL', rid .. '|' .. payload)
  end
  return v
end
""".replace("KEPT", str(EVENTS_KEPT)).replace("CHANNEL", CHANNEL)

# ARGV: origin, then one per move: room, player, seq, entry, progress, rank score and event
# body joined by \x1f.
# Returns per move, joined by commas (one bulk string parses faster than an array): the
# event version (> 0) if appended, 0 if the race is finished, or -(length + 1) if seq
# was not length + 1 (a duplicate or a gap; nothing was written).
APPEND_MOVES = (
    _EMIT
    + """
local origin = ARGV[1]
local out = {}
for i = 2, #ARGV do
  local f, start = {}, 1
  for _ = 1, 6 do
    local stop = string.find(ARGV[i], '\\31', start, true)
    f[#f + 1] = string.sub(ARGV[i], start, stop - 1)
    start = stop + 1
  end
  f[7] = string.sub(ARGV[i], start)
  local rid, pid = f[1], f[2]
  local base = 'room:{' .. rid .. '}'
  local key = base .. ':moves:' .. pid
  local len = redis.call('LLEN', key)
  if redis.call('HGET', base, 'status') == 'finished' then
    out[#out + 1] = 0
  elseif len + 1 == tonumber(f[3]) then
    redis.call('RPUSH', key, f[4])
    redis.call('HSET', base .. ':prog', pid, f[5])
    redis.call('ZADD', base .. ':rank', f[6], pid)
    out[#out + 1] = emit(rid, f[7], origin)
  else
    out[#out + 1] = -(len + 1)
  end
end
return table.concat(out, ',')
"""
)

# ARGV: room, expected rev, state JSON, status, event body or '', origin, [ranks...]
# Returns the event version, 0 when there was no event, -1 when rev did not match.
ROOM_CAS = (
    _EMIT
    + """
local rid = ARGV[1]
local base = 'room:{' .. rid .. '}'
local cur = tonumber(redis.call('HGET', base, 'rev') or '0')
if cur ~= tonumber(ARGV[2]) then return -1 end
redis.call('HSET', base, 'state', ARGV[3], 'rev', cur + 1, 'status', ARGV[4])
for i = 7, #ARGV, 3 do
  redis.call('HSET', base .. ':prog', ARGV[i], ARGV[i + 1])
  redis.call('ZADD', base .. ':rank', ARGV[i + 2], ARGV[i])
end
if ARGV[5] ~= '' then return emit(rid, ARGV[5], ARGV[6]) end
return 0
"""
)

# ARGV: room, node, count, origin. Returns {event version, total count}.
SPECTATORS = (
    _EMIT
    + """
local rid = ARGV[1]
local key = 'room:{' .. rid .. '}:spect'
if tonumber(ARGV[3]) > 0 then redis.call('HSET', key, ARGV[2], ARGV[3])
else redis.call('HDEL', key, ARGV[2]) end
local total = 0
local counts = redis.call('HGETALL', key)
for i = 1, #counts, 2 do
  if redis.call('EXISTS', 'node:' .. counts[i]) == 1 then
    total = total + tonumber(counts[i + 1])
  else
    redis.call('HDEL', key, counts[i])  -- a node that died without cleaning up
  end
end
return {emit(rid, '{"type":"spectators","count":' .. total .. '}', ARGV[4]), total}
"""
)

# ARGV: room, analysis JSON, origin. Stores a finished race's analysis once and emits it;
# returns the event version, or 0 when it was already stored or the room is gone.
ANALYSIS = (
    _EMIT
    + """
local rid = ARGV[1]
local base = 'room:{' .. rid .. '}'
if redis.call('EXISTS', base) == 0 then return 0 end
if redis.call('HSETNX', base, 'analysis', ARGV[2]) == 0 then return 0 end
return emit(rid, '{"type":"analysis","analysis":' .. ARGV[2] .. '}', ARGV[3])
"""
)

# Pops the first quick-match ticket still waiting: {ticket, name} or nil.
QUICK_POP = """
while true do
  local t = redis.call('LPOP', 'mm:queue')
  if not t then return false end
  local name = redis.call('GET', 'mm:t:' .. t)
  if name then
    redis.call('DEL', 'mm:t:' .. t)
    return {t, name}
  end
end
"""


def room_key(code: str) -> str:
    return f"room:{{{code}}}"


def moves_key(code: str, player: str) -> str:
    return f"room:{{{code}}}:moves:{player}"


class Store:
    """The server's Redis access. ``latency`` is called with the seconds of each round trip."""

    def __init__(
        self, redis: aioredis.Redis, node: str, latency: Callable[[float], None] | None = None
    ) -> None:
        self.redis = redis
        self.node = node
        self._latency = latency or (lambda _s: None)
        self._append = redis.register_script(APPEND_MOVES)
        self._cas = redis.register_script(ROOM_CAS)
        self._spect = redis.register_script(SPECTATORS)
        self._quick = redis.register_script(QUICK_POP)
        self._analysis = redis.register_script(ANALYSIS)
        self._pending: list[tuple[bytes, asyncio.Future]] = []
        self._wake = asyncio.Event()
        self._writer: asyncio.Task | None = None
        self.max_batch = 1000
        self.batches = 0

    async def _timed(self, call: Awaitable[Any]) -> Any:
        t0 = time.perf_counter()
        try:
            return await call
        finally:
            self._latency(time.perf_counter() - t0)

    # ---- group commit -----------------------------------------------------------------
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

    def append_move(
        self,
        code: str,
        player: str,
        seq: int,
        entry: str,
        progress: dict,
        rank: int,
        body: bytes,
    ) -> asyncio.Future:
        """Queue one move for the next group commit; the future gets the script's answer
        for it (see APPEND_MOVES)."""
        fut = asyncio.get_running_loop().create_future()
        # one argument per move, its fields joined by \x1f (never raw in JSON or notation):
        # redis-py's cost is per argument
        args = b"\x1f".join(
            (
                code.encode(),
                player.encode(),
                b"%d" % seq,
                entry.encode(),
                orjson.dumps(progress),
                b"%d" % rank,
                body,
            )
        )
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
                    results = await self._timed(self._append(args=args))
                except Exception as err:
                    for _, fut in batch:
                        if not fut.done():
                            fut.set_exception(err)
                    continue
                self.batches += 1
                for (_, fut), result in zip(batch, results.split(b","), strict=True):
                    if not fut.done():
                        fut.set_result(int(result))

    # ---- rooms --------------------------------------------------------------------------
    async def load_room(self, code: str) -> tuple[dict, int] | None:
        state, rev = await self._timed(self.redis.hmget(room_key(code), "state", "rev"))
        if state is None:
            return None
        return orjson.loads(state), int(rev)

    async def cas_room(
        self,
        code: str,
        rev: int,
        state: dict,
        status: str,
        body: bytes | None,
        ranks: list[tuple[str, dict, int]] = (),  # type: ignore[assignment]
    ) -> int:
        args = [
            code,
            str(rev),
            orjson.dumps(state).decode(),
            status,
            body.decode() if body else "",
            self.node,
        ]
        for pid, prog, key in ranks:
            args += [pid, orjson.dumps(prog).decode(), str(key)]
        return int(await self._timed(self._cas(args=args)))

    async def moves(self, code: str, player: str) -> list[str]:
        return [
            m.decode() for m in await self._timed(self.redis.lrange(moves_key(code, player), 0, -1))
        ]

    async def snapshot(self, code: str) -> tuple[int, dict[str, dict], int]:
        """(version, progress by player, spectators) of a room."""
        base = room_key(code)
        async with self.redis.pipeline(transaction=True) as pipe:
            pipe.get(base + ":ver")
            pipe.hgetall(base + ":prog")
            pipe.hvals(base + ":spect")
            ver, prog, spect = await self._timed(pipe.execute())
        progress = {k.decode(): orjson.loads(v) for k, v in prog.items()}
        return int(ver or 0), progress, sum(int(c) for c in spect)

    async def events_since(self, code: str, version: int) -> list[dict]:
        raw = await self._timed(
            self.redis.zrangebyscore(room_key(code) + ":events", f"({version}", "+inf")
        )
        return [orjson.loads(r) for r in raw]

    async def oldest_event(self, code: str) -> int | None:
        first = await self.redis.zrange(room_key(code) + ":events", 0, 0, withscores=True)
        return int(first[0][1]) if first else None

    async def enter_room(self, code: str) -> None:
        await self._timed(self.redis.sadd(room_key(code) + ":nodes", self.node))

    async def exit_room(self, code: str) -> None:
        await self._timed(self.redis.srem(room_key(code) + ":nodes", self.node))

    async def set_spectators(self, code: str, count: int) -> tuple[int, int]:
        v, total = await self._timed(self._spect(args=[code, self.node, count, self.node]))
        return int(v), int(total)

    async def list_public(self, limit: int = 50) -> list[dict]:
        codes = await self.redis.zrevrange("rooms:public", 0, limit - 1)
        if not codes:
            return []
        async with self.redis.pipeline(transaction=False) as pipe:
            for code in codes:
                pipe.hget(room_key(code.decode()), "state")
            states = await pipe.execute()
        gone = [c for c, s in zip(codes, states, strict=True) if not s]
        if gone:  # expired rooms leave the list
            await self.redis.zrem("rooms:public", *gone)
        return [orjson.loads(s) for s in states if s]

    async def heartbeat(self, ttl: int = 30) -> None:
        """This node is alive for ``ttl`` seconds (its spectator counts count)."""
        await self._timed(self.redis.set(f"node:{self.node}", 1, ex=ttl))

    async def node_gone(self) -> None:
        await self.redis.delete(f"node:{self.node}")

    async def expire_room(self, code: str, players: list[str], seconds: int) -> None:
        """A finished room's keys go away after ``seconds`` (results stay readable until)."""
        base = room_key(code)
        keys = [base] + [
            base + s for s in (":prog", ":rank", ":ver", ":events", ":nodes", ":spect")
        ]
        keys += [moves_key(code, p) for p in players]
        async with self.redis.pipeline(transaction=False) as pipe:
            for key in keys:
                pipe.expire(key, seconds)
            await self._timed(pipe.execute())

    async def save_analysis(self, code: str, analysis: dict) -> int:
        """Store a finished race's analysis once; the event version, or 0 if already kept.
        The race leaves ``rooms:analysis`` after (a key of another slot than the room's:
        should this node die in between, the sweeper finds the analysis stored)."""
        v = await self._timed(
            self._analysis(args=[code, orjson.dumps(analysis).decode(), self.node])
        )
        await self._timed(self.redis.zrem("rooms:analysis", code))
        return int(v)

    async def analysis_due(self, code: str, at: int) -> None:
        """A finished race to analyse: if its analysis is not stored by ``at`` (epoch
        ms), the sweeper has it made (``save_analysis`` takes it off the list)."""
        await self._timed(self.redis.zadd("rooms:analysis", {code: at}))

    async def claim_analyses(self, now: int, limit: int = 20) -> list[str]:
        """Races whose analysis is overdue, each taken off the list by exactly one caller."""
        codes = await self._timed(
            self.redis.zrangebyscore("rooms:analysis", "-inf", now, start=0, num=limit)
        )
        return [c.decode() for c in codes if await self.redis.zrem("rooms:analysis", c)]

    async def load_analysis(self, code: str) -> dict | None:
        raw = await self._timed(self.redis.hget(room_key(code), "analysis"))
        return orjson.loads(raw) if raw else None

    async def seed_moves(
        self, code: str, player: str, entries: list[str], progress: dict, rank: int
    ) -> None:
        """The first moves of a new practice continuation (copied from its race's log)."""
        base = room_key(code)
        async with self.redis.pipeline(transaction=True) as pipe:
            if entries:
                pipe.rpush(moves_key(code, player), *entries)
            pipe.hset(base + ":prog", player, orjson.dumps(progress))
            pipe.zadd(base + ":rank", {player: rank})
            await self._timed(pipe.execute())

    # ---- the sweeper ----------------------------------------------------------------------
    async def track(self, code: str, now: int) -> None:
        """A new room: the sweeper watches it until it finishes."""
        await self._timed(self.redis.zadd("rooms:active", {code: now}, nx=True))

    async def untrack(self, code: str) -> None:
        await self._timed(self.redis.zrem("rooms:active", code))

    async def touch(self, codes: list[str], now: int) -> None:
        """Players are connected to these rooms now (only rooms still tracked are kept)."""
        if codes:
            await self._timed(
                self.redis.zadd("rooms:active", dict.fromkeys(codes, now), xx=True, gt=True)
            )

    async def idle_rooms(self, before: int, limit: int = 200) -> list[str]:
        """Tracked rooms where no player has been connected since ``before``."""
        codes = await self._timed(
            self.redis.zrangebyscore("rooms:active", "-inf", before, start=0, num=limit)
        )
        return [c.decode() for c in codes]

    async def last_seen(self, code: str) -> int | None:
        score = await self._timed(self.redis.zscore("rooms:active", code))
        return None if score is None else int(score)

    async def sweep_lock(self, node: str, ms: int) -> bool:
        """One node sweeps at a time: true when this node holds the lock for ``ms``."""
        return bool(await self._timed(self.redis.set("kr:sweep", node, nx=True, px=ms)))

    async def set_public(self, code: str, created: int, listed: bool) -> None:
        if listed:
            await self.redis.zadd("rooms:public", {code: created})
        else:
            await self.redis.zrem("rooms:public", code)

    # ---- quick match --------------------------------------------------------------------
    async def quick_pop(self) -> tuple[str, str] | None:
        got = await self._timed(self._quick(args=[]))
        if not got:
            return None
        return got[0].decode(), got[1].decode()

    async def quick_push(self, ticket: str, name: str) -> None:
        async with self.redis.pipeline(transaction=True) as pipe:
            pipe.set(f"mm:t:{ticket}", name, ex=3600)
            pipe.rpush("mm:queue", ticket)
            await self._timed(pipe.execute())

    async def quick_cancel(self, ticket: str) -> None:
        async with self.redis.pipeline(transaction=True) as pipe:
            pipe.delete(f"mm:t:{ticket}")
            pipe.lrem("mm:queue", 0, ticket)
            await pipe.execute()

    async def notify(self, channel_key: str, payload: dict) -> None:
        await self.redis.publish(CHANNEL, f"{channel_key}|".encode() + orjson.dumps(payload))
