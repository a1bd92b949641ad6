"""An arena's live table on a node (docs/protocol.md, "Arenas"), for the connections that
watch it: the arena's players here (paused ones too) and anyone who sends
``watch_arena``. Each push reads the table once and frames what it sends once for all of
them, as a challenge's leaderboard does (node/leaderboards.py):

- ``arena``: the whole table (its first ``KR_ARENA_TABLE_ROWS`` rows) in answer to
  ``join_arena``, ``pause_arena`` and ``watch_arena``;
- ``arena_changes``: at most every ``PUSH_EVERY_S``, when anything shown changed, the
  rows that changed or left (``row_changes``), where the arena is at and its top race:
  one frame for every connection holding the rows pushed last; one of its own for a
  connection whose whole table came since (then it holds those too);
- ``arena_you``: a player's own line when it changed, with their place and the rows
  around it while they are outside the first rows (read at most every
  ``NEAR_EVERY_MS``).

The top race (``top_race``, the arena's TV) is the race of the best placed player racing
among the first rows: its spectators see it as any rated race's (domain/visibility.py).
"""

from __future__ import annotations

import asyncio
from collections.abc import Sequence
from dataclasses import dataclass
from typing import Any, NamedTuple

import structlog

from ..clock import Clock
from ..config import Config
from ..domain import arena as A
from ..domain import ranking
from ..fanout import Fanout
from ..store import Store
from ..store.arenas import Entrant
from ..wire import encode
from ..wire import outbound as out
from .conn import Conn, seat_owner
from .leaderboards import REACH, RowChanges, row_changes

log = structlog.get_logger("klondike_race.arena_table")

PUSH_EVERY_S = 1.0  # an arena's changes are pushed at most this often
NEAR_EVERY_MS = 2000  # the players' places and the rows around them, at most this often
YIELD_EVERY = 250  # connections served between two turns of the event loop given back
READ_EVERY = 500  # entrants read (and parsed) at once: a push's reads leave turns between


class Shown(NamedTuple):
    """What the last push gave every connection in step with it."""

    v: int
    rows: dict[str, dict[str, Any]]  # the first rows by player, without their rank
    arena: dict[str, Any]  # the arena's public state
    top_race: str | None  # (these two, ``shown[2:]``: what it shows besides the rows)


@dataclass(frozen=True, slots=True)
class Read:
    """One read of a table: its version, its first rows (ranked, with their keys), the
    entrants read (of those rows and of the players asked about), and for the players
    asked about who are outside the first rows, the rows around their place."""

    v: int
    rows: list[dict[str, Any]]
    entrants: dict[str, Entrant]
    near: dict[str, list[dict[str, Any]]]
    first: frozenset[str]


class ArenaTables:
    def __init__(self, config: Config, store: Store, fanout: Fanout, clock: Clock) -> None:
        self.store = store
        self.fanout = fanout
        self.clock = clock
        self.top = config.arena_table_rows  # the table's rows sent
        self.watchers: dict[str, set[Conn]] = {}  # arena -> its table's connections here
        self.arenas: dict[str, A.Arena] = {}
        self._seen: dict[str, tuple[int, str, bool]] = {}  # (version, phase, pairing) pushed
        self._shown: dict[str, Shown] = {}
        self._near: dict[str, tuple[int, int]] = {}  # (when, version) places last read

    async def public(self, arena: A.Arena, now: int) -> dict[str, Any]:
        """The arena as listed: its definition, ``phase``, whether races are paired now
        (``pairing``), and ``final`` once it has ended and its last race is counted."""
        over = arena.phase(now) == A.OVER
        return {
            **arena.to_dict(),
            "phase": arena.phase(now),
            "pairing": arena.pairing_open(now),
            "final": over and not await self.store.arenas.running(arena.id),
        }

    # ---- who gets the table ----------------------------------------------------------
    async def watch(self, conn: Conn, arena: A.Arena, paused: bool = False) -> None:
        """``conn`` gets the arena's table from now on (instead of another's), the whole
        of it at once (``paused``: its player has just paused, whatever is stored)."""
        if conn.table != arena.id:
            self.unwatch(conn)
        self.watchers.setdefault(arena.id, set()).add(conn)
        self.arenas[arena.id] = arena
        conn.table = arena.id
        try:
            await self.send(arena, conn, paused)
        except BaseException:
            self.unwatch(conn)  # (a refusal changes nothing)
            raise

    def unwatch(self, conn: Conn) -> None:
        arena_id, conn.table, conn.table_rows, conn.table_you = conn.table, None, None, None
        watching = self.watchers.get(arena_id or "")
        if arena_id is None or watching is None:
            return
        watching.discard(conn)
        if not watching:
            for kept in (self.watchers, self.arenas, self._seen, self._shown, self._near):
                kept.pop(arena_id, None)

    async def send(self, arena: A.Arena, conn: Conn, paused: bool = False) -> None:
        """The whole table to ``conn`` now, with its player's own line (their place, when
        they are outside the first rows, comes with the next push). The rows it holds are
        its own until the next push brings it in step (``push``). Two reads: what a
        thousand players joining at once wait for."""
        who = seat_owner(conn)[0]
        read = await self.read(arena.id, [who] if who else [])
        now = self.clock.now_ms()
        public = await self.public(arena, now)
        top = top_race(read.rows)
        rows = row_changes(None, read.rows, "player").rows
        conn.table_rows, conn.table_v = rows, read.v
        if conn.table == arena.id and arena.id not in self._shown:  # the first here
            self._shown[arena.id] = Shown(read.v, rows, public, top)
        mine = read.entrants.get(who)
        you = _you(mine, paused) if mine else None
        conn.send(
            encode(
                {
                    "type": "arena",
                    "arena": public,
                    "v": read.v,
                    "table": read.rows,
                    "top_race": top,
                    "you": you,
                    "server_time": now,
                }
            )
        )
        conn.table_you = (you, None if mine and who not in read.first else [])

    # ---- pushing -----------------------------------------------------------------------
    async def run(self) -> None:
        """Every ``PUSH_EVERY_S``: each watched arena's table pushed when it changed."""
        while True:
            await asyncio.sleep(PUSH_EVERY_S)
            for arena_id in list(self.watchers):
                try:
                    await self.push(arena_id)
                except asyncio.CancelledError:
                    raise
                except Exception:
                    log.exception("arena table push failed", arena=arena_id)

    async def push(self, arena_id: str) -> None:
        """The table's changes since the last push, one frame for every connection that
        holds the rows pushed last, one of its own for each that holds others (its whole
        table came since); each player's own line when it changed, their place at most
        every ``NEAR_EVERY_MS``."""
        arena, conns = self.arenas.get(arena_id), list(self.watchers.get(arena_id, ()))
        if arena is None or not conns:
            return
        now = self.clock.now_ms()
        version = await self.store.arenas.version(arena_id)
        seen = (version, arena.phase(now), arena.pairing_open(now))
        near_at, near_v = self._near.get(arena_id, (0, -1))
        near = now - near_at >= NEAR_EVERY_MS and near_v != version
        near = near or any(c.table_you and c.table_you[1] is None for c in conns)  # new here
        last = self._shown.get(arena_id)
        in_step = [c for c in conns if last is not None and c.table_rows is last.rows]
        if self._seen.get(arena_id) == seen and not near and len(in_step) == len(conns):
            return
        self._seen[arena_id] = seen
        players = sorted({who for c in conns if (who := seat_owner(c)[0])})
        read = await self.read(arena_id, players, near=near)
        if near:
            self._near[arena_id] = (now, read.v)
        public = await self.public(arena, now)
        top = top_race(read.rows)
        changes = row_changes(last.rows if last else None, read.rows, "player")
        shown = last
        if shown is None or changes.changed or changes.gone or (public, top) != shown[2:]:
            shown = self._shown[arena_id] = Shown(read.v, changes.rows, public, top)
        in_step = [c for c in conns if last is not None and c.table_rows is last.rows]
        if last is not None and shown is not last and in_step:  # (no await since: in step)
            frame = _changes(arena_id, last.v, shown, changes, now)
            self.fanout.push([c.ws for c in in_step], encode(frame), batched=True)
            for c in in_step:
                c.table_rows, c.table_v = shown.rows, shown.v
        for i, conn in enumerate(conns):
            if i and not i % YIELD_EVERY:
                await asyncio.sleep(0)  # the acks due meanwhile go first
            if conn.table != arena_id:
                continue  # gone meanwhile
            if conn.table_rows is not shown.rows and conn.table_rows is not None:
                own = row_changes(conn.table_rows, read.rows, "player", changes.rows)
                frame = _changes(arena_id, conn.table_v, shown, own, now)
                self.fanout.push([conn.ws], encode(frame), batched=True)
                conn.table_rows, conn.table_v = shown.rows, shown.v
            self._you(conn, arena_id, read)

    def _you(self, conn: Conn, arena_id: str, read: Read) -> None:
        """The player's own line and place (``arena_you``) to ``conn`` when they changed
        since the last sent; their place as last read when it was not read now."""
        who = seat_owner(conn)[0]
        mine = read.entrants.get(who)
        you = _you(mine) if mine else None
        sent: tuple[Any, list[dict[str, Any]] | None] = conn.table_you or (None, [])
        near = sent[1] or []  # (None: not read yet; it is now, unless the player is gone)
        if mine is None or who in read.first:
            near = []
        elif who in read.near:
            near = read.near[who]
        if (you, near) != (sent[0], sent[1] or []):
            self.fanout.push([conn.ws], encode(_you_message(arena_id, you, near)), batched=True)
        conn.table_you = (you, near)

    # ---- reading -----------------------------------------------------------------------
    async def read(self, arena_id: str, players: Sequence[str], near: bool = False) -> Read:
        """The table's version and first rows, and the entrants of those rows and of
        ``players``; with ``near``, the rows around the place of each of ``players``
        outside the first rows (the whole order is read)."""
        for _ in range(3):  # until the rows' entrants are the order's (no count between)
            version, order = await self.store.arenas.table(arena_id, None if near else self.top)
            ranked = ranking.ranks(order)
            first = ranked[: self.top]
            spans: dict[str, list[tuple[str, int, int]]] = {}
            if near:
                at = {w: i for i, (w, _, _) in enumerate(ranked)}
                for who in players:
                    i = at.get(who, -1)
                    if i >= self.top:
                        spans[who] = ranked[max(0, i - REACH) : i + REACH + 1]
            shown = {w for w, _, _ in first} | {w for s in spans.values() for w, _, _ in s}
            entrants = await self._entrants(arena_id, sorted(shown))
            # (the order and the entrants are read in round trips of their own: a race
            # counted between them would show a row's new points at its old place)
            if await self.store.arenas.version(arena_id) == version:
                break
        entrants.update(await self._entrants(arena_id, sorted(set(players) - shown)))

        made: dict[str, dict[str, Any]] = {}  # each row made once (the spans overlap)

        def rows(span: list[tuple[str, int, int]]) -> list[dict[str, Any]]:
            out = []
            for w, rank, key in span:
                row = made.get(w)
                if row is None and w in entrants:
                    row = made[w] = _row(entrants[w], rank, key)
                if row is not None:
                    out.append(row)
            return out

        near_rows = {who: rows(span) for who, span in spans.items()}
        return Read(version, rows(first), entrants, near_rows, frozenset(w for w, _, _ in first))

    async def _entrants(self, arena_id: str, asked: list[str]) -> dict[str, Entrant]:
        """The entrants of ``asked``, ``READ_EVERY`` at a time."""
        entrants: dict[str, Entrant] = {}
        for i in range(0, len(asked), READ_EVERY):
            found = await self.store.arenas.entrants(arena_id, asked[i : i + READ_EVERY])
            entrants.update((e.who, e) for e in found)
        return entrants


def top_race(rows: list[dict[str, Any]]) -> str | None:
    """The race of the best placed player racing among ``rows`` (the arena's TV)."""
    return next((r["racing"] for r in rows if r["racing"]), None)


def _row(e: Entrant, rank: int, key: int) -> dict[str, Any]:
    s = e.standing
    return {
        "player": e.who,
        "name": e.name,
        "guest": e.guest,
        "rank": rank,
        "points": s.points,
        "races": s.races,
        "wins": s.wins,
        "streak": s.streak,
        "fire": s.on_fire,
        "performance": s.performance,
        "racing": e.race,
        "paused": e.paused,
        "flags": list(e.flags),
        "key": key,
    }


def _you(e: Entrant, paused: bool = False) -> dict[str, Any]:
    return {
        "player": e.who,
        "points": e.standing.points,
        "streak": e.standing.streak,
        "fire": e.standing.on_fire,
        "sprints": e.standing.sprints,
        "racing": e.race,
        "paused": paused or e.paused,
        "waiting": e.waiting_since is not None,
    }


def _changes(
    arena_id: str, base: int, shown: Shown, changes: RowChanges, now: int
) -> out.ArenaChanges:
    """The rows changed and gone since those of version ``base``, to those of ``shown``,
    with where the arena is at."""
    return {
        "type": "arena_changes",
        "arena": arena_id,
        "v": shown.v,
        "base": base,
        "changed": changes.changed,
        "gone": changes.gone,
        "top_race": shown.top_race,
        "phase": shown.arena["phase"],
        "pairing": shown.arena["pairing"],
        "final": shown.arena["final"],
        "server_time": now,
    }


def _you_message(arena_id: str, you: Any, near: list[dict[str, Any]]) -> out.ArenaYou:
    return {"type": "arena_you", "arena": arena_id, "you": you, "rows": near}
