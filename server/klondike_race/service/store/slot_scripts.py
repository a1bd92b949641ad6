"""The Lua scripts of a Redis Cluster: each touches the keys of one slot only, every one
declared in KEYS. The room scripts are the text of their one-Redis counterparts in
scripts.py with ``CLUSTER``'s fragments in the places where the two differ
(``scripts.Variant``), less what lives in another slot (docs/operations.md, "Redis
Cluster"):

- a room's keys are read from KEYS, not named from its code;
- no node liveness key is read: an event is published (``SPUBLISH`` on the room's own
  sharded channel ``kr:events:{CODE}``, in the room's slot) when another node is in the
  room's node set, live or not (a publication nobody hears costs little); the
  spectator count gets the live nodes from the caller;
- the follow-up lists (``rooms:analysis``, ``rooms:rating``) and a challenge attempt's
  leaderboard row are separate steps (store/rooms.py, store/moves.py).

``ROOM_KEYS``: the keys of a room an event touches, in the order ``emit`` takes them.
"""

from __future__ import annotations

from .keys import room_key
from .scripts import PUT_ROW, Variant, room_scripts

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


# A cluster's room scripts, declared keys per script in KEYS: APPEND_MOVES, per move in
# the order of ARGV[2..]: room, ver, events, nodes, its player's log, prog, rank (a
# challenge row's fields, if any, are ignored: the leaderboard is another slot's step,
# BOARD_ROWS); ROOM_CAS: room, ver, events, nodes, prog, rank (the follow-up lists are
# ignored: written before, by the caller), and the player's log whose emptiness it
# checks, if any; SPECTATORS: room, ver, events, nodes, spect,
# and after its ARGV the live nodes; ANALYSIS: room, ver, events, nodes. Each returns
# what its one-Redis counterpart returns. An event is ``CODE|ORIGIN|PAYLOAD`` on the
# room's channel, as the one-Redis channel carries it.
CLUSTER = Variant(
    room_key="""
local function room_key(room, at, n, suffix)
  return KEYS[at + n]
end
""",
    publish="""
local function publish(nodes, rid, origin, message)
  for _, n in ipairs(redis.call('SMEMBERS', nodes)) do
    if n ~= origin then
      redis.call('SPUBLISH', 'kr:events:{' .. rid .. '}', message)
      return
    end
  end
end
""",
    live="""
local live_nodes = {}
for i = 5, #ARGV do live_nodes[ARGV[i]] = true end
local function live(node)
  return live_nodes[node] == true
end
""",
    board_row="",
    follow_ups="",
)

APPEND_MOVES, ROOM_CAS, SPECTATORS, ANALYSIS = room_scripts(CLUSTER)

# KEYS: a leaderboard's board, rows, ver, out. ARGV: then per row: player key, score,
# row JSON, in the order the moves were stored (the last one stays). The rows of an
# attempt's moves, in the board's slot, after the moves were stored in the room's.
BOARD_ROWS = (
    PUT_ROW
    + """
for i = 1, #ARGV, 3 do
  put_row(KEYS[1], KEYS[2], KEYS[3], KEYS[4], ARGV[i], ARGV[i + 1], ARGV[i + 2])
end
return 1
"""
)

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
