"""Arena tournaments in Redis (docs/rules.md, "Arena tournaments"; the rules are
domain/arena.py's): an arena's definition, its players, their standings, the table, who
is waiting to be paired, the races already counted, the arena made final once, and each
player's line of the arenas they played (their profile's).

Every key of one arena shares the slot of its id (``arena:{ID}:...``), so each step is
one script on one Redis and on a Redis Cluster alike:

==========================  ======  ===================================================
``arena:{ID}``              string  the arena (``Arena.to_dict`` JSON), set once
``arena:{ID}:players``      hash    player key -> JSON ``{name, guest, paused, race,
                                    rating, last, node, session, address, flags}``:
                                    ``address`` their last join's client address
                                    (keyed: pairing keeps one address apart), ``race`` the
                                    code of the race they are in (null between races),
                                    ``rating`` theirs as that race started, ``last``
                                    the players of their last race (the pairing avoids
                                    them), ``node`` the node of their connection and
                                    ``session`` its account session (their seats are
                                    given under it), ``flags`` the fair-play flags of
                                    their row (``address``, ``speed``)
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
``arena:{ID}:addr``         hash    a client address's keyed hash -> how many players
                                    joined the arena from it
``arena:{ID}:races``        list    each counted race's JSON ``{code, at, players}``
                                    (``players``: ``{player, name, place, points}`` by
                                    place), oldest first
``arena:{ID}:final``        string  when (epoch ms) the arena was made final: over, its
                                    last race counted (set once)
``arena:{ID}:pairing``      string  the node pairing the arena now (a lock, ms TTL)
``arena:{ID}:deals``        list    seeds the solver proved winnable, waiting for a
                                    race each, oldest first (secret: store/arena_deals.py)
``rooms:arena``             zset    race code -> when (epoch ms) a finished arena race is
                                    due to the sweeper (its node died before counting it)
``arenas:made``             zset    a player's public arena -> when (epoch ms) it ends
                                    (the list of players' arenas until then)
``arenas:ending``           zset    an arena someone joined -> when (epoch ms) it is due
                                    to be made final (its end; again a grace later while
                                    races run); it leaves once its players' lines are
                                    written
``arenas:final``            zset    a public arena made final -> when (epoch ms): the
                                    recent results (``?final=1``), the last 1,000
``player:WHO:arenas``       list    the player's line of each final arena they raced
                                    in (JSON ``{arena, title, starts, rank, players,
                                    points, races, wins}``), newest start first, the last
                                    50; ``player:{WHO}:arenas`` on a cluster (the player's
                                    slot); a guest's expires 180 days after the last
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
from .keys import player_key
from .scripts import CLAIM_DUE

ARENA_DUE = "rooms:arena"  # race code -> when (epoch ms) its count is due to the sweeper
MADE = "arenas:made"  # a player's public arena -> when (epoch ms) it ends
ENDING = "arenas:ending"  # an arena someone joined -> when it is due to be made final
FINALS = "arenas:final"  # a public arena made final -> when
FINALS_KEPT = 1000  # the recent results listed
LINES_KEPT = 50  # a player's arena lines (as their profile's races: RACES_KEPT)


def arena_key(arena: str, part: str = "") -> str:
    return f"arena:{{{arena}}}{':' + part if part else ''}"


PARTS = (
    "players",
    "standings",
    "table",
    "ver",
    "waiting",
    "counted",
    "running",
    "addr",
    "races",
    "final",
)


def keys_of(arena: str) -> list[str]:
    """The keys every arena script takes, in ``PARTS``' order (KEYS[1] to KEYS[10]), and
    the definition last (KEYS[11]: its expiry is theirs)."""
    return [arena_key(arena, p) for p in PARTS] + [arena_key(arena)]


# each arena script ends with it: the arena's keys expire with its definition (PTTL, not
# PEXPIRETIME: Redis 6.2, the embedded one, has no PEXPIRETIME)
_KEEP = """
local ttl = redis.call('PTTL', KEYS[#KEYS])
if ttl > 0 then
  for i = 1, #KEYS - 1 do redis.call('PEXPIRE', KEYS[i], ttl) end
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
    flags: tuple[str, ...] = ()  # fair play (domain/challenge.py's ADDRESS, SPEED)
    rating: int | None = None  # their rating as their race (``race``) started
    address: str = ""  # their connection's client address at their last join, keyed


# KEYS: keys_of(arena). ARGV: who, the entry JSON for a new player, the new standing's
# JSON and table key, now (ms), the name, the node, the session ('' for none), the
# client address's keyed hash ('' for none) and how many players may join from one.
# A new player is added with the standing, counted at the address (flagged ``address``
# when another joined from it first; refused when ``limit`` did); a paused one plays
# on; either waits to be paired unless in a race, from the node, session and address
# given (the row shows it: the table's version goes up). Returns 1 when new, 0 when they had joined
# before, minus the players joined from the address when it is full (nothing changed).
JOIN = (
    """
local entry = redis.call('HGET', KEYS[1], ARGV[1])
local new = 0
if not entry then
  local flags = {}
  if ARGV[9] ~= '' then
    local n = tonumber(redis.call('HGET', KEYS[8], ARGV[9]) or '0')
    if n >= tonumber(ARGV[10]) then return -n end
    if redis.call('HINCRBY', KEYS[8], ARGV[9], 1) > 1 then flags = {'address'} end
  end
  local fresh = cjson.decode(ARGV[2])
  fresh['flags'] = flags
  ARGV[2] = cjson.encode(fresh)
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
e['address'] = ARGV[9]
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

# KEYS: keys_of(arena). ARGV: the race code, then per player: who, their rating now. The
# race takes them out of the waiting list, all or none (their rows show the race, their
# entries keep the rating for its count): 1, or 0 when one of them no longer waits
# (paused, gone, paired elsewhere meanwhile).
TAKE = (
    """
for i = 2, #ARGV, 2 do
  if not redis.call('ZSCORE', KEYS[5], ARGV[i]) then return 0 end
end
for i = 2, #ARGV, 2 do
  redis.call('ZREM', KEYS[5], ARGV[i])
  local e = cjson.decode(redis.call('HGET', KEYS[1], ARGV[i]))
  e['race'] = ARGV[1]
  e['rating'] = tonumber(ARGV[i + 1])
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

# KEYS: keys_of(arena). ARGV: the race code, now (ms), the race's JSON for the races
# list, then per player: who, the new standing's JSON, its table key, the players of
# the race JSON, a flag the race gives their row ('' for none). Counts a finished race
# once: listed, each player's standing and table place, out of the race, flagged, back
# to waiting unless paused. 1 when counted here, 0 when it was already.
COUNT = (
    """
if redis.call('SADD', KEYS[6], ARGV[1]) == 0 then return 0 end
if tonumber(redis.call('GET', KEYS[7]) or '0') > 0 then redis.call('DECR', KEYS[7]) end
redis.call('RPUSH', KEYS[9], ARGV[3])
for i = 4, #ARGV, 5 do
  local who = ARGV[i]
  redis.call('HSET', KEYS[2], who, ARGV[i + 1])
  redis.call('ZADD', KEYS[3], ARGV[i + 2], who)
  local entry = redis.call('HGET', KEYS[1], who)
  if entry then
    local e = cjson.decode(entry)
    if e['race'] == ARGV[1] then e['race'] = cjson.null end
    e['last'] = cjson.decode(ARGV[i + 3])
    local flag = ARGV[i + 4]
    if flag ~= '' then
      local flags = type(e['flags']) == 'table' and e['flags'] or {}
      local has = false
      for _, f in ipairs(flags) do has = has or f == flag end
      if not has then table.insert(flags, flag) end
      e['flags'] = flags
    end
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

# KEYS: keys_of(arena). ARGV: now (ms), the arena being over. The arena is final once no
# race of it is running: ``final`` set (once). 1 when set here, 2 when it was set
# before, 0 while a race runs.
SEAL = (
    """
if redis.call('EXISTS', KEYS[10]) == 1 then return 2 end
if tonumber(redis.call('GET', KEYS[7]) or '0') > 0 then return 0 end
redis.call('SET', KEYS[10], ARGV[1])
"""
    + _KEEP
    + """
return 1
"""
)

# KEYS: a player's arena lines. ARGV: the needle naming the arena in a line, the line,
# its arena's start, the lines kept, the seconds it is kept (0: for ever). Added once (a
# line of that arena there already: nothing), in order of start, newest first. 1 when
# added, 0 when it was there.
ADD_LINE = """
local lines = redis.call('LRANGE', KEYS[1], 0, -1)
for _, line in ipairs(lines) do
  if string.find(line, ARGV[1], 1, true) then return 0 end
end
local starts = tonumber(ARGV[3])
local pivot = nil
for _, line in ipairs(lines) do
  if tonumber(cjson.decode(line)['starts']) < starts then pivot = line break end
end
if pivot then
  redis.call('LINSERT', KEYS[1], 'BEFORE', pivot, ARGV[2])
else
  redis.call('RPUSH', KEYS[1], ARGV[2])
end
redis.call('LTRIM', KEYS[1], 0, tonumber(ARGV[4]) - 1)
if tonumber(ARGV[5]) > 0 then redis.call('EXPIRE', KEYS[1], ARGV[5]) end
return 1
"""

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
        self._seal = self._script(SEAL)
        self._add_line = self._script(ADD_LINE)

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
        address: str = "",
        limit: int = 0,
    ) -> int:
        """``who`` is in the arena and waits to be paired (a paused player plays on; one
        in a race waits once it is counted), connected to ``node`` under the account
        ``session``: 1 when they joined just now, 0 when they had before. A player's
        first join is counted at the client ``address`` (a keyed hash; '': not counted):
        flagged ``address`` when another player joined from it first, refused when
        ``limit`` had (minus that many: nothing changed)."""
        entry = orjson.dumps({"name": name, "guest": guest, "paused": False, "race": None})
        start = Standing()
        args = [who, entry, standing_json(start), table_key(start), now, name, node]
        args += [session or "", address, limit]
        keys = keys_of(arena)
        return int(await self._durably(self._join, args, keys))

    async def pause(self, arena: str, who: str) -> bool:
        """``who`` is paired no more until they join again (their points stay): False
        when they are not in the arena."""
        return bool(await self._durably(self._pause, [who], keys_of(arena)))

    async def take(self, arena: str, race: str, players: Mapping[str, int]) -> bool:
        """The race ``race`` takes ``players`` (each with their rating as it starts, kept
        for the count: ``Entrant.rating``) out of the waiting list, all or none: False
        when one of them no longer waits."""
        args: list[Any] = [race]
        for who, rating in players.items():
            args += [who, rating]
        return bool(await self._durably(self._take, args, keys_of(arena)))

    async def count(
        self,
        arena: str,
        race: str,
        now: int,
        standings: Mapping[str, Standing],
        listed: Mapping[str, Any] | None = None,
        flags: Mapping[str, str] | None = None,
    ) -> bool:
        """Count the finished race ``race`` once: ``listed`` (its JSON) on the arena's
        races, each player's new standing and table place, their row's flag (``flags``:
        player -> ``speed``), and each back to waiting unless paused. False when it was
        counted already (by this node or another)."""
        players = list(standings)
        args: list[Any] = [race, now, orjson.dumps(listed or {"code": race, "at": now})]
        for who, standing in standings.items():
            others = [p for p in players if p != who]
            args += [who, standing_json(standing), table_key(standing), orjson.dumps(others)]
            args.append((flags or {}).get(who, ""))
        return bool(await self._durably(self._count, args, keys_of(arena)))

    async def seal(self, arena: str, now: int) -> int:
        """The arena (over: the caller knows) is final once none of its races runs: 1
        when made final now, 2 when it was before, 0 while a race runs."""
        return int(await self._durably(self._seal, [now], keys_of(arena)))

    async def races(self, arena: str, limit: int) -> tuple[int, list[dict[str, Any]]]:
        """How many races the arena has counted, and the last ``limit``, newest first."""
        key = arena_key(arena, "races")
        async with self.redis.pipeline(transaction=False) as pipe:
            pipe.llen(key)
            pipe.lrange(key, -limit, -1)
            total, raw = await self._timed(pipe.execute())
        return int(total), [orjson.loads(r) for r in reversed(raw)]

    async def ending(self, arena: Arena) -> None:
        """Someone joined ``arena``: it is due to be made final at its end (``arenas:ending``)."""
        await self._timed(self.redis.zadd(ENDING, {arena.id: arena.ends}, nx=True))

    async def claim_ending(self, now: int, grace_ms: int, limit: int = 20) -> list[str]:
        """Arenas due to be made final by now; each is due again ``grace_ms`` later
        unless ``ended`` takes it off by then."""
        args = [ENDING, now, grace_ms, limit]
        ids: Any = await self._timed(self._claim_due(keys=[ENDING], args=args))
        return [_text(i) for i in ids]

    async def ended(self, arena: str, listed_at: int | None) -> None:
        """The arena is final and its players' lines are written: off ``arenas:ending``,
        and (``listed_at``: when it was made final; None: private, unlisted) among the
        recent results, the last ``FINALS_KEPT``."""
        async with self.redis.pipeline(transaction=False) as pipe:
            pipe.zrem(ENDING, arena)
            if listed_at is not None:
                pipe.zadd(FINALS, {arena: listed_at})
                pipe.zremrangebyrank(FINALS, 0, -FINALS_KEPT - 1)
            await self._timed(pipe.execute())

    async def recent_finals(self, since: int, limit: int) -> list[str]:
        """The public arenas made final since ``since`` (older ones' keys expired), the
        newest first, at most ``limit``."""
        await self._timed(self.redis.zremrangebyscore(FINALS, "-inf", f"({since}"))
        ids: Any = await self._timed(self.redis.zrevrange(FINALS, 0, limit - 1))
        return [_text(i) for i in ids]

    async def final_at(self, arena: str) -> int | None:
        """When the arena was made final, or None."""
        got = await self._timed(self.redis.get(arena_key(arena, "final")))
        return None if got is None else int(got)

    # ---- a player's arenas (their profile) -----------------------------------------------
    def lines_key(self, who: str) -> str:
        return player_key(who, "arenas", self.cluster)

    async def add_line(self, who: str, line: Mapping[str, Any], keep_s: int | None) -> bool:
        """A final arena's line on ``who``'s profile, once (another node writing the
        same arena's line: nothing), the last ``LINES_KEPT`` by start kept for
        ``keep_s`` seconds (None: for ever). True when added here."""
        needle = orjson.dumps({"arena": line["arena"]})[1:-1]  # '"arena":"ID"'
        data = orjson.dumps({"arena": line["arena"], **line})
        args = [needle, data, line["starts"], LINES_KEPT, keep_s or 0]
        return bool(await self._durably(self._add_line, args, [self.lines_key(who)]))

    async def lines_of(self, who: str) -> list[dict[str, Any]]:
        """``who``'s arena lines, newest start first."""
        raw: Any = await self._timed(self.redis.lrange(self.lines_key(who), 0, LINES_KEPT - 1))
        return [orjson.loads(r) for r in raw]

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
                    tuple(e.get("flags") or ()),  # (an empty list comes back as {})
                    e.get("rating") if e.get("race") else None,
                    str(e.get("address") or ""),
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
