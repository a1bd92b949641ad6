"""An arena's pool of certified deals in Redis (node/arena_deals.py fills it; docs/rules.md,
"Arena tournaments", "Deals"): seeds the solver proved winnable, each taken by one race.

``arena:{ID}:deals`` (a list of seeds, oldest first) shares the slot of the arena's other
keys (store/arenas.py lists it) and expires with its definition ``arena:{ID}``. A seed in
it is secret: it leaves Redis only as a race's deal, which its room keeps secret until
the race's end (docs/rules.md, "Commitment").
"""

from __future__ import annotations

from typing import Any

from .arenas import arena_key
from .base import Part


def deals_key(arena: str) -> str:
    return arena_key(arena, "deals")


# KEYS: the arena's pool, its definition. ARGV: the most seeds the pool holds, then the
# seeds. Adds the seeds that fit (none to an arena not stored: its definition sets the
# expiry); the pool expires with the definition. Returns the pool's length, or -1 when
# the arena is not stored.
ADD = """
local ttl = redis.call('PTTL', KEYS[2])
if ttl == -2 then return -1 end
local room = tonumber(ARGV[1]) - redis.call('LLEN', KEYS[1])
for i = 2, #ARGV do
  if room <= 0 then break end
  redis.call('RPUSH', KEYS[1], ARGV[i])
  room = room - 1
end
if ttl > 0 then redis.call('PEXPIRE', KEYS[1], ttl) end
return redis.call('LLEN', KEYS[1])
"""


class ArenaDeals(Part):
    def __init__(self, *args: Any) -> None:
        super().__init__(*args)
        self._add = self._script(ADD)

    async def add(self, arena: str, seeds: list[str], most: int) -> int:
        """Pool ``seeds`` for ``arena``'s races while it holds fewer than ``most``: its
        length after, or -1 when the arena is not stored (nothing added)."""
        keys = [deals_key(arena), arena_key(arena)]
        return int(await self._timed(self._add(keys=keys, args=[most, *seeds])))

    async def take(self, arena: str) -> str | None:
        """The oldest pooled seed, taken out (one ``LPOP``: every seed goes to one caller,
        whichever node asks), or None when the pool is empty."""
        got: Any = await self._timed(self.redis.lpop(deals_key(arena)))
        return got.decode() if isinstance(got, bytes) else got

    async def size(self, arena: str) -> int:
        return int(await self._timed(self.redis.llen(deals_key(arena))))
