"""Arena tournaments on a node (docs/rules.md, "Arena tournaments"; docs/protocol.md,
"Arenas"): the operator's schedule, joining and pausing, pairing whoever waits into
races as they finish, counting each finished race once, and the results once it is
final (each player's line on their profile, the podium, the races).

The rules are domain/arena.py's and the state store/arenas.py's: any node can pair an
arena (one at a time, under a short lock) and count a race (once), so a node dying loses
nothing. A race is an ordinary rated race of the arena's size, made private and started
at once (its seats are ready, as a quick match's), on a deal of the arena's pool of
certified deals (node/arena_deals.py; a fresh random one when the pool is empty) with its
own commitment; its players' connections enter it on whichever node holds them. The table
they and its watchers are sent is node/arena_table.py's.
"""

from __future__ import annotations

import asyncio
import secrets
from dataclasses import asdict
from pathlib import Path
from typing import Any

import structlog

from ..clock import Clock
from ..config import Config
from ..contracts import Spawn
from ..domain import arena as A
from ..domain import ranking
from ..domain.challenge import SPEED, flagged
from ..domain.errors import RateLimited, ServiceError
from ..domain.options import RoomOptions
from ..domain.progress import initial_progress
from ..domain.room import Room, add_player
from ..store import Store
from ..store.ratings import GUEST_KEEP_S
from ..wire import (
    ArenasRequest,
    CreateArena,
    JoinArena,
    PauseArena,
    WatchArena,
    encode,
    encode_text,
)
from ..wire.outbound import ArenaRace
from .arena_deals import ArenaDeals
from .arena_table import ArenaTables, top_race
from .conn import Addresses, Conn, seat_owner
from .lobby import Lobby
from .rooms import RoomOps, SeatToken, new_token

log = structlog.get_logger("klondike_race.arenas")

PAIR_INTERVAL_S = 1.0  # how often a node pairs the arenas its players are in
PAIR_LOCK_MS = 5_000  # one node pairs an arena at a time (held while it does; it lapses
# should the node die meanwhile)
LISTED_BEFORE_MS = 6 * 3_600_000  # the list shows arenas starting this soon
CREATED_PER_ADDRESS = (10, 3600)  # arenas one client address may create, per hour
PODIUM = 3  # the places a final arena's podium shows
RACES_SHOWN = 100  # the races /api/arenas/ID lists, newest first
FINALS_SHOWN = 20  # the recent results /api/arenas?final=1 lists
# races being made at once: a thousand at once (every player of an arena joined in the
# same minute) waited past the Redis connections' 10 s and closed their players' connections
RACES_AT_ONCE = 50


def load_schedule(path: str | None) -> tuple[A.ScheduleLine, ...]:
    """The operator's arenas (``KR_ARENAS_FILE``); ValueError naming the line when one
    is bad, or when the file cannot be read."""
    if not path:
        return ()
    try:
        text = Path(path).read_text()
    except OSError as err:
        raise ValueError(f"cannot read it: {err.strerror or err}") from None
    return A.parse_schedule(text)


class Arenas:
    def __init__(
        self,
        config: Config,
        store: Store,
        rooms: RoomOps,
        lobby: Lobby,
        tables: ArenaTables,
        spawn: Spawn,
        clock: Clock,
        node: str,
        addresses: Addresses,
        deals: ArenaDeals,
    ) -> None:
        self.config = config
        self.deals = deals  # the races' deals (node/arena_deals.py)
        self.addresses = addresses  # client addresses as kept (keyed hashes)
        self.store = store
        self.rooms = rooms
        self.lobby = lobby
        self.tables = tables
        self.spawn = spawn
        self.clock = clock
        self.node = node
        self.lines = load_schedule(config.arenas_file)
        self.here: dict[str, dict[str, Conn]] = {}  # arena -> player key -> connection here

    # ---- which arenas there are --------------------------------------------------------
    async def find(self, arena_id: str) -> A.Arena:
        """The arena ``arena_id`` as stored (a scheduled one is stored by the first node
        that asks for it while it is listed or runs), or ``no_arena``."""
        stored = await self.store.arenas.load(arena_id)
        if stored is not None:
            return stored
        scheduled = A.scheduled_arena(self.lines, arena_id)
        now = self.clock.now_ms()
        if scheduled is None or scheduled.starts > now + LISTED_BEFORE_MS:
            raise ServiceError("no_arena", f"no arena {arena_id!r} (listed 6 hours ahead)")
        if scheduled.phase(now) == A.OVER:
            return scheduled  # nothing to keep of it: nobody joined while it ran
        return await self.store.arenas.define(scheduled, self._keep_until(scheduled))

    async def listed(self, now: int) -> list[dict[str, Any]]:
        """The scheduled arenas and the players' public ones running at ``now`` or starting
        within ``LISTED_BEFORE_MS``, each with how many players have joined."""
        listed = []
        made = await self.store.arenas.public_made(now, now + LISTED_BEFORE_MS)
        for arena in [*A.arenas_between(self.lines, now, now + LISTED_BEFORE_MS), *made]:
            entry = await self.tables.public(arena, now)
            entry["players"] = await self.store.arenas.players(arena.id)
            listed.append(entry)
        return listed

    def _keep_until(self, arena: A.Arena) -> int:
        """When an arena's keys expire: ``KR_KEEP_DAILY_S`` after its end, as a daily's."""
        return arena.ends + self.config.keep_daily_s * 1000

    async def send_list(self, conn: Conn, m: ArenasRequest) -> None:
        now = self.clock.now_ms()
        conn.send(encode({"type": "arenas", "server_time": now, "arenas": await self.listed(now)}))

    async def create(self, conn: Conn, m: CreateArena) -> None:
        """A player's own arena (domain/arena.py, ``created``): listed when public, else
        joined by its id, which only its maker is told. At most ``CREATED_PER_ADDRESS``
        from one client address; the answer is ``arena_made`` with the arena as listed
        (its maker has not joined it: ``join_arena`` does)."""
        who, _ = _player(conn, "create_arena")
        fields = {k: v for k, v in asdict(m).items() if v is not None}
        now = self.clock.now_ms()
        arena = A.created(f"arena-p{secrets.token_hex(8)}", fields, now)  # refusals first
        limit, window = CREATED_PER_ADDRESS
        wait = await self.store.accounts.hit(f"arena:{conn.address}", limit, window)
        if wait:
            raise RateLimited(f"too many arenas created ({limit} an hour)", wait)
        await self.store.arenas.define(arena, self._keep_until(arena))
        if not arena.private:
            await self.store.arenas.list_public(arena)
        log.info("arena created", arena=arena.id, private=arena.private, by=who)
        public = await self.tables.public(arena, now)
        conn.send(encode({"type": "arena_made", "arena": public, "server_time": now}))

    async def http(self, rest: str, query: str) -> tuple[int, dict[str, Any]]:
        """``/api/arenas`` (the list; ``?final=1``: the recent results) and
        ``/api/arenas/ID`` (one arena with its table's first rows, ranked, its top race,
        its races, and once final its podium)."""
        now = self.clock.now_ms()
        if rest in ("", "/") and query in ("", "final=1"):
            found = await self.listed(now) if not query else await self.finals(now)
            return 200, {"server_time": now, "arenas": found}
        if query:
            message = "/api/arenas takes ?final=1 only, /api/arenas/ID no query"
            return 400, {"error": "bad_request", "message": message}
        arena_id = rest[1:] if rest.startswith("/") else ""
        stored = await self.store.arenas.load(arena_id) if "/" not in arena_id else None
        if stored is None:  # an arena nobody joined has no table to show
            return 404, {"error": "no_arena", "message": "no such arena"}
        public = await self.tables.public(stored, now)
        if public["final"]:  # (its results written now, if no node has yet)
            await self.finalize(stored)
        read = await self.tables.read(stored.id, [])
        joined = await self.store.arenas.players(stored.id)
        total, races = await self.store.arenas.races(stored.id, RACES_SHOWN)
        return 200, {
            "server_time": now,
            "arena": {**public, "players": joined},
            "v": read.v,
            "table": read.rows,
            "top_race": top_race(read.rows),
            "podium": _podium(read.rows) if public["final"] else None,
            "races": [{**r, "replay": f"/replay/{r['code']}"} for r in races],
            "races_total": total,
        }

    async def finals(self, now: int) -> list[dict[str, Any]]:
        """The public arenas made final most recently (their keys kept: within
        ``KR_KEEP_DAILY_S``), newest first, each as listed with its players."""
        since = now - self.config.keep_daily_s * 1000
        found = []
        for arena_id in await self.store.arenas.recent_finals(since, FINALS_SHOWN):
            arena = await self.store.arenas.load(arena_id)
            if arena is not None:
                joined = await self.store.arenas.players(arena_id)
                found.append({**await self.tables.public(arena, now), "players": joined})
        return found

    # ---- joining and pausing -----------------------------------------------------------
    async def join(self, conn: Conn, m: JoinArena) -> None:
        """``conn``'s player is in the arena and waits to be paired (again, after a
        pause); refused once it is over, and for a connection with no identity."""
        who, guest = _player(conn, "join_arena")
        arena = await self.find(m.arena)
        now = self.clock.now_ms()
        if arena.phase(now) == A.OVER:
            raise ServiceError("arena_over", f"arena {arena.id} is over")
        if conn.arena == arena.id:
            raise ServiceError("already_in_arena", f"join_arena: already in arena {arena.id}")
        name = conn.identity.name if conn.identity and conn.identity.name else m.name
        # a second identity costs nothing: players joining from one address are counted
        # (docs/rules.md, "Arena tournaments", "Fair play")
        address = await self.addresses.of(conn)
        limit = self.config.attempts_per_address
        await self.store.arenas.ending(arena)  # (before: a player in it is owed the end)
        got = await self.store.arenas.join(
            arena.id, who, name, guest, now, self.node, conn.session, address, limit
        )
        if got < 0:
            raise RateLimited(
                f"{-got} players joined this arena from your address already: at most "
                f"{limit} from one address",
                None,
            )
        if conn.arena is not None:  # one arena at a time per connection
            await self._leave(conn)
        self.here.setdefault(arena.id, {})[who] = conn
        conn.arena = arena.id
        await self.tables.watch(conn, arena)

    async def pause(self, conn: Conn, m: PauseArena) -> None:
        """Not paired again until the player joins again; their points stay, and the
        table is still sent to them."""
        who, _ = seat_owner(conn)
        if conn.arena != m.arena or not who:
            raise ServiceError("not_in_arena", f"pause_arena: you are not in arena {m.arena!r}")
        await self._leave(conn)
        arena = await self.find(m.arena)
        await self.tables.watch(conn, arena, paused=True)

    async def watch(self, conn: Conn, m: WatchArena) -> None:
        """The arena's table to ``conn``, whoever it is (no identity needed), from now on
        instead of another arena's; playing in an arena goes on as it was."""
        await self.tables.watch(conn, await self.find(m.arena))

    async def _leave(self, conn: Conn) -> None:
        arena, conn.arena = conn.arena, None
        who, _ = seat_owner(conn)
        if arena is None or not who:
            return
        players = self.here.get(arena, {})
        if players.get(who) is conn:
            del players[who]
            if not players:
                self.here.pop(arena, None)
            await self.store.arenas.pause(arena, who)

    async def closed(self, conn: Conn) -> None:
        """``conn`` is closing: its player is paused (paired only while connected) and it
        gets no table."""
        self.tables.unwatch(conn)
        if conn.arena is not None:
            await self._leave(conn)

    # ---- pairing -------------------------------------------------------------------------
    async def run(self) -> None:
        """Every ``PAIR_INTERVAL_S``: each arena with players here is paired (by one node
        at a time); once over, it is made final as soon as no race of it runs (with none
        running at its end, at once: not at the sweeper's next pass, up to
        ``KR_SWEEP_INTERVAL_S`` later)."""
        final: set[str] = set()  # arenas here known to be final
        while True:
            await asyncio.sleep(PAIR_INTERVAL_S)
            final &= self.here.keys()
            for arena_id in list(self.here):
                try:
                    arena = await self.find(arena_id)
                    if arena.phase(self.clock.now_ms()) != A.OVER:
                        await self.pair(arena)
                    elif arena_id not in final:
                        await self.finalize(arena)
                        if await self.store.arenas.final_at(arena_id) is not None:
                            final.add(arena_id)
                except asyncio.CancelledError:
                    raise
                except Exception:
                    log.exception("arena pairing failed", arena=arena_id)

    async def pair(self, arena: A.Arena) -> int:
        """Pair whoever waits into races (domain/arena.py, ``pair``), under the arena's
        lock: how many races were made."""
        now = self.clock.now_ms()
        if not arena.pairing_open(now) or not await self.store.arenas.lock(
            arena.id, self.node, PAIR_LOCK_MS
        ):
            return 0
        try:
            return await self._pair(arena, now)
        finally:
            await self.store.arenas.unlock(arena.id, self.node)

    async def _pair(self, arena: A.Arena, now: int) -> int:
        """Only the players waiting are read (reading every player, each second, was most
        of what pairing cost with 2,000 in the arena)."""
        asked = list(await self.store.arenas.waiting(arena.id))
        entrants = await self.store.arenas.entrants(arena.id, asked)
        waiting = [e for e in entrants if e.waiting_since is not None]
        if len(waiting) < 2:
            return 0  # (a player alone waits)
        draw = arena.settings.draw
        ratings = await self.lobby.ratings_of([e.who for e in waiting], draw)
        pool = [
            A.Waiting(
                e.who, e.standing.points, r, e.waiting_since or now, frozenset(e.last), e.address
            )
            for e, r in zip(waiting, ratings, strict=True)
        ]
        by_who = {e.who: e for e in waiting}
        rating = {w.player: w.rating for w in pool}
        gate = asyncio.Semaphore(RACES_AT_ONCE)

        async def race(group: tuple[str, ...]) -> int:
            async with gate:
                return await self._race(arena, [by_who[w] for w in group], rating)

        return sum(await asyncio.gather(*(race(g) for g in A.pair(pool, arena.size, now).races)))

    async def _race(self, arena: A.Arena, players: list[Any], rating: dict[str, int]) -> int:
        """One race of ``players`` (``rating``: theirs now, which their race's count uses):
        the room, then its players out of the waiting list (all or none: else the room is
        left abandoned), then each told where it is."""
        tokens = [new_token(p.session) for p in players]

        def seat(room: Room, now: int) -> tuple[Room, list[str]]:
            pids = []
            for p, (_, hashed) in zip(players, tokens, strict=True):
                room, pid = add_player(room, p.name, hashed, now, p.who, p.guest, p.address)
                pids.append(pid)
            return room, pids

        deal, certified = await self.deal(arena)
        options = RoomOptions(
            settings=arena.settings,
            capacity=len(players),
            private=True,
            rated=True,
            quick=True,
            time_limit=arena.time_limit,
            winnable_only=certified,  # the room says whether its deal was certified
        )
        room, pids = await self.rooms.create(options, deal, seat, arena=arena.id)
        taken = {p.who: rating[p.who] for p in players}
        if not await self.store.arenas.take(arena.id, room.code, taken):
            await self.rooms.finish(room.code, "abandoned")
            return 0
        log.info("arena race", arena=arena.id, room=room.code, players=len(players))
        for p, pid, (secret, _) in zip(players, pids, tokens, strict=True):
            payload = {"arena": arena.id, "token": str(SeatToken(room.code, pid, secret))}
            if p.node == self.node:
                self.entered(p.who, payload)
            else:
                await self.store.matchmaking.tell(p.node, f"ar:{p.who}", payload)
        return 1

    async def deal(self, arena: A.Arena) -> tuple[dict[str, Any], bool]:
        """A race's deal (its commitment is the room's) and whether the solver certified
        it: the arena's next pooled deal, else a fresh random one."""
        return await self.deals.take(arena)

    def entered(self, who: str, payload: dict[str, Any]) -> None:
        """News from any node: ``who``'s next race of an arena is made; their connection
        here enters it (``arena_race``, then its welcome)."""
        conn = self.here.get(str(payload.get("arena")), {}).get(who)
        if conn is None:
            return
        token, arena = str(payload["token"]), str(payload["arena"])
        news: ArenaRace = {"type": "arena_race", "arena": arena, "token": token}
        self.lobby.enter_made(conn, token, encode_text(news), True)

    # ---- counting a finished race ----------------------------------------------------------
    async def count(self, room: Room) -> bool:
        """Count the finished arena race ``room`` once (store/arenas.py): each player's
        points by place, streak and performance (domain/arena.py), the race on the
        arena's list, a won game as fast as the daily's speed rule flags flagging its
        player's row, a sprinter's outright win its bonus. True when counted here; the
        arena's last race made final so, its results are written (``finalize``)."""
        assert room.arena is not None
        players = [s.who for s in room.seats if s.who]
        if not players:
            return False
        _, progress, _ = await self.store.rooms.snapshot(room.code)
        empty = initial_progress(room.settings.scoring)
        final = {s.who: progress.get(s.id) or empty for s in room.seats}
        keys = [
            (who, ranking.rank_key(prog, room.options.rank_by, prog.get("last_ms", 0)))
            for who, prog in final.items()
        ]
        ranks = {who: rank for who, rank, _ in ranking.ranks(keys)}
        resigned = all(prog.get("status") == "resigned" for prog in final.values())
        entrants = {e.who: e for e in await self.store.arenas.entrants(room.arena, players)}
        # the ratings as the race started (its take kept them), not now: this race's own
        # rating change may be stored already; read now only where none was kept
        ratings = {
            w: e.rating for w, e in entrants.items() if e.race == room.code and e.rating is not None
        }
        if unknown := [w for w in players if w not in ratings]:
            now_rated = await self.lobby.ratings_of(unknown, room.settings.draw)
            ratings.update(zip(unknown, now_rated, strict=True))
        sprinted = {s.who for s in room.seats if s.who and s.sprint}
        results = A.results(ranks, ratings, sprinted, all_resigned=resigned)
        scored = {
            who: A.score(entrants[who].standing if who in entrants else A.Standing(), result)
            for who, result in results.items()
        }
        now = self.clock.now_ms()
        names = {s.who: s.name for s in room.seats}
        listed = {
            "code": room.code,
            "at": now,
            "players": [
                {"player": w, "name": names[w], "place": ranks[w], "points": scored[w][1]}
                for w in sorted(scored, key=lambda w: (ranks[w], w))
            ],
        }
        flags = {who: SPEED for who, prog in final.items() if flagged(prog)}
        standings = {who: got[0] for who, got in scored.items()}
        counted = await self.store.arenas.count(
            room.arena, room.code, now, standings, listed, flags
        )
        await self.store.arenas.counted_due(room.code)
        if counted:
            log.info("arena race counted", arena=room.arena, room=room.code, flags=flags)
            arena = await self.store.arenas.load(room.arena)
            if arena is not None and arena.phase(now) == A.OVER:
                await self.finalize(arena)
        return counted

    # ---- the results, once final ---------------------------------------------------------
    async def finalize(self, arena: A.Arena, owed: bool = False) -> bool:
        """Make the arena final once it is over and none of its races runs (its ``final``,
        set once), and write every player who raced their line on their profile (rank of
        how many, points, races, wins): once, by whichever node made it final, or
        (``owed``: the sweeper, for an arena still on ``arenas:ending``) again after a
        node died before it had, each line written once whoever writes it. True when the
        lines were written here."""
        now = self.clock.now_ms()
        if arena.phase(now) != A.OVER:
            return False
        sealed = await self.store.arenas.seal(arena.id, now)
        if sealed == 0 or (sealed == 2 and not owed):
            return False
        entrants = {e.who: e for e in await self.store.arenas.entrants(arena.id)}
        _, keyed_rows = await self.store.arenas.table(arena.id, max(len(entrants), 1))
        ranked = ranking.ranks(keyed_rows)
        written = 0
        for who, rank, _ in ranked:
            e = entrants.get(who)
            if e is None or not e.standing.races:
                continue
            line = {
                "arena": arena.id,
                "title": arena.title,
                "starts": arena.starts,
                "rank": rank,
                "players": len(ranked),
                "points": e.standing.points,
                "races": e.standing.races,
                "wins": e.standing.wins,
            }
            written += await self.store.arenas.add_line(
                who, line, GUEST_KEEP_S if e.guest else None
            )
        final_at = await self.store.arenas.final_at(arena.id) or now
        await self.store.arenas.ended(arena.id, None if arena.private else final_at)
        log.info("arena final", arena=arena.id, players=len(ranked), lines=written)
        return True

    async def finalize_due(self, arena_id: str) -> bool:
        """The sweeper's: an arena due to be made final (``arenas:ending``), whose lines
        its node may never have written; one whose keys expired leaves the list."""
        arena = await self.store.arenas.load(arena_id)
        if arena is None:
            await self.store.arenas.ended(arena_id, None)
            return False
        return await self.finalize(arena, owed=True)


def _player(conn: Conn, what: str) -> tuple[str, bool]:
    """(player key, guest) of ``conn``, which ``what`` needs (a guest's or an account's:
    ``hello_first`` for a connection that has said no hello)."""
    who, guest = seat_owner(conn)
    if not who:
        raise ServiceError("hello_first", f"{what}: say hello first (a guest or an account)")
    return who, guest


def _podium(rows: list[dict[str, Any]]) -> list[dict[str, Any]]:
    """A final table's podium: the rows of the first ``PODIUM`` places (a place shared
    shows each who shares it) of players who raced."""
    return [r for r in rows if r["rank"] <= PODIUM and r["races"]]
