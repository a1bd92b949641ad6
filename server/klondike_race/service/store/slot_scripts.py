"""The Lua scripts of a Redis Cluster: each touches the keys of one slot only, every one
declared in KEYS. They do what their one-Redis counterparts in scripts.py do, less
what lives in another slot (docs/operations.md, "Redis Cluster"):

- no node liveness key is read: an event is published (``SPUBLISH`` on the room's own
  sharded channel ``kr:events:{CODE}``, in the room's slot) when another node is in the
  room's node set, live or not (a publication nobody hears costs little); the
  spectator count gets the live nodes from the caller;
- the follow-up lists (``rooms:analysis``, ``rooms:rating``) and a challenge attempt's
  leaderboard row are separate steps (store/rooms.py, store/moves.py).

``ROOM_KEYS``: the keys of a room an event touches, in the order ``emit`` takes them.
"""

from __future__ import annotations

from .keys import EVENTS_KEPT, room_key
from .scripts import FIELDS

ROOM_KEYS = ("", ":ver", ":events", ":nodes")


def room_keys(code: str) -> list[str]:
    """``room:{CODE}``, ``:ver``, ``:events``, ``:nodes``."""
    base = room_key(code)
    return [base + suffix for suffix in ROOM_KEYS]


def events_channel(code: str) -> str:
    """The room's sharded channel: in the room's slot, so its scripts may publish."""
    return f"kr:events:{{{code}}}"


def node_channel(node: str) -> str:
    """A node's own sharded channel: quick-match news for it."""
    return f"kr:node:{{{node}}}"


# emit(ver, events, nodes, room, body, origin): ``CODE|ORIGIN|PAYLOAD`` on the room's
# channel, as the one-Redis channel carries it
_EMIT = """
local function emit(ver, events, nodes, rid, body, origin)
  local v = redis.call('INCR', ver)
  local payload = '{"v":' .. v .. ',' .. string.sub(body, 2)
  redis.call('ZADD', events, v, payload)
  if v % 50 == 0 then
    redis.call('ZREMRANGEBYSCORE', events, '-inf', v - KEPT)
  end
  for _, n in ipairs(redis.call('SMEMBERS', nodes)) do
    if n ~= origin then
      redis.call('SPUBLISH', 'kr:events:{' .. rid .. '}', rid .. '|' .. origin .. '|' .. payload)
      break
    end
  end
  return v
end
""".replace("KEPT", str(EVENTS_KEPT))

# KEYS: per move, in the order of ARGV[2..]: room, ver, events, nodes, its player's log,
# prog, rank. ARGV: origin, then one per move as APPEND_MOVES has them (a challenge
# row's fields, if any, are ignored: the leaderboard is another slot's step).
# Returns what APPEND_MOVES returns.
APPEND_MOVES = (
    _EMIT
    + FIELDS
    + """
local origin = ARGV[1]
local out = {}
for i = 2, #ARGV do
  local f = fields(ARGV[i])
  local k = (i - 2) * 7
  local base, key = KEYS[k + 1], KEYS[k + 5]
  local len = redis.call('LLEN', key)
  if redis.call('HGET', base, 'status') == 'finished' then
    out[#out + 1] = 0
  elseif len + 1 == tonumber(f[3]) then
    redis.call('RPUSH', key, f[4])
    redis.call('HSET', KEYS[k + 6], f[2], f[5])
    redis.call('ZADD', KEYS[k + 7], f[6], f[2])
    out[#out + 1] = emit(KEYS[k + 2], KEYS[k + 3], KEYS[k + 4], f[1], f[7], origin)
  else
    out[#out + 1] = -(len + 1)
  end
end
return table.concat(out, ',')
"""
)

# KEYS: room, ver, events, nodes, prog, rank. ARGV as ROOM_CAS, its follow-up lists
# ignored (written before, by the caller). Returns what ROOM_CAS returns.
ROOM_CAS = (
    _EMIT
    + """
local rid = ARGV[1]
local cur = tonumber(redis.call('HGET', KEYS[1], 'rev') or '0')
if cur ~= tonumber(ARGV[2]) then return -1 end
redis.call('HSET', KEYS[1], 'state', ARGV[3], 'rev', cur + 1, 'status', ARGV[4])
for i = 9, #ARGV, 3 do
  redis.call('HSET', KEYS[5], ARGV[i], ARGV[i + 1])
  redis.call('ZADD', KEYS[6], ARGV[i + 2], ARGV[i])
end
if ARGV[5] ~= '' then return emit(KEYS[2], KEYS[3], KEYS[4], rid, ARGV[5], ARGV[6]) end
return 0
"""
)

# KEYS: room, ver, events, nodes, spect. ARGV: room, node, count, origin, then the live
# nodes. Returns {event version, total count of the live nodes}.
SPECTATORS = (
    _EMIT
    + """
local rid = ARGV[1]
if tonumber(ARGV[3]) > 0 then redis.call('HSET', KEYS[5], ARGV[2], ARGV[3])
else redis.call('HDEL', KEYS[5], ARGV[2]) end
local live = {}
for i = 5, #ARGV do live[ARGV[i]] = true end
local total = 0
local counts = redis.call('HGETALL', KEYS[5])
for i = 1, #counts, 2 do
  if live[counts[i]] or counts[i] == ARGV[2] then
    total = total + tonumber(counts[i + 1])
  else
    redis.call('HDEL', KEYS[5], counts[i])  -- a node that died without cleaning up
  end
end
local body = '{"type":"spectators","count":' .. total .. '}'
return {emit(KEYS[2], KEYS[3], KEYS[4], rid, body, ARGV[4]), total}
"""
)

# KEYS: room, ver, events, nodes. ARGV as ANALYSIS; returns what it returns.
ANALYSIS = (
    _EMIT
    + """
local rid = ARGV[1]
if redis.call('EXISTS', KEYS[1]) == 0 then return 0 end
if redis.call('HSETNX', KEYS[1], 'analysis', ARGV[2]) == 0 then return 0 end
return emit(KEYS[2], KEYS[3], KEYS[4], rid, '{"type":"analysis","analysis":' .. ARGV[2] .. '}',
            ARGV[3])
"""
)

# KEYS: a leaderboard's board, rows, ver, out. ARGV: then per row: player key, score,
# row JSON, in the order the moves were stored (the last one stays). The rows of an
# attempt's moves, in the board's slot, after the moves were stored in the room's.
BOARD_ROWS = """
for i = 1, #ARGV, 3 do
  if redis.call('SISMEMBER', KEYS[4], ARGV[i]) == 0 then
    redis.call('ZADD', KEYS[1], ARGV[i + 1], ARGV[i])
    redis.call('HSET', KEYS[2], ARGV[i], ARGV[i + 2])
    redis.call('INCR', KEYS[3])
  end
end
return 1
"""

# KEYS: a player's stats, races, and applied races (zset code -> when). ARGV: room code,
# variant, the stats the outcome was computed from ('' for none), new stats, history
# entry, now (ms), keep (s, guests; 0: for ever), races kept. One player's share of a
# race's ratings, once: 1 applied (or applied before), -1 when the stored stats are no
# longer those it was computed from (another race was applied in between).
APPLY_PLAYER = """
if redis.call('ZSCORE', KEYS[3], ARGV[1]) then return 1 end
if (redis.call('HGET', KEYS[1], ARGV[2]) or '') ~= ARGV[3] then return -1 end
redis.call('HSET', KEYS[1], ARGV[2], ARGV[4])
redis.call('LPUSH', KEYS[2], ARGV[5])
redis.call('LTRIM', KEYS[2], 0, tonumber(ARGV[8]) - 1)
redis.call('ZADD', KEYS[3], ARGV[6], ARGV[1])
redis.call('ZREMRANGEBYRANK', KEYS[3], 0, -201)
if tonumber(ARGV[7]) > 0 then
  for i = 1, 3 do redis.call('EXPIRE', KEYS[i], ARGV[7]) end
end
return 1
"""
