"""The Lua scripts: each changes one room's keys atomically and emits its event.

``EMIT`` (inlined in each) bumps the room's event version, keeps the event in
``room:{CODE}:events`` and publishes it when another node has a connection in the room.

The room scripts (APPEND_MOVES, ROOM_CAS, SPECTATORS, ANALYSIS and their ``emit``) are
written once, for one Redis and a Redis Cluster alike: ``room_scripts`` puts a
``Variant``'s fragments, the places where the two differ, into the one text
(``ONE_REDIS`` here, ``CLUSTER`` in slot_scripts.py).
"""

from __future__ import annotations

from typing import NamedTuple

from .keys import CHANNEL, EVENTS_KEPT


class Variant(NamedTuple):
    """Where the room scripts differ between one Redis and a Redis Cluster, each a Lua
    fragment (slot_scripts.py says why the cluster's differ)."""

    # ``room_key(room, at, n, suffix)``: the key ``room`` (``room:{CODE}``) + ``suffix``,
    # or the one the caller declared as ``KEYS[at + n]``
    room_key: str
    # ``publish(nodes, rid, origin, message)``: the event to the other nodes in the room
    # (``nodes``: its node set), if any
    publish: str
    # SPECTATORS: ``live(node)``, whether a node's spectators count
    live: str
    # APPEND_MOVES: the challenge attempt's leaderboard row of a stored move (``f``: its
    # fields), or nothing
    board_row: str
    # ROOM_CAS: the room on its follow-up lists (ARGV[7]), or nothing
    follow_ups: str


class RoomScripts(NamedTuple):
    append_moves: str
    room_cas: str
    spectators: str
    analysis: str


# emit(room, rid, at, body, origin): the event's version; its keys are ``room``'s
# ``:ver``, ``:events`` and ``:nodes``, declared on a cluster as KEYS[at + 2..4]
EMIT = """
local function emit(room, rid, at, body, origin)
  local events = room_key(room, at, 3, ':events')
  local v = redis.call('INCR', room_key(room, at, 2, ':ver'))
  local payload = '{"v":' .. v .. ',' .. string.sub(body, 2)
  redis.call('ZADD', events, v, payload)
  if v % 50 == 0 then
    redis.call('ZREMRANGEBYSCORE', events, '-inf', v - KEPT)
  end
  publish(room_key(room, at, 4, ':nodes'), rid, origin, rid .. '|' .. origin .. '|' .. payload)
  return v
end
""".replace("KEPT", str(EVENTS_KEPT))

# Lua: ``fields(s)``, the parts of ``s`` between \x1f separators (a move's fields in
# APPEND_MOVES).
FIELDS = """
local function fields(s)
  local f, start = {}, 1
  while true do
    local stop = string.find(s, '\\31', start, true)
    if not stop then break end
    f[#f + 1] = string.sub(s, start, stop - 1)
    start = stop + 1
  end
  f[#f + 1] = string.sub(s, start)
  return f
end
"""


# Lua: ``put_row(board, rows, ver, out, who, score, row)``: a challenge attempt's row on
# its leaderboard (``ch:ID:N``'s ``:board``, ``:rows``, ``:ver``), unless an operator took
# the player off it (``:out``): with the move on one Redis, in BOARD_ROWS on a cluster.
PUT_ROW = """
local function put_row(board, rows, ver, out, who, score, row)
  if redis.call('SISMEMBER', out, who) == 0 then
    redis.call('ZADD', board, score, who)
    redis.call('HSET', rows, who, row)
    redis.call('INCR', ver)
  end
end
"""


def room_scripts(variant: Variant) -> RoomScripts:
    """The room scripts with ``variant``'s fragments in their places."""
    emit = variant.room_key + variant.publish + EMIT
    # ARGV: origin, then one per move: room, player, seq, entry, progress, rank score and
    # event body joined by \x1f; a challenge attempt's move adds its leaderboard
    # (``ch:ID:N``), the player's key and their row JSON (``board_row``).
    # Returns per move, joined by commas (one bulk string parses faster than an array):
    # the event version (> 0) if appended, 0 if the race is finished, or -(length + 1) if
    # seq was not length + 1 (a duplicate or a gap; nothing was written).
    append_moves = (
        emit
        + FIELDS
        + PUT_ROW
        + """
local origin = ARGV[1]
local out = {}
for i = 2, #ARGV do
  local f = fields(ARGV[i])
  local rid, pid, at = f[1], f[2], (i - 2) * 7
  local room = 'room:{' .. rid .. '}'
  local log = room_key(room, at, 5, ':moves:' .. pid)
  local len = redis.call('LLEN', log)
  if redis.call('HGET', room_key(room, at, 1, ''), 'status') == 'finished' then
    out[#out + 1] = 0
  elseif len + 1 == tonumber(f[3]) then
    redis.call('RPUSH', log, f[4])
    redis.call('HSET', room_key(room, at, 6, ':prog'), pid, f[5])
    redis.call('ZADD', room_key(room, at, 7, ':rank'), f[6], pid)
"""
        + variant.board_row
        + """
    out[#out + 1] = emit(room, rid, at, f[7], origin)
  else
    out[#out + 1] = -(len + 1)
  end
end
return table.concat(out, ',')
"""
    )
    # ARGV: room, expected rev, state JSON, status, event body or '', origin, follow-up
    # lists (space-separated ``zset=due`` pairs, due in epoch ms, or ''), a player whose
    # move log must be empty (a sprint's: '' for none), [ranks...]. Returns the event
    # version, 0 when there was no event, -1 when rev did not match, -2 when that
    # player's log was not empty (nothing is stored).
    room_cas = (
        emit
        + """
local rid = ARGV[1]
local room = 'room:{' .. rid .. '}'
local cur = tonumber(redis.call('HGET', room_key(room, 0, 1, ''), 'rev') or '0')
if cur ~= tonumber(ARGV[2]) then return -1 end
if ARGV[8] ~= '' and redis.call('LLEN', room_key(room, 0, 7, ':moves:' .. ARGV[8])) > 0 then
  return -2
end
redis.call('HSET', room_key(room, 0, 1, ''), 'state', ARGV[3], 'rev', cur + 1, 'status', ARGV[4])
"""
        + variant.follow_ups
        + """
for i = 9, #ARGV, 3 do
  redis.call('HSET', room_key(room, 0, 5, ':prog'), ARGV[i], ARGV[i + 1])
  redis.call('ZADD', room_key(room, 0, 6, ':rank'), ARGV[i + 2], ARGV[i])
end
if ARGV[5] ~= '' then return emit(room, rid, 0, ARGV[5], ARGV[6]) end
return 0
"""
    )
    # ARGV: room, node, count, origin. Returns {event version, total count of the live
    # nodes, the calling node's included}.
    spectators = (
        emit
        + variant.live
        + """
local rid = ARGV[1]
local room = 'room:{' .. rid .. '}'
local key = room_key(room, 0, 5, ':spect')
if tonumber(ARGV[3]) > 0 then redis.call('HSET', key, ARGV[2], ARGV[3])
else redis.call('HDEL', key, ARGV[2]) end
local total = 0
local counts = redis.call('HGETALL', key)
for i = 1, #counts, 2 do
  if counts[i] == ARGV[2] or live(counts[i]) then
    total = total + tonumber(counts[i + 1])
  else
    redis.call('HDEL', key, counts[i])  -- a node that died without cleaning up
  end
end
local body = '{"type":"spectators","count":' .. total .. '}'
return {emit(room, rid, 0, body, ARGV[4]), total}
"""
    )
    # ARGV: room, JSON, origin, what (``analysis``: a finished race's analysis;
    # ``played``: what its games did to its players' statistics). Stores it once in the
    # room's hash field ``what`` and emits it as ``{"type": what, what: JSON}``; returns
    # the event version, or 0 when it was already stored or the room is gone.
    analysis = (
        emit
        + """
local rid, what = ARGV[1], ARGV[4]
local room = 'room:{' .. rid .. '}'
if redis.call('EXISTS', room_key(room, 0, 1, '')) == 0 then return 0 end
if redis.call('HSETNX', room_key(room, 0, 1, ''), what, ARGV[2]) == 0 then return 0 end
return emit(room, rid, 0, '{"type":"' .. what .. '","' .. what .. '":' .. ARGV[2] .. '}', ARGV[3])
"""
    )
    return RoomScripts(append_moves, room_cas, spectators, analysis)


# One Redis: the scripts name a room's keys from its code; an event is published on
# ``kr:events`` when another live node (its ``node:NODE`` key not expired) is in the
# room, and a node found dead leaves the room's node set; a challenge attempt's row and
# the follow-up lists (rooms:analysis, rooms:rating) are written in the same step, so
# work owed to a finished race is found by the sweeper even if this node dies right
# after, and a row honours an operator's removal (``ch:ID:N:out``).
ONE_REDIS = Variant(
    room_key="""
local function room_key(room, at, n, suffix)
  return room .. suffix
end
""",
    publish="""
local function publish(nodes, rid, origin, message)
  local others = false
  for _, n in ipairs(redis.call('SMEMBERS', nodes)) do
    if n ~= origin then
      if redis.call('EXISTS', 'node:' .. n) == 1 then
        others = true
      else
        redis.call('SREM', nodes, n)  -- a node that died without leaving
      end
    end
  end
  if others then redis.call('PUBLISH', 'CHANNEL', message) end
end
""".replace("CHANNEL", CHANNEL),
    live="""
local function live(node)
  return redis.call('EXISTS', 'node:' .. node) == 1
end
""",
    board_row="""
    if f[8] then
      put_row(f[8] .. ':board', f[8] .. ':rows', f[8] .. ':ver', f[8] .. ':out', f[9], f[6], f[10])
    end
""",
    follow_ups="""
for list, due in string.gmatch(ARGV[7], '(%S+)=(%d+)') do
  redis.call('ZADD', list, due, rid)
end
""",
)

APPEND_MOVES, ROOM_CAS, SPECTATORS, ANALYSIS = room_scripts(ONE_REDIS)

# KEYS: the queue of a variant (draw count D): ``mm:{D}:rating`` (ticket -> display
# rating), ``mm:{D}:since`` (ticket -> when it came, ms), ``mm:{D}:players`` (ticket ->
# player JSON: name, who, guest, session, address, node). ARGV: now (epoch ms), the
# variant, then optionally a new ticket: ticket, display rating, player JSON. Quick match
# by rating: the new ticket joins the waiting ones; then, oldest first, each waiting
# ticket is paired with the closest-rated other one (the older of equals) that is not the
# same player (``who``) and within its window: WINDOW points at first, + PER_S per second
# waited, anyone after ANYONE_MS; one from another client address (``address``, keyed)
# before any from the same (a second identity: a race that would move no rating). The
# older ticket of a pair has waited longest, so its window is the wider of the two.
# Tickets waiting over an hour, or without a player, are dropped. Returns the pairs,
# each as older ticket, its player JSON, other ticket, its player JSON.
QUICK_MATCH = """
local now = tonumber(ARGV[1])
local by_rating, by_since, players = KEYS[1], KEYS[2], KEYS[3]
if ARGV[3] then
  redis.call('HSET', players, ARGV[3], ARGV[5])
  redis.call('ZADD', by_rating, ARGV[4], ARGV[3])
  redis.call('ZADD', by_since, now, ARGV[3])
end
local waiting = {}
local listed = redis.call('ZRANGE', by_since, 0, 199, 'WITHSCORES')
for i = 1, #listed, 2 do
  local t = listed[i]
  local since = tonumber(listed[i + 1])
  local player = redis.call('HGET', players, t)
  if player and now - since <= 3600000 then
    local held = cjson.decode(player)
    local address = held['address']
    if type(address) ~= 'string' then address = '' end
    waiting[#waiting + 1] = {t = t, since = since, player = player,
      who = held['who'] or '', address = address,
      rating = tonumber(redis.call('ZSCORE', by_rating, t) or '1500')}
  else
    redis.call('ZREM', by_since, t)
    redis.call('ZREM', by_rating, t)
    redis.call('HDEL', players, t)
  end
end
local taken, out = {}, {}
for i, a in ipairs(waiting) do
  if not taken[i] then
    local waited = now - a.since
    local window = WINDOW + PER_S * waited / 1000
    if waited >= ANYONE_MS then window = math.huge end
    local best, gap, shared = nil, nil, nil
    for j, b in ipairs(waiting) do
      if j ~= i and not taken[j] and (a.who == '' or a.who ~= b.who) then
        local d = math.abs(a.rating - b.rating)
        local s = 0
        if a.address ~= '' and a.address == b.address then s = 1 end
        if d <= window and (gap == nil or s < shared or (s == shared and d < gap)) then
          best, gap, shared = j, d, s
        end
      end
    end
    if best then
      taken[i], taken[best] = true, true
      local b = waiting[best]
      for _, t in ipairs({a.t, b.t}) do
        redis.call('ZREM', by_since, t)
        redis.call('ZREM', by_rating, t)
        redis.call('HDEL', players, t)
      end
      for _, v in ipairs({a.t, a.player, b.t, b.player}) do out[#out + 1] = v end
    end
  end
end
return out
"""

# ARGV: guest key, account key. A guest's statistics (ratings' and play's) and race
# history become the new account's (a key the account already has is left alone); they
# no longer expire. The guest's name goes (the account has its own): the guest key is
# nobody's profile again.
CLAIM = """
local moved = 0
for _, part in ipairs({':stats', ':races', ':daily', ':arenas', ':play'}) do
  local from, to = 'player:' .. ARGV[1] .. part, 'player:' .. ARGV[2] .. part
  if redis.call('EXISTS', from) == 1 and redis.call('EXISTS', to) == 0 then
    redis.call('RENAME', from, to)
    redis.call('PERSIST', to)
    moved = moved + 1
  end
end
redis.call('DEL', 'player:' .. ARGV[1] .. ':name')
return moved
"""

# KEYS: a guest's ``player:WHO:name``. ARGV: a seat's name, when (epoch ms) the seat was
# taken, how long (s) to keep it. The guest's name is that of the seat taken last: a
# seat taken earlier (an older room resumed) leaves a later one's name in place.
GUEST_NAME = """
local at = tonumber(redis.call('HGET', KEYS[1], 'at') or '-1')
if tonumber(ARGV[2]) >= at then
  redis.call('HSET', KEYS[1], 'name', ARGV[1], 'at', ARGV[2])
end
redis.call('EXPIRE', KEYS[1], ARGV[3])
return 1
"""

# KEYS: the list. ARGV: the list, now (epoch ms), grace (ms), limit. Entries of a
# follow-up list due by now, each made due again a grace later (the work itself takes it
# off when done, so a node dying with a claim leaves it to a later sweep).
CLAIM_DUE = """
local codes = redis.call('ZRANGEBYSCORE', KEYS[1], '-inf', ARGV[2], 'LIMIT', 0, ARGV[4])
for _, code in ipairs(codes) do
  redis.call('ZADD', KEYS[1], tonumber(ARGV[2]) + tonumber(ARGV[3]), code)
end
return codes
"""

# ARGV: canonical name, account id, name, password hash, guest key, created (epoch ms).
# Claims the name and stores the account in one step: 1, or 0 when the name is taken.
CREATE_ACCOUNT = """
if not redis.call('SET', 'acct:name:' .. ARGV[1], ARGV[2], 'NX') then return 0 end
redis.call('HSET', 'acct:' .. ARGV[2], 'name', ARGV[3], 'hash', ARGV[4],
           'guest', ARGV[5], 'created', ARGV[6])
return 1
"""

# KEYS: the counter. ARGV: counter key, limit, window (ms), count (1) or only check (0).
# A fixed window that starts at its first attempt. Returns 0 when allowed, else the ms
# until the window ends.
HIT = """
local n = tonumber(redis.call('GET', KEYS[1]) or '0')
if n >= tonumber(ARGV[2]) then
  local left = redis.call('PTTL', KEYS[1])
  if left < 1 then left = 1 end
  return left
end
if ARGV[4] == '1' and redis.call('INCR', KEYS[1]) == 1 then
  redis.call('PEXPIRE', KEYS[1], ARGV[3])
end
return 0
"""

# KEYS: a leaderboard's board, rows, ver, out, removed (``ch:ID:N:...``). ARGV: the
# leaderboard base, player key, the removal record JSON (an object).
# Takes the player off the board for good (``:out``, which the move script honours) and
# appends the record, with the removed row, to ``:removed``: that JSON, or nil when the
# player was not on the board (nothing is written).
REMOVE_ROW = """
local who = ARGV[2]
if not redis.call('ZSCORE', KEYS[1], who) then return false end
local row = redis.call('HGET', KEYS[2], who) or 'null'
redis.call('ZREM', KEYS[1], who)
redis.call('HDEL', KEYS[2], who)
redis.call('INCR', KEYS[3])
redis.call('SADD', KEYS[4], who)
local record = string.sub(ARGV[3], 1, -2) .. ',"row":' .. row .. '}'
redis.call('RPUSH', KEYS[5], record)
return record
"""

# KEYS as REMOVE_ROW. ARGV: leaderboard base, player key, row JSON, optionally its score.
# An ended attempt's row, if the player is still on the board (not taken off by an
# operator).
SET_ROW = """
if not redis.call('ZSCORE', KEYS[1], ARGV[2]) then return 0 end
if ARGV[4] then redis.call('ZADD', KEYS[1], 'XX', ARGV[4], ARGV[2]) end
redis.call('HSET', KEYS[2], ARGV[2], ARGV[3])
redis.call('INCR', KEYS[3])
return 1
"""

# KEYS: a challenge deal's attempts by client address (hash: an address's keyed hash ->
# its count; a player's mark there, a keyed hash of address and player -> the count their
# attempt made). ARGV: the address's keyed hash, the player's mark, the limit, when the
# hash expires (epoch ms). The player's attempt from the address: the count with it
# (counted once, however many of their devices ask), or minus the count when it is at the
# limit (nothing counted).
COUNT_ADDRESS = """
local mine = redis.call('HGET', KEYS[1], ARGV[2])
if mine then return tonumber(mine) end
local n = tonumber(redis.call('HGET', KEYS[1], ARGV[1]) or '0')
if n >= tonumber(ARGV[3]) then return -n end
n = redis.call('HINCRBY', KEYS[1], ARGV[1], 1)
redis.call('HSET', KEYS[1], ARGV[2], n)
redis.call('PEXPIREAT', KEYS[1], ARGV[4])
return n
"""

# KEYS (declared: one player's slot, so the same text serves a Redis Cluster): the
# player's statistics hash ``player:WHO:play`` and their counted games (zset code ->
# when). ARGV: room code, now (ms), variant, won (1/0), time (ms) and moves of a won game
# ('' else), the game's UTC day number, its day slot, keep (s; 0: never expires), marks
# kept, marks' keep (s). One game counted once (domain/played.py): returns 1 when counted
# now (0 when it was before: nothing changes), then the variant's best_ms, fewest,
# streak, best_streak, games, wins before the game and after it ('' for none).
COUNT_GAME = """
local h, v, won = KEYS[1], ARGV[3] .. ':', ARGV[4] == '1'
local function read()
  local got = redis.call('HMGET', h, v .. 'best_ms', v .. 'fewest', v .. 'streak',
                         v .. 'best_streak', v .. 'games', v .. 'wins')
  for i = 1, 6 do got[i] = got[i] or '' end
  return got
end
local before = read()
local counted = 0
if not redis.call('ZSCORE', KEYS[2], ARGV[1]) then
  counted = 1
  redis.call('HINCRBY', h, v .. 'games', 1)
  if won then
    redis.call('HINCRBY', h, v .. 'wins', 1)
    local streak = redis.call('HINCRBY', h, v .. 'streak', 1)
    if before[4] == '' or streak > tonumber(before[4]) then
      redis.call('HSET', h, v .. 'best_streak', streak)
    end
    if ARGV[5] ~= '' and (before[1] == '' or tonumber(ARGV[5]) < tonumber(before[1])) then
      redis.call('HSET', h, v .. 'best_ms', ARGV[5])
    end
    if ARGV[6] ~= '' and (before[2] == '' or tonumber(ARGV[6]) < tonumber(before[2])) then
      redis.call('HSET', h, v .. 'fewest', ARGV[6])
    end
  else
    redis.call('HSET', h, v .. 'streak', 0)
  end
  local slot = v .. 'd' .. ARGV[8]
  local g, w = 0, 0
  local day, sg, sw = string.match(redis.call('HGET', h, slot) or '', '^(%d+),(%d+),(%d+)$')
  if day == ARGV[7] then g, w = tonumber(sg), tonumber(sw) end
  if won then w = w + 1 end
  redis.call('HSET', h, slot, ARGV[7] .. ',' .. (g + 1) .. ',' .. w)
  redis.call('ZADD', KEYS[2], ARGV[2], ARGV[1])
  redis.call('ZREMRANGEBYRANK', KEYS[2], 0, -(tonumber(ARGV[10]) + 1))
  redis.call('EXPIRE', KEYS[2], ARGV[11])
  if tonumber(ARGV[9]) > 0 then redis.call('EXPIRE', h, ARGV[9]) end
end
local out = {counted}
for _, x in ipairs(before) do out[#out + 1] = x end
for _, x in ipairs(read()) do out[#out + 1] = x end
return out
"""
