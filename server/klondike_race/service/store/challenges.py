"""Challenges: the server's secret, each challenge deal once prepared (by one node), the
one attempt of each player per deal, and each deal's leaderboard.

``ch:{ID}:{N}:board`` (zset, player key -> the exact composite of domain/ranking.py,
smaller is better) and ``ch:{ID}:{N}:rows`` (hash, player key -> the row JSON) are
written by the move script itself (scripts.py, APPEND_MOVES) in the step that stores
each move of an attempt, so the board never disagrees with the logs.
"""

from __future__ import annotations

import secrets
from typing import Any

import orjson

from .base import Part
from .keys import player_key
from .scripts import COUNT_ADDRESS, REMOVE_ROW, SET_ROW


def board_key(challenge: str, index: int, tagged: bool = False, guests: bool = False) -> str:
    """``ch:ID:N``; on a cluster (``tagged``) ``ch:{ID}:N``: a challenge's keys, every
    deal's, share a slot (its scripts touch several; its boards' versions are read in one
    ``MGET``). ``guests``: the leaderboard of the guests listed apart where a challenge
    ranks accounts only, ``ch:ID:N:guests`` (its ``:board``, ``:rows``, ``:ver``)."""
    base = f"ch:{{{challenge}}}:{index}" if tagged else f"ch:{challenge}:{index}"
    return base + ":guests" if guests else base


class Challenges(Part):
    def __init__(self, *args: Any) -> None:
        super().__init__(*args)
        self._remove = self._script(REMOVE_ROW)
        self._set_row = self._script(SET_ROW)
        self._count_address = self._script(COUNT_ADDRESS)

    async def secret(self) -> bytes:
        """The secret the challenge seeds derive from: ``KR_CHALLENGE_SECRET``, or one
        made by the first node that needed it and shared through Redis."""
        made = secrets.token_hex(32)
        await self._timed(self.redis.set("ch:secret", made, nx=True))
        got: Any = await self._timed(self.redis.get("ch:secret"))
        return bytes(got)

    def board(self, challenge: str, index: int, guests: bool = False) -> str:
        return board_key(challenge, index, self.cluster, guests)

    async def fixed(
        self, challenge: str, name: str, setting: str, expire_at: int | None = None
    ) -> str:
        """A setting of the challenge fixed for good by the first node that asks
        (``setting``: this node's): ``ranking`` (who its leaderboards rank),
        ``time_limit`` (an attempt's seconds, which say when it is final) and a scheduled
        challenge's ``window`` (its opening and close, epoch ms). ``expire_at``
        (epoch ms): when the key goes, with the challenge's other keys (None: kept)."""
        key = f"ch:{{{challenge}}}:{name}" if self.cluster else f"ch:{challenge}:{name}"
        async with self.redis.pipeline(transaction=False) as pipe:
            pipe.set(key, setting, nx=True, pxat=expire_at)
            pipe.get(key)
            _, got = await self._replicated(pipe)
        return str(got.decode())

    def _board_keys(self, base: str) -> list[str]:
        """The keys REMOVE_ROW and SET_ROW touch (one slot: the challenge's)."""
        return [f"{base}:{part}" for part in ("board", "rows", "ver", "out", "removed")]

    # ---- deals --------------------------------------------------------------------------
    async def deal(self, challenge: str, index: int) -> dict[str, Any] | None:
        """A prepared deal: ``seed``, ``salt``, ``commitment``, ``candidate``."""
        raw: Any = await self._timed(self.redis.get(f"{self.board(challenge, index)}:deal"))
        return orjson.loads(raw) if raw else None

    async def preparing(self, challenge: str, index: int, ms: int) -> bool:
        """True when this node is now the one preparing the deal (for ``ms``; another
        node takes over if it dies before storing it)."""
        key = f"{self.board(challenge, index)}:prep"
        return bool(await self._timed(self.redis.set(key, self.node, nx=True, px=ms)))

    async def store_deal(self, challenge: str, index: int, deal: dict[str, Any]) -> None:
        key = f"{self.board(challenge, index)}:deal"
        async with self.redis.pipeline(transaction=False) as pipe:
            pipe.set(key, orjson.dumps(deal), nx=True)
            await self._replicated(pipe)

    # ---- attempts -----------------------------------------------------------------------
    async def attempt(self, challenge: str, index: int, who: str) -> str | None:
        """The room code of ``who``'s attempt at a deal, if they made one."""
        raw: Any = await self._timed(self.redis.hget(f"{self.board(challenge, index)}:att", who))
        return raw.decode() if raw else None

    async def count_address(
        self, challenge: str, index: int, address: str, mark: str, limit: int, until: int
    ) -> int:
        """Player ``mark``'s attempt at a deal from a client ``address`` (keyed hashes,
        never the address or the player): how many the address has made with it (the
        player counted once: their devices asking together count one), or minus how many
        it had made when that was ``limit`` already (nothing counted). Kept until
        ``until``."""
        key = f"{self.board(challenge, index)}:addr"
        args = [address, mark, limit, until]
        return int(await self._timed(self._count_address(keys=[key], args=args)))

    async def claim_attempt(
        self,
        challenge: str,
        index: int,
        who: str,
        code: str,
        row: dict[str, Any],
        key: int,
        guests: bool = False,
    ) -> str:
        """``who``'s one attempt is room ``code``, unless another of their devices came
        first: the attempt's room code either way. Its first row goes on the board (the
        guests' list with ``guests``)."""
        base = self.board(challenge, index)
        async with self.redis.pipeline(transaction=False) as pipe:
            pipe.hsetnx(f"{base}:att", who, code)
            pipe.hget(f"{base}:att", who)
            made, got = await self._replicated(pipe)
        if made:
            listed = self.board(challenge, index, guests)
            async with self.redis.pipeline(transaction=False) as pipe:
                pipe.zadd(f"{listed}:board", {who: key}, nx=True)
                pipe.hsetnx(f"{listed}:rows", who, orjson.dumps(row))
                pipe.incr(f"{listed}:ver")
                await self._replicated(pipe)
        return str(got.decode())

    async def set_row(
        self,
        challenge: str,
        index: int,
        who: str,
        row: dict[str, Any],
        score: int | None = None,
        guests: bool = False,
    ) -> None:
        """An attempt's row as it ended (its status; the rank does not change, unless
        ``score`` is given: on a cluster the row of the attempt's last move may have
        missed the board, its step being the board's slot's, after the move's)."""
        base = self.board(challenge, index, guests)
        args: list[Any] = [base, who, orjson.dumps(row)]
        if score is not None:
            args.append(score)
        await self._timed(self._set_row(keys=self._board_keys(base), args=args))

    # ---- leaderboards -------------------------------------------------------------------
    async def version(self, challenge: str, index: int, apart: bool = False) -> int:
        """The version of a deal's leaderboard: its board's, plus its guests' list's with
        ``apart`` (each only goes up, so their sum does, and names one state of both)."""
        lists = (False, True) if apart else (False,)
        keys = [f"{self.board(challenge, index, guests)}:ver" for guests in lists]
        raw: Any = await self._timed(self.redis.mget(keys))
        return sum(int(v or 0) for v in raw)

    async def versions(self, challenge: str, deals: int) -> tuple[int, ...]:
        """The versions of a challenge's ``deals`` boards, in one round trip."""
        keys = [f"{self.board(challenge, i)}:ver" for i in range(deals)]
        raw: Any = await self._timed(self.redis.mget(keys))
        return tuple(int(v or 0) for v in raw)

    async def top(
        self, challenge: str, index: int, count: int, guests: bool = False
    ) -> tuple[int, int, list[Any]]:
        """(version, players, the first ``count`` rows with their scores), best first."""
        base = self.board(challenge, index, guests)
        async with self.redis.pipeline(transaction=False) as pipe:
            pipe.get(f"{base}:ver")
            pipe.zcard(f"{base}:board")
            pipe.zrange(f"{base}:board", 0, count - 1, withscores=True)
            ver, players, ranked = await self._timed(pipe.execute())
        return int(ver or 0), int(players), await self._rows(base, ranked)

    async def around(
        self, challenge: str, index: int, whos: list[str], reach: int, guests: bool = False
    ) -> dict[str, tuple[int, int, list[Any]]]:
        """For each of ``whos`` on the board: (their 0-based position, the place of the
        first row shown, the rows ``reach`` above and below them). Three round trips
        whatever the number of players asked about."""
        base = self.board(challenge, index, guests)
        async with self.redis.pipeline(transaction=False) as pipe:
            for who in whos:
                pipe.zrank(f"{base}:board", who)
            positions: list[Any] = await self._timed(pipe.execute())
        found = [(w, int(at)) for w, at in zip(whos, positions, strict=True) if at is not None]
        if not found:
            return {}
        async with self.redis.pipeline(transaction=False) as pipe:
            for _, at in found:
                pipe.zrange(f"{base}:board", max(0, at - reach), at + reach, withscores=True)
            spans: list[Any] = await self._timed(pipe.execute())
        async with self.redis.pipeline(transaction=False) as pipe:
            for span in spans:
                pipe.zcount(f"{base}:board", "-inf", f"({int(span[0][1])}")
                pipe.hmget(f"{base}:rows", [w for w, _ in span])
            got: list[Any] = await self._timed(pipe.execute())
        out = {}
        for i, ((who, at), span) in enumerate(zip(found, spans, strict=True)):
            ahead, raw = got[2 * i], got[2 * i + 1]
            rows = [
                (w.decode(), int(score), orjson.loads(r))
                for (w, score), r in zip(span, raw, strict=True)
                if r is not None
            ]
            out[who] = (at, int(ahead) + 1, rows)
        return out

    async def around_many(
        self, challenge: str, index: int, whos: list[str], reach: int, guests: bool = False
    ) -> dict[str, tuple[int, int, list[Any]]]:
        """``around`` for many players at once (most of a board's): the whole order in
        one read and each row needed once, in two round trips."""
        base = self.board(challenge, index, guests)
        ranked: Any = await self._timed(self.redis.zrange(f"{base}:board", 0, -1, withscores=True))
        position = {w: i for i, (w, _) in enumerate(ranked)}
        found = [(w, position[w.encode()]) for w in whos if w.encode() in position]
        spans = {w: ranked[max(0, at - reach) : at + reach + 1] for w, at in found}
        needed = list({m for span in spans.values() for m, _ in span})
        raw: Any = await self._timed(self.redis.hmget(f"{base}:rows", needed)) if needed else []
        rows = {m: orjson.loads(r) for m, r in zip(needed, raw, strict=True) if r is not None}
        place = [1] * len(ranked)  # a row's place: 1 + the rows strictly better
        for i in range(1, len(ranked)):
            place[i] = place[i - 1] if ranked[i][1] == ranked[i - 1][1] else i + 1
        out = {}
        for who, at in found:
            span = [(m.decode(), int(score), rows[m]) for m, score in spans[who] if m in rows]
            out[who] = (at, place[max(0, at - reach)], span)
        return out

    async def every(self, challenge: str, index: int, guests: bool = False) -> list[Any]:
        """Every row with its score, best first (a closed challenge's archive)."""
        base = self.board(challenge, index, guests)
        ranked: Any = await self._timed(self.redis.zrange(f"{base}:board", 0, -1, withscores=True))
        return await self._rows(base, ranked)

    async def _rows(self, base: str, ranked: list[Any]) -> list[Any]:
        if not ranked:
            return []
        raw: Any = await self._timed(self.redis.hmget(f"{base}:rows", [w for w, _ in ranked]))
        return [
            (w.decode(), int(score), orjson.loads(r))
            for (w, score), r in zip(ranked, raw, strict=True)
            if r is not None
        ]

    async def remove(
        self, challenge: str, index: int, who: str, record: dict[str, Any]
    ) -> dict[str, Any] | None:
        """Take ``who`` off a leaderboard for good (an operator's decision): the removal
        ``record`` (who, when, reason, by) with the removed ``row``, kept in
        ``ch:{ID}:{N}:removed``; None if they were not on it. Their attempt stays
        theirs: they cannot play again, and its later moves do not put it back. A guest
        listed apart is taken off the guests' list."""
        for guests in (False, True):
            base = self.board(challenge, index, guests)
            got: Any = await self._timed(
                self._remove(keys=self._board_keys(base), args=[base, who, orjson.dumps(record)])
            )
            if got:
                taken: dict[str, Any] = orjson.loads(got)
                return taken
        return None

    async def removed(self, challenge: str, index: int) -> list[dict[str, Any]]:
        """Every removal from a leaderboard (the ranked rows, then the guests' list),
        oldest first in each."""
        async with self.redis.pipeline(transaction=False) as pipe:
            for guests in (False, True):
                pipe.lrange(f"{self.board(challenge, index, guests)}:removed", 0, -1)
            lists: Any = await self._timed(pipe.execute())
        return [orjson.loads(r) for raw in lists for r in raw]

    # ---- daily results ------------------------------------------------------------------
    async def record_daily(
        self, who: str, challenge: str, result: dict[str, Any], expire_s: int | None
    ) -> bool:
        """A player's ended daily attempt (once: a second record of it changes nothing)."""
        key = player_key(who, "daily", self.cluster)
        async with self.redis.pipeline(transaction=False) as pipe:
            pipe.hsetnx(key, challenge, orjson.dumps(result))
            if expire_s:
                pipe.expire(key, expire_s)
            made = (await self._replicated(pipe))[0]
        return bool(made)

    async def dailies_of(self, who: str) -> dict[str, dict[str, Any]]:
        """challenge id -> result of each daily attempt a player ended."""
        raw: Any = await self._timed(self.redis.hgetall(player_key(who, "daily", self.cluster)))
        return {k.decode(): orjson.loads(v) for k, v in raw.items()}
