"""Play statistics (domain/played.py): each counted game applied to its player once.

``player:WHO:play`` (hash) holds per variant ``VARIANT:games``, ``:wins``, ``:best_ms``,
``:fewest``, ``:streak``, ``:best_streak`` and the day ring ``:d0`` .. ``:d29`` (each
``DAY,GAMES,WINS``): at most 36 small fields a variant, so Redis keeps it a listpack. A
guest's expires ``GUEST_KEEP_S`` after their last counted game; an account's never.
``player:WHO:counted`` (zset, code -> when) holds the last ``MARKS_KEPT`` games counted,
for ``MARKS_KEEP_S``: the per-player exactly-once marker.

Applying a finished room (node/played.py): the room joins ``rooms:played`` in the step
that finishes it (the follow-up lists of store/rooms.py); then each player's game is
counted by one script in the player's own keys (``COUNT_GAME``, O(1): a dozen hash
fields, one zset entry), which does nothing when the game is already in their
``:counted``; then what each player was told is stored once in the room's hash
(``played``, HSETNX) and sent as a ``played`` event, and the room leaves
``rooms:played``. A node dying in between leaves the room on the list: the sweeper
reruns it after ``RATING_GRACE_MS`` and the players counted already are skipped, so two
nodes finishing a room, or a sweep after the finishing node applied it, count each game
once. Every step touches one slot, so a Redis Cluster runs the same steps.
"""

from __future__ import annotations

from typing import Any

import orjson

from .base import Part
from .keys import player_key, room_key
from .scripts import CLAIM_DUE, COUNT_GAME

PLAYED_DUE = "rooms:played"
MARKS_KEPT = 64  # a player's last counted games remembered (far more than a sweep's gap)
MARKS_KEEP_S = 7 * 86400
_NAMES = ("best_ms", "fewest", "streak", "best_streak", "games", "wins")

Values = dict[str, int | None]


class PlayedStore(Part):
    def __init__(self, *args: Any) -> None:
        super().__init__(*args)
        self._count = self._script(COUNT_GAME)
        self._claim_due = self._script(CLAIM_DUE)

    def key(self, who: str) -> str:
        return player_key(who, "play", self.cluster)

    async def room(self, code: str) -> tuple[dict[str, Any], bytes | None, set[str]] | None:
        """(its state, its ``played`` field, the seats whose player had the solver's help:
        ``assisted:SEAT`` fields, store/rooms.py) of a room, or None when it is gone."""
        base = room_key(code)
        async with self.redis.pipeline(transaction=False) as pipe:
            pipe.hmget(base, "state", "played")
            pipe.hkeys(base)
            (state, told), fields = await self._timed(pipe.execute())
        if state is None:
            return None
        assisted = {
            f.decode().removeprefix("assisted:") for f in fields if f.startswith(b"assisted:")
        }
        return orjson.loads(state), told, assisted

    async def count(
        self,
        who: str,
        code: str,
        variant: str,
        game: tuple[bool, int | None, int | None],
        day: tuple[int, int],
        keep_s: int,
    ) -> tuple[bool, Values, Values]:
        """Count one game (won, time ms, moves) of UTC ``day`` (number, slot) for ``who``
        once: (counted now, the variant's values before, after)."""
        won, ms, moves = game
        args = [
            code,
            self.clock.now_ms(),
            variant,
            int(won),
            "" if ms is None else ms,
            "" if moves is None else moves,
            day[0],
            day[1],
            keep_s,
            MARKS_KEPT,
            MARKS_KEEP_S,
        ]
        keys = [self.key(who), player_key(who, "counted", self.cluster)]
        got = await self._durably(self._count, args, keys)

        def values(raw: list[Any]) -> Values:
            pairs = zip(_NAMES, raw, strict=True)
            return {n: int(x) if x not in (b"", "") else None for n, x in pairs}

        return int(got[0]) == 1, values(got[1:7]), values(got[7:13])

    async def of(self, who: str) -> dict[str, str]:
        """A player's stored fields (empty: none)."""
        got = await self._timed(self.redis.hgetall(self.key(who)))
        return {k.decode(): v.decode() for k, v in got.items()}

    async def claim_due(self, now: int, grace_ms: int, limit: int = 20) -> list[str]:
        """Rooms whose statistics are overdue (their node died before applying them)."""
        args = [PLAYED_DUE, now, grace_ms, limit]
        codes: Any = await self._timed(self._claim_due(keys=[PLAYED_DUE], args=args))
        return [c.decode() for c in codes]

    async def done(self, code: str) -> None:
        """The room is owed nothing more (gone, or not counted)."""
        await self._timed(self.redis.zrem(PLAYED_DUE, code))
