"""Rooms: the room state with its compare-and-set revision, event versions and the kept
events, the nodes and spectators in each room, the public list, analyses, expiry."""

from __future__ import annotations

from collections.abc import Awaitable, Callable
from typing import Any

import orjson

from . import slot_scripts
from .base import Part
from .keys import moves_key, room_key
from .scripts import ANALYSIS, ROOM_CAS, SPECTATORS

MOVED = -2  # ``cas``: the player named as not having moved had (nothing stored)


class Rooms(Part):
    def __init__(
        self,
        *args: Any,
        listen: Callable[[str, bool], Awaitable[None]] | None = None,
        live_nodes: Callable[[], Awaitable[list[str]]] | None = None,
    ) -> None:
        super().__init__(*args)
        self._cas = self._script(ROOM_CAS)
        self._spect = self._script(SPECTATORS)
        self._analysis = self._script(ANALYSIS)
        if self.cluster:
            self._cas = self._script(slot_scripts.ROOM_CAS)
            self._spect = self._script(slot_scripts.SPECTATORS)
            self._analysis = self._script(slot_scripts.ANALYSIS)
        # on a cluster: (room code, True to listen / False to stop) for the room's sharded
        # channel, called as this node enters and leaves a room; and the live nodes
        self.listen = listen
        self.live_nodes = live_nodes

    async def load(self, code: str) -> tuple[dict[str, Any], int] | None:
        """The room's stored state and its revision, or None."""
        got: Any = await self._timed(self.redis.hmget(room_key(code), "state", "rev"))
        state, rev = got
        if state is None:
            return None
        return orjson.loads(state), int(rev)

    async def cas(
        self,
        code: str,
        rev: int,
        state: dict[str, Any],
        status: str,
        body: bytes | None,
        ranks: list[tuple[str, dict[str, Any], int]] | None = None,
        owed: list[tuple[str, int]] | None = None,
        unmoved: str | None = None,
    ) -> int:
        """Store ``state`` if the revision is still ``rev`` and emit ``body``: the event
        version, 0 when there was no event, -1 when another writer came first. With
        ``replicas`` set, it returns once they hold it (or raises NotReplicated).
        ``owed``: (follow-up list, due epoch ms) pairs the room joins in the same step;
        ``unmoved``: a player whose move log must still be empty (else ``MOVED``)."""
        args = [
            code,
            str(rev),
            orjson.dumps(state).decode(),
            status,
            body.decode() if body else "",
            self.node,
            " ".join(f"{name}={due}" for name, due in owed or ()),
            unmoved or "",
        ]
        for pid, prog, key in ranks or ():
            args += [pid, orjson.dumps(prog).decode(), str(key)]
        if not self.cluster:
            return int(await self._durably(self._cas, args))
        # the follow-up lists are other slots: the room joins them first (due later), so
        # a node dying after the room's step leaves the work owed to the sweeper; should
        # the compare-and-set fail, the sweeper drops an entry whose room is not finished
        for name, due in owed or ():
            await self._timed(self.redis.zadd(name, {code: due}))
        base = room_key(code)
        keys = [*slot_scripts.room_keys(code), base + ":prog", base + ":rank"]
        if unmoved:
            keys.append(moves_key(code, unmoved))
        return int(await self._durably(self._cas, args, keys))

    async def snapshot(self, code: str) -> tuple[int, dict[str, dict[str, Any]], int]:
        """(version, progress by player, spectators) of a room."""
        base = room_key(code)
        async with self.redis.pipeline(transaction=True) as pipe:
            pipe.get(base + ":ver")
            pipe.hgetall(base + ":prog")
            pipe.hvals(base + ":spect")
            ver, prog, spect = await self._timed(pipe.execute())
        progress = {k.decode(): orjson.loads(v) for k, v in prog.items()}
        return int(ver or 0), progress, sum(int(c) for c in spect)

    async def events_since(self, code: str, version: int) -> list[dict[str, Any]]:
        raw: Any = await self._timed(
            self.redis.zrangebyscore(room_key(code) + ":events", f"({version}", "+inf")
        )
        return [orjson.loads(r) for r in raw]

    async def oldest_event(self, code: str) -> int | None:
        first = await self._timed(
            self.redis.zrange(room_key(code) + ":events", 0, 0, withscores=True)
        )
        return int(first[0][1]) if first else None

    async def enter(self, code: str) -> None:
        """This node has a connection in the room: its events are published to us."""
        if self.listen is not None:  # listening before joining: no event is missed
            await self.listen(code, True)
        await self._timed(self.redis.sadd(room_key(code) + ":nodes", self.node))

    async def rejoin(self, codes: list[str]) -> list[bool]:
        """``enter`` again (the events' channels are already ours): for each room,
        whether this node was missing from its node set."""
        async with self.redis.pipeline(transaction=False) as pipe:
            for code in codes:
                pipe.sadd(room_key(code) + ":nodes", self.node)
            added = await self._timed(pipe.execute())
        return [bool(n) for n in added]

    async def exit(self, code: str) -> None:
        try:
            await self._timed(self.redis.srem(room_key(code) + ":nodes", self.node))
        finally:
            if self.listen is not None:
                await self.listen(code, False)

    async def set_spectators(self, code: str, count: int) -> tuple[int, int]:
        """This node's spectator count of a room: (event version, total of live nodes)."""
        args: list[Any] = [code, self.node, count, self.node]
        if not self.cluster:
            v, total = await self._timed(self._spect(args=args))
            return int(v), int(total)
        live = await self.live_nodes() if self.live_nodes is not None else []
        keys = [*slot_scripts.room_keys(code), room_key(code) + ":spect"]
        v, total = await self._timed(self._spect(keys=keys, args=args + live))
        return int(v), int(total)

    async def list_public(self, limit: int = 50) -> list[dict[str, Any]]:
        codes: Any = await self._timed(self.redis.zrevrange("rooms:public", 0, limit - 1))
        if not codes:
            return []
        async with self.redis.pipeline(transaction=False) as pipe:
            for code in codes:
                pipe.hget(room_key(code.decode()), "state")
            states = await self._timed(pipe.execute())
        gone = [c for c, s in zip(codes, states, strict=True) if not s]
        if gone:  # expired rooms leave the list
            await self._timed(self.redis.zrem("rooms:public", *gone))
        return [orjson.loads(s) for s in states if s]

    async def set_public(self, code: str, created: int, listed: bool) -> None:
        if listed:
            await self._timed(self.redis.zadd("rooms:public", {code: created}))
        else:
            await self._timed(self.redis.zrem("rooms:public", code))

    async def expire(
        self, code: str, players: list[str], seconds: int, events_s: int | None = None
    ) -> None:
        """A finished room's keys go away after ``seconds`` (results and the replay stay
        readable until); its kept events (for resumes: the bulk of a finished room's
        memory) after ``events_s`` when that is sooner."""
        base = room_key(code)
        keys = [base] + [base + s for s in (":prog", ":rank", ":ver", ":nodes", ":spect")]
        keys += [moves_key(code, p) for p in players]
        async with self.redis.pipeline(transaction=False) as pipe:
            for key in keys:
                pipe.expire(key, seconds)
            pipe.expire(base + ":events", min(seconds, events_s or seconds))
            await self._timed(pipe.execute())

    async def save_analysis(self, code: str, analysis: dict[str, Any]) -> int:
        """Store a finished race's analysis once; the event version, or 0 if already kept.
        The race leaves ``rooms:analysis`` after (a key of another slot than the room's:
        should this node die in between, the sweeper finds the analysis stored)."""
        return await self.save_after(code, "analysis", analysis, "rooms:analysis")

    async def save_after(self, code: str, what: str, value: dict[str, Any], due: str) -> int:
        """Store what follows a finished room's end once (``what``: ``analysis``, or
        ``played``, node/played.py) and emit it as a ``what`` event: the event version,
        or 0 if already kept. The room leaves the follow-up list ``due`` after."""
        args = [code, orjson.dumps(value).decode(), self.node, what]
        keys = slot_scripts.room_keys(code) if self.cluster else None
        v = await self._timed(self._analysis(keys=keys, args=args))
        await self._timed(self.redis.zrem(due, code))
        return int(v)

    async def mark_assisted(self, code: str, player: str) -> None:
        """A practice game whose player had the solver's help (its statistics skip it)."""
        await self._timed(self.redis.hset(room_key(code), f"assisted:{player}", 1))

    async def rank_of(self, code: str, player: str) -> int | None:
        """A player's composite in ``room:{CODE}:rank`` (written with each move)."""
        got = await self._timed(self.redis.zscore(room_key(code) + ":rank", player))
        return None if got is None else int(got)

    async def load_analysis(self, code: str) -> dict[str, Any] | None:
        return (await self.load_after(code))[0]

    async def load_after(self, code: str) -> tuple[dict[str, Any] | None, dict[str, Any]]:
        """(the analysis or None, the ``played`` seats or {}) of a finished room."""
        raw = await self._timed(self.redis.hmget(room_key(code), "analysis", "played"))
        return (orjson.loads(raw[0]) if raw[0] else None, orjson.loads(raw[1]) if raw[1] else {})
