"""The live leaderboards of challenge deals on a node: each watched board read once per
push and sent to all its watchers on this node (docs/protocol.md, "Leaderboards"): the
top rows in full once, then only the rows that changed or left; each watching player's
own place and neighbours at most every ``YOU_EVERY_MS``. Where a challenge ranks
accounts only, each frame carries the guests' list beside the ranked rows, and a guest's
own place is on it."""

from __future__ import annotations

import asyncio
from collections.abc import Awaitable, Callable, Mapping
from typing import Any, NamedTuple

import structlog

from ..clock import Clock
from ..config import Config
from ..domain.challenge import ACCOUNTS, Challenge, apart
from ..fanout import Fanout
from ..store import Store
from ..wire import WatchBoard, encode
from .conn import Conn

log = structlog.get_logger("klondike_race.leaderboards")

TOP = 100  # rows of a pushed leaderboard, and of its guests' list
REACH = 3  # rows above and below a watching player's own
YOU_EVERY_MS = 2000  # a watching player's own rank, at most this often
MANY = 8  # players due their rank at once, as a share (1/MANY) of the board: read it whole
LISTS = (False, True)  # a deal's ranked rows, then its guests' list (the guests' flag)


class Shown(NamedTuple):
    """What the last push gave every watcher of a deal's leaderboard."""

    v: int
    ranks: str
    lists: tuple[dict[str, Any], dict[str, Any]]  # each list's top rows by who, unranked
    counts: tuple[int, int]  # the players on each list
    final: bool


class Leaderboards:
    def __init__(
        self,
        config: Config,
        store: Store,
        fanout: Fanout,
        find: Callable[[str], Awaitable[Challenge]],
        ranks: Callable[[Challenge], Awaitable[str]],
        clock: Clock,
    ) -> None:
        self.clock = clock
        self.config = config
        self.store = store
        self.fanout = fanout
        self.find = find
        self.ranks = ranks
        self.watchers: dict[tuple[str, int], set[Conn]] = {}
        self._seen: dict[tuple[str, int], tuple[int, bool]] = {}  # (version, final) pushed
        self._shown: dict[tuple[str, int], Shown] = {}

    async def watch(self, conn: Conn, m: WatchBoard) -> None:
        c = await self.find(m.challenge)
        c.deal(m.deal)
        self.unwatch(conn)
        key = (c.id, m.deal)
        self.watchers.setdefault(key, set()).add(conn)
        conn.board = key
        await self._push(key, [conn], force=True)

    def unwatch(self, conn: Conn) -> None:
        if conn.board is not None:
            watching = self.watchers.get(conn.board)
            if watching is not None:
                watching.discard(conn)
                if not watching:
                    del self.watchers[conn.board]
                    self._seen.pop(conn.board, None)
                    self._shown.pop(conn.board, None)
            conn.board = None
            conn.board_v = -1

    async def run(self) -> None:
        """Push each watched leaderboard when it changed, at most every
        ``KR_BOARD_INTERVAL_MS``: one read per board per node, one frame for all."""
        while True:
            await asyncio.sleep(self.config.board_interval_ms / 1000)
            for key in list(self.watchers):
                try:
                    await self._push(key, list(self.watchers.get(key, ())))
                except asyncio.CancelledError:
                    raise
                except Exception:
                    log.exception("leaderboard push failed", challenge=key[0], deal=key[1])

    async def _push(self, key: tuple[str, int], conns: list[Conn], force: bool = False) -> None:
        """The top rows (and the guests' list's, where accounts are ranked): in full to a
        connection that holds none (or not the last pushed), else as the rows that changed
        or left since the last push (one frame each, for all)."""
        challenge_id, index = key
        c = await self.find(challenge_id)
        now = self.clock.now_ms()
        final = now >= c.final_at()  # becoming final changes the board with no move
        ranks = await self.ranks(c)
        guests = ranks == ACCOUNTS
        version = await self.store.challenges.version(challenge_id, index, guests)
        if not conns or (not force and self._seen.get(key) == (version, final)):
            return
        if not force:
            self._seen[key] = (version, final)
        top = self.store.challenges.top
        none: tuple[int, int, list[Any]] = (0, 0, [])  # (version, players, rows)
        for _ in range(3):  # until the rows read are the version's (no move between)
            read = [
                await top(challenge_id, index, TOP),
                await top(challenge_id, index, TOP, True) if guests else none,
            ]
            v = read[0][0] + read[1][0]  # as ``version``: the sum of the two lists'
            # (each list's version and rows are read in round trips of their own: a move
            # stored between them would give one version two sets of rows)
            if await self.store.challenges.version(challenge_id, index, guests) == v:
                break
        counts = (read[0][1], read[1][1])
        tops = [ranked_rows(rows, live=True) for _, _, rows in read]
        last = self._shown.get(key)
        if last is not None and last.ranks != ranks:  # fixed as the challenge opened
            last = None
        base = last.v if last is not None else -1
        held = [x for x in conns if last is not None and x.board_v == base]
        fresh = [x for x in conns if last is None or x.board_v != base]
        lists = [row_changes(last.lists[i] if last else None, tops[i], "who") for i in (0, 1)]
        standing = (lists[0].rows, lists[1].rows)
        changed = [lists[0].changed, lists[1].changed]
        gone = [lists[0].gone, lists[1].gone]
        same = (
            last is not None
            and not any(changed)
            and not any(gone)
            and (counts, final) == (last.counts, last.final)
        )
        if fresh:
            frame = encode(
                {
                    "type": "leaderboard",
                    "challenge": challenge_id,
                    "deal": index,
                    "v": v,
                    "ranks": ranks,
                    "players": counts[0],
                    "final": final,
                    "rows": tops[0],
                    "guests": counts[1],
                    "guest_rows": tops[1],
                }
            )
            self.fanout.push([x.ws for x in fresh], frame)
            for x in fresh:
                x.board_v = v
        if held and not same:
            frame = encode(
                {
                    "type": "leaderboard_changes",
                    "challenge": challenge_id,
                    "deal": index,
                    "v": v,
                    "base": base,
                    "players": counts[0],
                    "final": final,
                    "changed": changed[0],
                    "gone": gone[0],
                    "guests": counts[1],
                    "guest_changed": changed[1],
                    "guest_gone": gone[1],
                }
            )
            self.fanout.push([x.ws for x in held], frame)
            for x in held:
                x.board_v = v
        if last is None or (not force and not same):
            self._shown[key] = Shown(v, ranks, standing, counts, final)
        shown = [{w for w, _, _ in rows} for _, _, rows in read]
        await self._places(c, index, conns, ranks, shown, counts, now, force)

    async def _places(
        self,
        c: Challenge,
        index: int,
        conns: list[Conn],
        ranks: str,
        shown: list[set[str]],
        counts: tuple[int, int],
        now: int,
        force: bool,
    ) -> None:
        """Each watching player outside the ``shown`` top rows of their list (a guest's
        listed apart: the guests' list) due their own place: ``leaderboard_you``."""
        due: dict[str, list[Conn]] = {}
        for conn in conns:
            who = conn.identity.key if conn.identity else ""
            outside = who and who not in shown[apart(ranks, who)]
            if outside and (force or now - conn.board_you >= YOU_EVERY_MS):
                conn.board_you = now
                due.setdefault(who, []).append(conn)
        for guests in LISTS:
            whos = [w for w in due if apart(ranks, w) == guests]
            if not whos:
                continue
            read = self.store.challenges.around
            if len(whos) * MANY >= counts[guests]:
                read = self.store.challenges.around_many
            places = await read(c.id, index, whos, REACH, guests)
            for who, (at, first, near) in places.items():
                rows = ranked_rows(near, first, at - min(at, REACH) + 1, live=True)
                message = encode(
                    {
                        "type": "leaderboard_you",
                        "challenge": c.id,
                        "deal": index,
                        "guests": guests,
                        "rows": rows,
                    }
                )
                self.fanout.push([x.ws for x in due[who]], message)


def ranked_rows(
    rows: list[Any], first_rank: int = 1, first_position: int = 1, live: bool = False
) -> list[dict[str, Any]]:
    """Rows best first with their ``rank`` (equal composites share one) and ``who``.
    ``live`` rows (the pushed leaderboards) carry their composite ``key`` (which orders
    them) and leave out what changes with every move and does not rank (``moves``,
    ``last_ms``), so a push carries only rows whose standing changed."""
    out: list[dict[str, Any]] = []
    rank, last = first_rank, None
    for i, (who, score, row) in enumerate(rows):
        if last is not None and score != last:
            rank = first_position + i
        last = score
        shown = {"rank": rank, "who": who, **row}
        if live:
            shown["key"] = score
            shown.pop("moves", None)
            shown.pop("last_ms", None)
        out.append(shown)
    return out


class RowChanges(NamedTuple):
    """Rows as a push shows them, and what changed since the push before."""

    rows: dict[str, dict[str, Any]]  # by id, without their rank
    changed: list[dict[str, Any]]  # the rows new or changed, ranked
    gone: list[str]  # the ids of the rows no longer shown


def row_changes(
    before: Mapping[str, dict[str, Any]] | None,
    rows: list[dict[str, Any]],
    ident: str,
    after: dict[str, dict[str, Any]] | None = None,
) -> RowChanges:
    """``rows`` (ranked, each named by its ``ident`` field) against ``before`` (the
    ``rows`` of the push before; None: there was none): a row whose place changed only
    because others passed it is no change (its rank follows from the others' keys).
    ``after``: the ``rows`` of ``rows`` when they are made already."""
    if after is None:
        after = {r[ident]: {k: v for k, v in r.items() if k != "rank"} for r in rows}
    if before is None:
        return RowChanges(after, [], [])
    changed = [r for r in rows if before.get(r[ident]) != after[r[ident]]]
    return RowChanges(after, changed, [w for w in before if w not in after])
