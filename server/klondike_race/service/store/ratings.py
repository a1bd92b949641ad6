"""Ratings, statistics and race histories of players, applied to a finished race exactly
once; a guest's moved to the account that claims it; a player's profile read back.

Applying a race is one optimistic transaction: WATCH the room key and every stored
player's keys, check the room's ``rated`` marker, read the race's results and the
players' statistics, compute (a pure function from domain/rating.py), then MULTI/EXEC
the new statistics, the history entries, the marker and the race's removal from
``rooms:rating``; a WatchError (another writer) starts it over. So two nodes applying the
same race at once, or a sweep after the finishing node applied it, change nothing twice.

On a Redis Cluster the room's keys (slot of ``{CODE}``) and each player's keys (slot of
``{WHO}``: ``player:{WHO}:stats``, ``:races``, ``:applied``) are in different slots, which
no transaction spans; the race is applied in per-slot steps instead (``_apply_slots``):
the plan (every player's outcome, and the statistics it was computed from) is stored
once in the room's hash (``HSETNX plan``), then each player's outcome is applied in
their own slot by one script that does nothing when the race is already in that
player's ``:applied`` set, then the room's ``rated`` marker is set and the race leaves
``rooms:rating``. A node dying between steps leaves the race on ``rooms:rating``: the
sweeper reruns it, the stored plan is reused and applied players are skipped, so each
player gets the race once. A player whose statistics changed since the plan (another
race of theirs applied in between) gets their outcome computed again from their
current statistics and the other players' planned ones.
"""

from __future__ import annotations

from collections.abc import Callable
from typing import Any

import orjson
from redis.exceptions import ResponseError, WatchError

from . import slot_scripts
from .base import Part
from .keys import player_key, room_key
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


def stats_key(who: str, tagged: bool = False) -> str:
    return player_key(who, "stats", tagged)


def races_key(who: str, tagged: bool = False) -> str:
    return player_key(who, "races", tagged)


class Ratings(Part):
    def __init__(self, *args: Any) -> None:
        super().__init__(*args)
        self._claim = self._script(CLAIM)
        self._claim_due = self._script(CLAIM_DUE)
        self._apply_player = self._script(slot_scripts.APPLY_PLAYER)

    async def apply(
        self, code: str, variant_of: Callable[[dict[str, Any]], str], settle: Settle
    ) -> bool:
        """Apply a finished race once: True when this call applied it, False when it was
        applied before (or the room is gone). ``variant_of(state)`` names the variant
        whose statistics ``settle`` reads and writes."""
        if self.cluster:
            return await self._apply_slots(code, variant_of, settle)
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

    async def _apply_slots(
        self, code: str, variant_of: Callable[[dict[str, Any]], str], settle: Settle
    ) -> bool:
        """``apply`` on a cluster, in per-slot steps (the module's docstring)."""
        base = room_key(code)
        state, status, marker, plan = await self._timed(
            self.redis.hmget(base, "state", "status", "rated", "plan")
        )
        if state is None or marker is not None or status != b"finished":
            await self._timed(self.redis.zrem(RATING, code))
            return False
        room = orjson.loads(state)
        variant = variant_of(room)
        async with self.redis.pipeline(transaction=False) as pipe:
            pipe.hgetall(base + ":prog")
            pipe.zrange(base + ":rank", 0, -1, withscores=True)
            prog, ranks = await self._timed(pipe.execute())
        progress = {k.decode(): orjson.loads(v) for k, v in prog.items()}
        composites = {k.decode(): int(v) for k, v in ranks}
        if plan is None:
            who = sorted({s[4] for s in room["seats"] if s[4]})
            stored = {w: await self._raw_stats(w, variant) for w in who}
            outcomes = settle(room, progress, composites, _parsed(stored))
            made = {"stored": stored, "outcomes": outcomes}
            await self._timed(self.redis.hsetnx(base, "plan", orjson.dumps(made)))
            plan = await self._timed(self.redis.hget(base, "plan"))  # the first one stored
        planned = orjson.loads(plan)
        for w, stats, entry in planned["outcomes"]:
            based = planned["stored"].get(w) or ""
            for _ in range(100):
                keys = [stats_key(w, True), races_key(w, True), player_key(w, "applied", True)]
                keep = GUEST_KEEP_S if w.startswith("g-") else 0
                args = [
                    code,
                    variant,
                    based,
                    orjson.dumps(stats),
                    orjson.dumps(entry),
                    self.clock.now_ms(),
                    keep,
                    RACES_KEPT,
                ]
                if int(await self._durably(self._apply_player, args, keys)) == 1:
                    break
                # stale: computed again on this player's current statistics
                based = await self._raw_stats(w, variant) or ""
                stored = {**planned["stored"], w: based or None}
                mine = [o for o in settle(room, progress, composites, _parsed(stored)) if o[0] == w]
                if not mine:
                    break
                stats, entry = mine[0][1], mine[0][2]
            else:
                raise RuntimeError(f"race {code}: ratings not applied under contention")
        applied = await self._timed(self.redis.hsetnx(base, "rated", len(planned["outcomes"])))
        await self._timed(self.redis.zrem(RATING, code))
        return bool(applied)

    async def _raw_stats(self, who: str, variant: str) -> str | None:
        raw = await self._timed(self.redis.hget(stats_key(who, True), variant))
        return raw.decode() if raw else None

    async def claim_due(self, now: int, grace_ms: int, limit: int = 20) -> list[str]:
        """Races whose ratings are overdue (their node died before applying them); each
        is due again ``grace_ms`` later unless applied by then."""
        args = [RATING, now, grace_ms, limit]
        codes: Any = await self._timed(self._claim_due(keys=[RATING], args=args))
        return [c.decode() for c in codes]

    async def claim_guest(self, guest: str, account: str) -> int:
        """A guest's statistics and history become the account's: how many keys moved;
        the guest's name goes (store/accounts.py, ``guest_seated``). On a cluster the
        two players' keys are in different slots: each key is copied (``DUMP``,
        ``RESTORE`` without a TTL, refused when the account has that key) and then
        deleted; a node dying in between leaves the guest's copy to expire."""
        if not self.cluster:
            return int(await self._timed(self._claim(args=[guest, account])))
        moved = 0
        for part in ("stats", "races", "daily", "arenas", "play", "applied"):
            source, target = player_key(guest, part, True), player_key(account, part, True)
            dumped = await self._timed(self.redis.dump(source))
            if dumped is None or await self._timed(self.redis.exists(target)):
                continue
            try:
                await self._timed(self.redis.restore(target, 0, dumped))
            except ResponseError:  # BUSYKEY: the account got it meanwhile
                continue
            await self._timed(self.redis.delete(source))
            moved += part != "applied"
        await self._timed(self.redis.delete(player_key(guest, "name", True)))
        return moved

    async def profile(self, who: str) -> tuple[dict[str, Any], list[dict[str, Any]]] | None:
        """(stats by variant, races newest first) of a player, or None when none stored."""
        async with self.redis.pipeline(transaction=True) as pipe:
            pipe.hgetall(stats_key(who, self.cluster))
            pipe.lrange(races_key(who, self.cluster), 0, RACES_KEPT - 1)
            stats, races = await self._timed(pipe.execute())
        if not stats and not races:
            return None
        return (
            {k.decode(): orjson.loads(v) for k, v in stats.items()},
            [orjson.loads(r) for r in races],
        )

    async def variant_stats(self, whos: list[str], variant: str) -> list[dict[str, Any] | None]:
        """Players' stored statistics of one variant (None for a player with none), in
        one round trip (on a cluster, one per primary)."""
        if not whos:
            return []
        async with self.redis.pipeline(transaction=False) as pipe:
            for who in whos:
                pipe.hget(stats_key(who, self.cluster), variant)
            raws = await self._timed(pipe.execute())
        return [orjson.loads(raw) if raw else None for raw in raws]


def _parsed(stored: dict[str, str | None]) -> dict[str, Any]:
    return {w: orjson.loads(raw) if raw else None for w, raw in stored.items()}
