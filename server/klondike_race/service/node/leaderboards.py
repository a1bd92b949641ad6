"""The live leaderboards of challenge deals on a node: each watched board read once per
push and sent to all its watchers on this node (docs/protocol.md, "Leaderboards"): the
top rows in full once, then only the rows that changed or left; each watching player's
own place and neighbours at most every ``YOU_EVERY_MS``."""

from __future__ import annotations

import asyncio
from collections.abc import Callable
from typing import Any

import structlog

from ..clock import now_ms
from ..config import Config
from ..domain.challenge import Challenge
from ..fanout import Fanout
from ..store import Store
from ..wire import WatchBoard, encode
from .conn import Conn

log = structlog.get_logger("klondike_race.leaderboards")

TOP = 100  # rows of a pushed leaderboard
REACH = 3  # rows above and below a watching player's own
YOU_EVERY_MS = 2000  # a watching player's own rank, at most this often
MANY = 8  # players due their rank at once, as a share (1/MANY) of the board: read it whole


class Leaderboards:
    def __init__(
        self, config: Config, store: Store, fanout: Fanout, find: Callable[[str], Challenge]
    ) -> None:
        self.config = config
        self.store = store
        self.fanout = fanout
        self.find = find
        self.watchers: dict[tuple[str, int], set[Conn]] = {}
        self._seen: dict[tuple[str, int], tuple[int, bool]] = {}  # (version, final) pushed
        # the top rows last pushed to every watcher: (v, {who: row without rank}, players,
        # final)
        self._shown: dict[tuple[str, int], tuple[int, dict[str, Any], int, bool]] = {}

    async def watch(self, conn: Conn, m: WatchBoard) -> None:
        c = self.find(m.challenge)
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
        """The top rows: in full to a connection that holds none (or not the last pushed),
        else as the rows that changed or left since the last push (one frame each, for
        all)."""
        challenge_id, index = key
        c = self.find(challenge_id)
        now = now_ms()
        final = now >= c.final_at()  # becoming final changes the board with no move
        version = await self.store.challenges.version(challenge_id, index)
        if not conns or (not force and self._seen.get(key) == (version, final)):
            return
        if not force:
            self._seen[key] = (version, final)
        v, players, rows = await self.store.challenges.top(challenge_id, index, TOP)
        top = ranked_rows(rows, live=True)
        standing = {r["who"]: _unranked(r) for r in top}
        last = self._shown.get(key)
        base = last[0] if last is not None else -1
        held = [x for x in conns if last is not None and x.board_v == base]
        fresh = [x for x in conns if last is None or x.board_v != base]
        changed: list[dict[str, Any]] = []
        gone: list[str] = []
        same = False
        if last is not None:
            before = last[1]
            changed = [r for r in top if before.get(r["who"]) != standing[r["who"]]]
            gone = [w for w in before if w not in standing]
            same = not changed and not gone and (players, final) == last[2:]
        if fresh:
            frame = encode(
                "leaderboard",
                challenge=challenge_id,
                deal=index,
                v=v,
                players=players,
                final=final,
                rows=top,
            )
            self.fanout.push([x.ws for x in fresh], frame)
            for x in fresh:
                x.board_v = v
        if held and not same:
            frame = encode(
                "leaderboard_changes",
                challenge=challenge_id,
                deal=index,
                v=v,
                base=base,
                players=players,
                final=final,
                changed=changed,
                gone=gone,
            )
            self.fanout.push([x.ws for x in held], frame)
            for x in held:
                x.board_v = v
        if last is None or (not force and not same):
            self._shown[key] = (v, standing, players, final)
        shown = {w for w, _, _ in rows}
        due: dict[str, list[Conn]] = {}  # watching players outside the top, due an update
        for conn in conns:
            who = conn.identity.key if conn.identity else ""
            if who and who not in shown and (force or now - conn.board_you >= YOU_EVERY_MS):
                conn.board_you = now
                due.setdefault(who, []).append(conn)
        if due:
            read = self.store.challenges.around
            if len(due) * MANY >= players:
                read = self.store.challenges.around_many
            places = await read(c.id, index, list(due), REACH)
            for who, (at, first, near) in places.items():
                near_rows = ranked_rows(near, first, at - min(at, REACH) + 1, live=True)
                message = encode("leaderboard_you", challenge=c.id, deal=index, rows=near_rows)
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


def _unranked(row: dict[str, Any]) -> dict[str, Any]:
    """A row but its rank (which follows from the others' keys)."""
    return {k: v for k, v in row.items() if k != "rank"}
