"""Redis, split by what it stores: rooms (store/rooms.py), move logs and their group
commit (store/moves.py), matchmaking (store/matchmaking.py), sweeping
(store/sweeping.py), accounts (store/accounts.py), ratings (store/ratings.py), play
statistics (store/played.py),
challenges (store/challenges.py) and arena tournaments (store/arenas.py, which lists its
keys, and store/arena_deals.py, an arena's pool of certified deals); key names in
store/keys.py, the Lua scripts in store/scripts.py (one Redis) and store/slot_scripts.py
(a Redis Cluster: every script touches one slot, its keys declared; store/cluster.py).

Keys. Literal braces are hash tags: ``room:{CODE}`` means the key ``room:{K4X9QZ}``,
whose slot is the slot of ``K4X9QZ``, so a room's keys share a Redis Cluster slot; a
name without braces (``node:NODE``) is a plain placeholder. On a cluster (only) the
player keys are ``player:{WHO}:...`` and the challenge keys ``ch:{ID}:N:...``, tagged so
that each player's keys share a slot and each challenge's do; one Redis keeps the
untagged names below. Each global structure is one key, so one slot (docs/operations.md,
"Redis Cluster", says what that costs).

==========================  ======  ===================================================
``room:{CODE}``             hash    ``state`` (the Room as JSON, secrets included),
                                    ``rev`` (compare-and-set revision), ``status``,
                                    ``analysis`` (JSON, once a finished race is analysed),
                                    ``played`` (JSON, once its games are counted to their
                                    players' statistics), ``assisted:PID`` (a practice
                                    game's player had a hint or finish it for me),
                                    ``rated`` (players stored, once the race's statistics
                                    and ratings are applied: the exactly-once marker),
                                    on a cluster ``plan`` (each player's outcome, stored
                                    once before they are applied)
``room:{CODE}:moves:PID``  list    the player's accepted moves ``TEXT@AT_MS`` in order
                                    (``resign@AT_MS`` for a resignation, ``timeout@AT_MS``
                                    a sprinter's time-out, the server's); the source of
                                    truth: index + 1 is the client's sequence number
``room:{CODE}:prog``        hash    pid -> latest progress JSON (a cache of the log)
``room:{CODE}:rank``        zset    pid -> exact composite (ranking.py), smaller = better
``room:{CODE}:ver``         string  the room's event version counter
``room:{CODE}:events``      zset    version -> event JSON, the last ~500 (for resume and
                                    gaps); a ``progress`` event names the move, not the
                                    board (nodes replay moves: service/boards.py)
``room:{CODE}:nodes``       set     server nodes with a connection in the room
``room:{CODE}:spect``       hash    node -> its spectator count
``rooms:public``            zset    code -> creation time, open public rooms
``rooms:active``            zset    code -> last time a player was connected (epoch ms),
                                    rooms not finished; what the sweeper looks at
``rooms:deadlines``         zset    code -> when (epoch ms) its time limit ends, races
                                    not finished that have one; the sweeper ends those
                                    past it that no node ended (nobody was connected)
``rooms:analysis``          zset    code -> when (epoch ms) a finished race still without
                                    its analysis is due to be analysed again by the
                                    sweeper (its node died before storing it)
``rooms:rating``            zset    code -> when (epoch ms) a finished race's statistics
                                    and ratings are due to the sweeper (its node died
                                    before applying them); applying takes it off
``rooms:played``            zset    code -> when (epoch ms) a finished room's play
                                    statistics are due to the sweeper (store/played.py)
``kr:sweep``                string  the node sweeping now (a lock with a short TTL)
``mm:{D}:rating``           zset    quick-match ticket of Draw D -> its player's rating
``mm:{D}:since``            zset    quick-match ticket of Draw D -> when it came (ms); a
                                    ticket waiting over an hour is dropped
``mm:{D}:players``          hash    quick-match ticket of Draw D -> its player JSON
                                    (name, who, guest, the node holding it)
``node:NODE``               string  a live node: its open connections (30 s TTL, renewed
                                    every 10 s)
``nodes``                   set     the nodes that said they were live (the lobby's
                                    "online" sums their ``node:NODE``)
``acct:name:CANONICAL``     string  the account id holding a name (domain/players.py)
``acct:ID``                 hash    ``name``, ``hash`` (argon2), ``guest`` (the guest key
                                    it was claimed from), ``created``
``acct:ID:sess``            set     SHA-256 of each live session token of the account
``sess:SHA256``             string  account id of a session token (30 days TTL)
``player:WHO:rooms``        zset    code -> when seated, the rooms a player sits in
``player:WHO:name``         hash    a guest's ``name`` (their last seat's: the profile's
                                    name, and that they have one) and ``at`` (epoch ms,
                                    when that seat was taken); expires 180 days after the
                                    last seat, deleted when the guest is claimed
``player:WHO:stats``        hash    variant (``draw1``, ``draw3``) -> JSON: mu, sigma,
                                    races, wins, solved, best time, fewest moves,
                                    foundation total, streaks, the last 100 rating points
``player:WHO:races``        list    the last 50 counted races, newest first (JSON); a
                                    guest's two keys expire 180 days after their last
                                    race, an account's never
``player:{WHO}:applied``    zset    cluster only: code -> when, the last 200 races
                                    applied to the player (the per-player exactly-once
                                    marker of store/ratings.py)
``player:WHO:play``         hash    play statistics per variant: ``draw1:games``,
                                    ``:wins``, ``:best_ms``, ``:fewest``, ``:streak``,
                                    ``:best_streak``, ``:d0``..``:d29`` (a ring of UTC days:
                                    ``DAY,GAMES,WINS``); a guest's expires 180 days after
                                    their last counted game (store/played.py)
``player:WHO:counted``      zset    code -> when, the last 64 games counted to the
                                    player (exactly once), expires 7 days after the last
``player:WHO:daily``        hash    daily challenge id -> the ended attempt's result
                                    JSON (store/challenges.py; streaks on the profile)
``player:WHO:arenas``       list    the player's line of each final arena they raced in,
                                    newest start first, the last 50 (store/arenas.py,
                                    which lists the arena keys: ``arena:{ID}:...``
                                    with the pool of certified deals ``:deals``,
                                    ``arenas:made``, ``arenas:ending``, ``arenas:final``);
                                    a guest's expires 180 days after the last
``rl:KIND:SUBJECT``         string  attempts counted in a rate-limit window (its TTL)
==========================  ======  ===================================================

Events are published on the channel ``kr:events`` as ``CODE|NODE|JSON`` (NODE: the node
that committed it) only when another live node has a connection in the room
(``room:{CODE}:nodes``; a node whose ``node:NODE`` key expired leaves the set at the
room's next event); the committing node delivers its own, and ignores its own
publications. On a cluster each room has its own sharded channel ``kr:events:{CODE}``
(``SPUBLISH`` from the room's scripts, in the room's slot) and each node one for
quick-match news, ``kr:node:{NODE}`` (node/shards.py).
"""

from __future__ import annotations

from collections.abc import Awaitable, Callable

import redis.asyncio as aioredis

from ..clock import Clock
from .accounts import Accounts
from .arena_deals import ArenaDeals
from .arenas import Arenas
from .challenges import Challenges
from .commit import CommitConnection
from .keys import CHANNEL, EVENTS_KEPT, moves_key, room_key
from .matchmaking import Matchmaking
from .moves import MoveLog
from .played import PlayedStore
from .ratings import Ratings
from .rooms import Rooms
from .sweeping import Sweeping

__all__ = ["CHANNEL", "EVENTS_KEPT", "Store", "moves_key", "room_key"]


class Store:
    """The node's Redis access, one part per thing stored. ``latency`` is called with the
    seconds of each round trip; ``replicas`` is what each write that answers a client
    waits for (``replicas`` below); ``line`` the group commit's own connection (None: the
    command client); ``listen(code, on)``, on a Redis Cluster, starts (True) or stops
    listening to a room's sharded channel as this node enters and leaves the room; ``clock``
    is the node's."""

    def __init__(
        self,
        redis: aioredis.Redis,
        node: str,
        latency: Callable[[float], None] | None = None,
        replicas: tuple[int, int] = (0, 0),
        line: CommitConnection | None = None,
        listen: Callable[[str, bool], Awaitable[None]] | None = None,
        clock: Clock | None = None,
    ) -> None:
        part = (redis, node, latency or (lambda _s: None), replicas, clock or Clock())
        self.sweeping = Sweeping(*part)
        live = self.sweeping.live if listen is not None else None
        self.rooms = Rooms(*part, listen=listen, live_nodes=live)
        self.accounts = Accounts(*part)
        self.challenges = Challenges(*part)
        self.log = MoveLog(*part, line=line)
        self.matchmaking = Matchmaking(*part)
        self.ratings = Ratings(*part)
        self.played = PlayedStore(*part)
        self.arenas = Arenas(*part)
        self.arena_deals = ArenaDeals(*part)

    @property
    def replicas(self) -> tuple[int, int]:
        """(replicas, ms): each write that answers a client (a move, a room change, a
        practice continuation) returns only once that many replicas hold it, waiting at
        most ms; (0, _): once the primary has it."""
        return self.log.replicas

    @replicas.setter
    def replicas(self, value: tuple[int, int]) -> None:
        for part in (
            self.rooms,
            self.log,
            self.matchmaking,
            self.sweeping,
            self.accounts,
            self.ratings,
            self.played,
            self.challenges,
            self.arenas,
            self.arena_deals,
        ):
            part.replicas = value

    def start(self) -> None:
        self.log.start()

    async def close(self) -> None:
        """Write the moves still pending, then stop."""
        await self.log.close()
