"""Arena tournaments in Redis (docs/rules.md, "Arena tournaments"; the rules are
domain/arena.py's): an arena's definition, its players, their standings, the table, who
is waiting to be paired, and the races already counted.

Every key of one arena shares the slot of its id (``arena:{ID}:...``), so each step is
one script on one Redis and on a Redis Cluster alike:

==========================  ======  ===================================================
``arena:{ID}``              string  the arena (``Arena.to_dict`` JSON), set once
``arena:{ID}:players``      hash    player key -> JSON ``{name, guest, paused, race,
                                    last, node, session}``: ``race`` the code of the race
                                    they are in (null between races), ``last`` the players
                                    of their last race (the pairing avoids them), ``node``
                                    the node of their connection and ``session`` its
                                    account session (their seats are given under it)
``arena:{ID}:standings``    hash    player key -> their ``Standing`` as JSON
``arena:{ID}:table``        zset    player key -> ``table_key`` of their standing,
                                    smaller is better
``arena:{ID}:ver``          string  bumped by every change of a player's row: joined,
                                    paused, into a race, a race counted
``arena:{ID}:waiting``      zset    player key -> since when (epoch ms) they wait to be
                                    paired: joined, not paused, not in a race
``arena:{ID}:counted``      set     the codes of the races already counted
``arena:{ID}:running``      string  how many of its races are being played (made, not
                                    counted yet)
``arena:{ID}:pairing``      string  the node pairing the arena now (a lock, ms TTL)
``rooms:arena``             zset    race code -> when (epoch ms) a finished arena race is
                                    due to the sweeper (its node died before counting it)
``arenas:made``             zset    a player's public arena -> when (epoch ms) it ends
                                    (the list of players' arenas until then)
==========================  ======  ===================================================

An arena's keys expire when its definition does (``KR_KEEP_DAILY_S`` after its end: each
script sets the others' expiry to the definition's). A standing is written only when a
race is counted, once per race (``counted``), and a player is in one race at a time, so
computing it outside Redis from the stored one cannot lose a write; the player's entry
(paused, in a race) is changed inside the scripts.
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from dataclasses import asdict, dataclass
from typing import Any

import orjson

from ..domain.arena import Arena, Standing, table_key
from .base import Part
from .scripts import CLAIM_DUE

ARENA_DUE = "rooms:arena"  # race code -> when (epoch ms) its count is due to the sweeper
MADE = "arenas:made"  # a player's public arena -> when (epoch ms) it ends


def arena_key(arena: str, part: str = "") -> str:
    return f"arena:{{{arena}}}{':' + part if part else ''}"


def keys_of(arena: str) -> list[str]:
    """The keys every arena script takes, in this order (KEYS[1] to KEYS[7]), and the
    definition last (KEYS[8]: its expiry is theirs)."""
    parts = ("players", "standings", "table", "ver", "waiting", "counted", "running")
    return [arena_key(arena, p) for p in parts] + [arena_key(arena)]


# each arena script ends with it: the arena's keys expire with its definition (PTTL, not
# PEXPIRETIME: Redis 6.2, the embedded one, has no PEXPIRETIME)
_KEEP = """
local ttl = redis.call('PTTL', KEYS[8])
if ttl > 0 then
  for i = 1, 7 do redis.call('PEXPIRE', KEYS[i], ttl) end
end
"""


def standing_json(standing: Standing) -> bytes:
    return orjson.dumps(asdict(standing))


def standing_of(data: bytes | str | None) -> Standing:
    if data is None:
        return Standing()
    got = orjson.loads(data)
    got["history"] = tuple(got.get("history", ()))
    return Standing(**got)


@dataclass(frozen=True, slots=True)
class Entrant:
    """A player of an arena, as stored: their entry and their standing."""

    who: str
    name: str
    guest: bool
    paused: bool
    race: str | None  # the race they are in now
    last: tuple[str, ...]  # the players of their last race
    node: str  # the node of their connection
    session: str | None  # its account session (None: a guest's)
    standing: Standing
    waiting_since: int | None  # when they started waiting to be paired (None: not waiting)


# KEYS: keys_of(arena). ARGV: who, the entry JSON for a new player, the new standing's
# JSON and table key, now (ms), the name, the node, the session ('' for none). A new
# player is added with the standing; a paused one plays on; either waits to be paired
# unless in a race, from the node and session given (the row shows it: the table's
# version goes up). Returns 1 when new, 0 else.
JOIN = (
    """
local entry = redis.call('HGET', KEYS[1], ARGV[1])
local new = 0
if not entry then
  redis.call('HSET', KEYS[1], ARGV[1], ARGV[2])
  redis.call('HSET', KEYS[2], ARGV[1], ARGV[3])
  redis.call('ZADD', KEYS[3], ARGV[4], ARGV[1])
  entry = ARGV[2]
  new = 1
end
redis.call('INCR', KEYS[4])
local e = cjson.decode(entry)
e['paused'] = false
e['name'] = ARGV[6]
e['node'] = ARGV[7]
e['session'] = ARGV[8]
redis.call('HSET', KEYS[1], ARGV[1], cjson.encode(e))
if e['race'] == nil or e['race'] == cjson.null then
  redis.call('ZADD', KEYS[5], 'NX', ARGV[5], ARGV[1])
end
"""
    + _KEEP
    + """
return new
"""
)

# KEYS: keys_of(arena). ARGV: who. The player is paired no more (their points stay; the
# row shows it paused): 1, or 0 when they are not in the arena.
PAUSE = """
local entry = redis.call('HGET', KEYS[1], ARGV[1])
if not entry then return 0 end
local e = cjson.decode(entry)
if not e['paused'] then redis.call('INCR', KEYS[4]) end
e['paused'] = true
redis.call('HSET', KEYS[1], ARGV[1], cjson.encode(e))
redis.call('ZREM', KEYS[5], ARGV[1])
return 1
"""

# KEYS: keys_of(arena). ARGV: the race code, then its players. The race takes them out
# of the waiting list, all or none (their rows show the race): 1, or 0 when one of them
# no longer waits (paused, gone, paired elsewhere meanwhile).
TAKE = (
    """
for i = 2, #ARGV do
  if not redis.call('ZSCORE', KEYS[5], ARGV[i]) then return 0 end
end
for i = 2, #ARGV do
  redis.call('ZREM', KEYS[5], ARGV[i])
  local e = cjson.decode(redis.call('HGET', KEYS[1], ARGV[i]))
  e['race'] = ARGV[1]
  redis.call('HSET', KEYS[1], ARGV[i], cjson.encode(e))
end
redis.call('INCR', KEYS[7])
redis.call('INCR', KEYS[4])
"""
    + _KEEP
    + """
return 1
"""
)

# KEYS: keys_of(arena). ARGV: the race code, now (ms), then per player: who, the new
# standing's JSON, its table key, the players of the race JSON. Counts a finished race
# once: each player's standing and table place, out of the race, back to waiting unless
# paused. 1 when counted here, 0 when it was already.
COUNT = (
    """
if redis.call('SADD', KEYS[6], ARGV[1]) == 0 then return 0 end
if tonumber(redis.call('GET', KEYS[7]) or '0') > 0 then redis.call('DECR', KEYS[7]) end
for i = 3, #ARGV, 4 do
  local who = ARGV[i]
  redis.call('HSET', KEYS[2], who, ARGV[i + 1])
  redis.call('ZADD', KEYS[3], ARGV[i + 2], who)
  local entry = redis.call('HGET', KEYS[1], who)
  if entry then
    local e = cjson.decode(entry)
    if e['race'] == ARGV[1] then e['race'] = cjson.null end
    e['last'] = cjson.decode(ARGV[i + 3])
    redis.call('HSET', KEYS[1], who, cjson.encode(e))
    if not e['paused'] and (e['race'] == nil or e['race'] == cjson.null) then
      redis.call('ZADD', KEYS[5], 'NX', ARGV[2], who)
    end
  end
end
redis.call('INCR', KEYS[4])
"""
    + _KEEP
    + """
return 1
"""
)


# KEYS: the lock. ARGV: the node. The lock goes only if that node holds it.
UNLOCK = """
if redis.call('GET', KEYS[1]) == ARGV[1] then redis.call('DEL', KEYS[1]) end
return 0
"""


class Arenas(Part):
    def __init__(self, *args: Any) -> None:
        super().__init__(*args)
        self._join = self._script(JOIN)
        self._pause = self._script(PAUSE)
        self._take = self._script(TAKE)
        self._count = self._script(COUNT)
        self._claim_due = self._script(CLAIM_DUE)
        self._unlock = self._script(UNLOCK)

    async def define(self, arena: Arena, keep_until: int | None = None) -> Arena:
        """The arena as stored: ``arena`` when it is the first definition of its id, else
        the one stored first (an id is defined once). Its keys expire at ``keep_until``
        (epoch ms; None: kept)."""
        key = arena_key(arena.id)
        async with self.redis.pipeline(transaction=False) as pipe:
            pipe.set(key, orjson.dumps(arena.to_dict()), nx=True, pxat=keep_until)
            pipe.get(key)
            _, got = await self._replicated(pipe)
        return Arena.from_dict(orjson.loads(got))

    async def load(self, arena: str) -> Arena | None:
        got: Any = await self._timed(self.redis.get(arena_key(arena)))
        return None if got is None else Arena.from_dict(orjson.loads(got))

    async def join(
        self,
        arena: str,
        who: str,
        name: str,
        guest: bool,
        now: int,
        node: str = "",
        session: str | None = None,
    ) -> bool:
        """``who`` is in the arena and waits to be paired (a paused player plays on; one
        in a race waits once it is counted), connected to ``node`` under the account
        ``session``: True when they joined just now."""
        entry = orjson.dumps({"name": name, "guest": guest, "paused": False, "race": None})
        start = Standing()
        args = [who, entry, standing_json(start), table_key(start), now, name, node, session or ""]
        keys = keys_of(arena)
        return bool(await self._durably(self._join, args, keys))

    async def pause(self, arena: str, who: str) -> bool:
        """``who`` is paired no more until they join again (their points stay): False
        when they are not in the arena."""
        return bool(await self._durably(self._pause, [who], keys_of(arena)))

    async def take(self, arena: str, race: str, players: Sequence[str]) -> bool:
        """The race ``race`` takes ``players`` out of the waiting list, all or none: False
        when one of them no longer waits."""
        return bool(await self._durably(self._take, [race, *players], keys_of(arena)))

    async def count(
        self, arena: str, race: str, now: int, standings: Mapping[str, Standing]
    ) -> bool:
        """Count the finished race ``race`` once: each player's new standing and table
        place, and each back to waiting unless paused. False when it was counted
        already (by this node or another)."""
        players = list(standings)
        args: list[Any] = [race, now]
        for who, standing in standings.items():
            others = [p for p in players if p != who]
            args += [who, standing_json(standing), table_key(standing), orjson.dumps(others)]
        return bool(await self._durably(self._count, args, keys_of(arena)))

    async def entrants(self, arena: str, players: Sequence[str] | None = None) -> list[Entrant]:
        """The arena's players (or ``players`` of them), as stored."""
        if players is not None and not players:
            return []  # (HMGET takes one field at least)
        keys = keys_of(arena)
        async with self.redis.pipeline(transaction=False) as pipe:
            if players is None:
                pipe.hgetall(keys[0])
                pipe.hgetall(keys[1])
                pipe.zrange(keys[4], 0, -1, withscores=True)
            else:  # (only theirs: the whole waiting list costs as much as all the players)
                pipe.hmget(keys[0], list(players))
                pipe.hmget(keys[1], list(players))
                pipe.zmscore(keys[4], list(players))
            got_entries, got_standings, waiting = await self._timed(pipe.execute())
        if players is None:
            entries = {_text(w): e for w, e in got_entries.items()}
            standings = {_text(w): s for w, s in got_standings.items()}
            since = {_text(w): int(s) for w, s in waiting}
        else:
            entries = {p: e for p, e in zip(players, got_entries, strict=True) if e is not None}
            standings = dict(zip(players, got_standings, strict=True))
            since = {p: int(s) for p, s in zip(players, waiting, strict=True) if s is not None}
        out = []
        for who, raw in sorted(entries.items()):
            e = orjson.loads(raw)
            out.append(
                Entrant(
                    who,
                    e["name"],
                    bool(e["guest"]),
                    bool(e["paused"]),
                    e.get("race"),
                    tuple(e.get("last") or ()),  # (an empty list comes back as {})
                    str(e.get("node") or ""),
                    e.get("session") or None,
                    standing_of(standings.get(who)),
                    since.get(who),
                )
            )
        return out

    async def list_public(self, arena: Arena) -> None:
        """A player's public arena is listed until it ends (``arenas:made``)."""
        await self._timed(self.redis.zadd(MADE, {arena.id: arena.ends}))

    async def public_made(self, since: int, until: int) -> list[Arena]:
        """Players' public arenas running at some moment from ``since`` to ``until``
        (ended ones leave the list)."""
        await self._timed(self.redis.zremrangebyscore(MADE, "-inf", since))
        ids = await self._timed(self.redis.zrange(MADE, 0, -1))
        found = [await self.load(_text(i)) for i in ids]
        return sorted(
            (a for a in found if a is not None and a.starts <= until), key=lambda a: a.starts
        )

    async def running(self, arena: str) -> int:
        """How many of the arena's races are being played (made and not counted yet)."""
        return int(await self._timed(self.redis.get(arena_key(arena, "running"))) or 0)

    async def players(self, arena: str) -> int:
        """How many players have joined the arena."""
        return int(await self._timed(self.redis.hlen(arena_key(arena, "players"))))

    async def lock(self, arena: str, node: str, ms: int) -> bool:
        """Whether ``node`` may pair the arena now: one node at a time, for ``ms`` (the
        lock lapses should that node die)."""
        key = arena_key(arena, "pairing")
        return bool(await self._timed(self.redis.set(key, node, nx=True, px=ms)))

    async def unlock(self, arena: str, node: str) -> None:
        """``node`` is done pairing the arena: another may (or it again) at once."""
        await self._timed(self._unlock(keys=[arena_key(arena, "pairing")], args=[node]))

    async def counted_due(self, race: str) -> None:
        """The race ``race`` is counted: the sweeper need not count it (``rooms:arena``)."""
        await self._timed(self.redis.zrem(ARENA_DUE, race))

    async def claim_due(self, now: int, grace_ms: int, limit: int = 20) -> list[str]:
        """Finished arena races not counted in time (their node died first); each is due
        again ``grace_ms`` later unless counted by then."""
        args = [ARENA_DUE, now, grace_ms, limit]
        codes: Any = await self._timed(self._claim_due(keys=[ARENA_DUE], args=args))
        return [c.decode() for c in codes]

    async def waiting(self, arena: str) -> dict[str, int]:
        """Who waits to be paired, and since when (epoch ms)."""
        got = await self._timed(
            self.redis.zrange(arena_key(arena, "waiting"), 0, -1, withscores=True)
        )
        return {_text(w): int(s) for w, s in got}

    async def version(self, arena: str) -> int:
        """The table's version (bumped by every change of it)."""
        return int(await self._timed(self.redis.get(arena_key(arena, "ver"))) or 0)

    async def table(self, arena: str, top: int | None) -> tuple[int, list[tuple[str, int]]]:
        """The table's version and its first ``top`` players (None: every one) with their
        table keys, best first (equal keys listed by player key)."""
        async with self.redis.pipeline(transaction=False) as pipe:
            pipe.get(arena_key(arena, "ver"))
            last = -1 if top is None else top - 1
            pipe.zrange(arena_key(arena, "table"), 0, last, withscores=True)
            ver, rows = await self._timed(pipe.execute())
        return int(ver or 0), [(_text(w), int(s)) for w, s in rows]


def _text(value: bytes | str) -> str:
    return value.decode() if isinstance(value, bytes) else value
