"""What the sweeper needs: live nodes, rooms not finished and when a player was last
connected to each, the sweep lock, and races whose analysis is overdue."""

from __future__ import annotations

from typing import Any

from .base import Part
from .keys import room_key


class Sweeping(Part):
    async def heartbeat(self, connections: int = 0, ttl: int = 30) -> None:
        """This node is alive for ``ttl`` seconds (its spectator counts count), with
        ``connections`` open (the lobby's "online")."""
        async with self.redis.pipeline(transaction=False) as pipe:
            pipe.set(f"node:{self.node}", connections, ex=ttl)
            pipe.sadd("nodes", self.node)
            await self._timed(pipe.execute())

    async def node_gone(self) -> None:
        async with self.redis.pipeline(transaction=False) as pipe:
            pipe.delete(f"node:{self.node}")
            pipe.srem("nodes", self.node)
            await self._timed(pipe.execute())

    async def online(self, here: int) -> int:
        """Connections open on the live nodes: ``here`` on this one, on each other one
        as it said in its last heartbeat."""
        names, counts = await self._heartbeats()
        if not names:
            return here
        gone = [n for n, c in zip(names, counts, strict=True) if c is None]
        if gone:  # a node that died without saying so
            await self._timed(self.redis.srem("nodes", *gone))
        others = (int(c) for n, c in zip(names, counts, strict=True) if c and n != self.node)
        return here + sum(others)

    async def live(self) -> list[str]:
        """The nodes whose heartbeat has not expired."""
        names, counts = await self._heartbeats()
        return [n for n, c in zip(names, counts, strict=True) if c is not None]

    async def _heartbeats(self) -> tuple[list[str], list[Any]]:
        """(the nodes that said they were live, each one's ``node:{NODE}`` or None); on a
        cluster the ``node:`` keys are read per slot (``MGET`` cannot span slots)."""
        nodes: Any = await self._timed(self.redis.smembers("nodes"))
        names = sorted(n.decode() for n in nodes)
        if not names:
            return [], []
        keys = [f"node:{n}" for n in names]
        read = self.redis.mget_nonatomic if self.cluster else self.redis.mget
        counts: Any = await self._timed(read(keys))
        return names, list(counts)

    async def track(self, code: str, now: int) -> None:
        """A new room: the sweeper watches it until it finishes."""
        await self._timed(self.redis.zadd("rooms:active", {code: now}, nx=True))

    async def untrack(self, code: str) -> None:
        async with self.redis.pipeline(transaction=False) as pipe:
            pipe.zrem("rooms:active", code)
            pipe.zrem("rooms:deadlines", code)
            pipe.zrem("rooms:partly_over", code)
            await self._timed(pipe.execute())

    async def deadline(self, code: str, at: int) -> None:
        """A race with a time limit, ending at ``at`` (epoch ms): the sweeper ends it then
        if no node did (nobody was connected); it leaves with ``untrack``."""
        await self._timed(self.redis.zadd("rooms:deadlines", {code: at}))

    async def past_deadline(self, now: int, limit: int = 200) -> list[str]:
        """Tracked races whose time limit ended before ``now``."""
        codes: Any = await self._timed(
            self.redis.zrangebyscore("rooms:deadlines", "-inf", now, start=0, num=limit)
        )
        return [c.decode() for c in codes]

    async def touch(self, codes: list[str], now: int) -> None:
        """Players are connected to these rooms now (only rooms still tracked are kept)."""
        if codes:
            await self._timed(
                self.redis.zadd("rooms:active", dict.fromkeys(codes, now), xx=True, gt=True)
            )

    async def seen(self, seats: dict[str, list[str]], now: int, keep_ms: int) -> None:
        """These players (by room) are connected now; each room's marks are kept
        ``keep_ms`` after its last (``room:{CODE}:seen``, in the room's slot)."""
        if not seats:
            return
        async with self.redis.pipeline(transaction=False) as pipe:
            for code, players in seats.items():
                key = room_key(code) + ":seen"
                pipe.hset(key, mapping=dict.fromkeys(players, now))
                pipe.pexpire(key, keep_ms)
            await self._timed(pipe.execute())

    async def last_seen_seats(self, code: str) -> dict[str, int]:
        """When each of a room's players was last seen connected (epoch ms), as far as
        the nodes' marks (every sweep interval) say; a player never seen is absent."""
        got: Any = await self._timed(self.redis.hgetall(room_key(code) + ":seen"))
        return {k.decode(): int(v) for k, v in got.items()}

    async def partly_over(self, code: str, now: int) -> None:
        """A race where some player's game has ended and others play on: the sweeper
        looks whether those still playing are all away (``away_rooms``)."""
        await self._timed(self.redis.zadd("rooms:partly_over", {code: now}, nx=True))

    async def away_rooms(self, limit: int = 200) -> list[str]:
        """The races of ``partly_over`` looked at longest ago (``looked_at``)."""
        codes: Any = await self._timed(self.redis.zrange("rooms:partly_over", 0, limit - 1))
        return [c.decode() for c in codes]

    async def looked_at(self, codes: list[str], now: int) -> None:
        """These races of ``partly_over`` play on: to the back of the line."""
        if codes:
            await self._timed(
                self.redis.zadd("rooms:partly_over", dict.fromkeys(codes, now), xx=True)
            )

    async def idle_rooms(self, before: int, limit: int = 200) -> list[str]:
        """Tracked rooms where no player has been connected since ``before``."""
        codes: Any = await self._timed(
            self.redis.zrangebyscore("rooms:active", "-inf", before, start=0, num=limit)
        )
        return [c.decode() for c in codes]

    async def last_seen_many(self, codes: list[str]) -> list[int | None]:
        """``last_seen`` of each of ``codes``, in one round trip."""
        if not codes:
            return []
        got: Any = await self._timed(self.redis.zmscore("rooms:active", codes))
        return [None if s is None else int(s) for s in got]

    async def last_seen(self, code: str) -> int | None:
        score = await self._timed(self.redis.zscore("rooms:active", code))
        return None if score is None else int(score)

    async def lock(self, ms: int) -> bool:
        """One node sweeps at a time: true when this node holds the lock for ``ms``."""
        return bool(await self._timed(self.redis.set("kr:sweep", self.node, nx=True, px=ms)))

    async def claim_analyses(self, now: int, limit: int = 20) -> list[str]:
        """Races whose analysis is overdue, each taken off the list by exactly one caller."""
        codes: Any = await self._timed(
            self.redis.zrangebyscore("rooms:analysis", "-inf", now, start=0, num=limit)
        )
        return [c.decode() for c in codes if await self.redis.zrem("rooms:analysis", c)]
