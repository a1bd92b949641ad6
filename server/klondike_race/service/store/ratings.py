"""Ratings, statistics and race histories of players, applied to a finished race exactly
once; a guest's moved to the account that claims it; a player's profile read back.

Applying a race is one optimistic transaction: WATCH the room key and every stored
player's keys, check the room's ``rated`` marker, read the race's results and the
players' statistics, compute (a pure function from domain/rating.py), then MULTI/EXEC
the new statistics, the history entries, the marker and the race's removal from
``rooms:rating``; a WatchError (another writer) starts it over. So two nodes applying the
same race at once, or a sweep after the finishing node applied it, change nothing twice.

One Redis is assumed: the room's keys (slot of ``{CODE}``) and the players' keys are in
different Redis Cluster slots, which a transaction cannot span; a Cluster deployment
would need another shape (e.g. a per-player inbox of race outcomes, each applied with
its own marker in the player's slot).
"""

from __future__ import annotations

from collections.abc import Callable
from typing import Any

import orjson
from redis.exceptions import WatchError

from .base import Part
from .keys import room_key
from .scripts import CLAIM, CLAIM_DUE

RATING = "rooms:rating"
GUEST_KEEP_S = 180 * 86400  # a guest's data goes 180 days after their last counted race
RACES_KEPT = 50

# (room state, progress by seat, composites by seat, stored stats by who) -> outcomes:
# [(who, new stats of the variant, history entry)]
Settle = Callable[
    [dict[str, Any], dict[str, dict[str, Any]], dict[str, int], dict[str, Any]],
    list[tuple[str, dict[str, Any], dict[str, Any]]],
]


def stats_key(who: str) -> str:
    return f"player:{who}:stats"


def races_key(who: str) -> str:
    return f"player:{who}:races"


class Ratings(Part):
    def __init__(self, *args: Any) -> None:
        super().__init__(*args)
        self._claim = self._script(CLAIM)
        self._claim_due = self._script(CLAIM_DUE)

    async def apply(self, code: str, variant_of: Callable[[dict[str, Any]], str],
                    settle: Settle) -> bool:  # fmt: skip
        """Apply a finished race once: True when this call applied it, False when it was
        applied before (or the room is gone). ``variant_of(state)`` names the variant
        whose statistics ``settle`` reads and writes."""
        base = room_key(code)
        for _ in range(100):
            pipe: Any
            async with self.redis.pipeline(transaction=True) as pipe:
                try:
                    await pipe.watch(base)
                    state, marker = await pipe.hmget(base, "state", "rated")
                    if state is None or marker is not None:
                        await pipe.unwatch()
                        await self._timed(self.redis.zrem(RATING, code))
                        return False
                    room = orjson.loads(state)
                    who = sorted({s[4] for s in room["seats"] if s[4]})
                    if who:
                        await pipe.watch(*[stats_key(w) for w in who])
                    variant = variant_of(room)
                    progress = {
                        k.decode(): orjson.loads(v)
                        for k, v in (await pipe.hgetall(base + ":prog")).items()
                    }
                    composites = {
                        k.decode(): int(v)
                        for k, v in await pipe.zrange(base + ":rank", 0, -1, withscores=True)
                    }
                    stored: dict[str, Any] = {}
                    for w in who:
                        raw = await pipe.hget(stats_key(w), variant)
                        stored[w] = orjson.loads(raw) if raw else None
                    outcomes = settle(room, progress, composites, stored)
                    pipe.multi()
                    for w, stats, entry in outcomes:
                        pipe.hset(stats_key(w), variant, orjson.dumps(stats))
                        pipe.lpush(races_key(w), orjson.dumps(entry))
                        pipe.ltrim(races_key(w), 0, RACES_KEPT - 1)
                        if w.startswith("g-"):
                            pipe.expire(stats_key(w), GUEST_KEEP_S)
                            pipe.expire(races_key(w), GUEST_KEEP_S)
                    pipe.hset(base, "rated", len(outcomes))
                    pipe.zrem(RATING, code)
                    await self._replicated(pipe)
                    return True
                except WatchError:
                    continue
        raise RuntimeError(f"race {code}: ratings not applied under contention")

    async def claim_due(self, now: int, grace_ms: int, limit: int = 20) -> list[str]:
        """Races whose ratings are overdue (their node died before applying them); each
        is due again ``grace_ms`` later unless applied by then."""
        codes: Any = await self._timed(self._claim_due(args=[RATING, now, grace_ms, limit]))
        return [c.decode() for c in codes]

    async def claim_guest(self, guest: str, account: str) -> int:
        """A guest's statistics and history become the account's: how many keys moved."""
        return int(await self._timed(self._claim(args=[guest, account])))

    async def profile(self, who: str) -> tuple[dict[str, Any], list[dict[str, Any]]] | None:
        """(stats by variant, races newest first) of a player, or None when none stored."""
        async with self.redis.pipeline(transaction=True) as pipe:
            pipe.hgetall(stats_key(who))
            pipe.lrange(races_key(who), 0, RACES_KEPT - 1)
            stats, races = await self._timed(pipe.execute())
        if not stats and not races:
            return None
        return (
            {k.decode(): orjson.loads(v) for k, v in stats.items()},
            [orjson.loads(r) for r in races],
        )

    async def variant_stats(self, who: str, variant: str) -> dict[str, Any] | None:
        """A player's stored statistics of one variant, or None."""
        raw = await self._timed(self.redis.hget(stats_key(who), variant))
        return orjson.loads(raw) if raw else None
