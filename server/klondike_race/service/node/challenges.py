"""Challenges on a node: the list, each player's one attempt per deal (a room of one seat
that starts when the deal is first shown), practice of a deal once allowed, the live
leaderboards (leaderboards.py), who may spectate an attempt, deal preparation.

Every deal is prepared once, by whichever node takes its preparation lock first (the
lock expires if that node dies, and another one takes over): the first HMAC candidate
the solver proves winnable. Today's and tomorrow's dailies are prepared ahead.
"""

from __future__ import annotations

import asyncio
import json
import time
from dataclasses import replace
from datetime import date
from pathlib import Path
from typing import Any
from urllib.parse import parse_qs, unquote

import structlog

from ..clock import Clock
from ..config import Config
from ..domain import challenge as ch
from ..domain import ranking
from ..domain.challenge import CLOSED, OPEN, Challenge
from ..domain.errors import RateLimited, ServiceError
from ..domain.options import RoomOptions
from ..domain.players import ACCOUNT
from ..domain.progress import initial_progress
from ..domain.room import commitment
from ..fanout import Fanout
from ..store import Store
from ..wire import AttemptRequest, ChallengesRequest, Join, encode
from .conn import Addresses, Conn, keyed, seat_name, seat_owner
from .leaderboards import TOP, Leaderboards, ranked_rows
from .lobby import Lobby
from .rooms import RoomOps, SeatToken
from .solving import Solving

log = structlog.get_logger("klondike_race.challenges")

ARCHIVE_ROWS = 10_000  # rows of a closed challenge's leaderboard over HTTP
OVERALL_CACHE_S = 1.0  # a multi-deal challenge's overall ranking, reused this long


class Challenges:
    def __init__(
        self,
        config: Config,
        store: Store,
        rooms: RoomOps,
        lobby: Lobby,
        solving: Solving,
        fanout: Fanout,
        clock: Clock,
        addresses: Addresses,
    ) -> None:
        self.clock = clock
        self.addresses = addresses
        self.config = config
        self.store = store
        self.rooms = rooms
        self.lobby = lobby
        self.solving = solving
        self.fanout = fanout
        self.draws = config.daily_variants
        self.scheduled = load_scheduled(config.challenges_file, config.challenge_time_limit_s)
        self.leaderboards = Leaderboards(config, store, fanout, self.find, self.ranks, clock)
        self._ranks: dict[str, str] = {}  # challenge -> who it ranks, once fixed
        # challenge -> its attempts' time limit, opening and close, fixed (``settled``)
        self._fixed: dict[str, tuple[int, int, int]] = {}
        # challenge -> (monotonic time, board versions, overall rows) of the last reading
        self._overall: dict[str, tuple[float, tuple[int, ...], list[dict[str, Any]]]] = {}

    # ---- which challenges there are -----------------------------------------------------
    async def known(self, now: int) -> list[Challenge]:
        """Yesterday's, today's and tomorrow's dailies and the scheduled challenges."""
        today, tomorrow = ch.days_around(now)
        days = [today - (tomorrow - today), today, tomorrow]
        limit = self.config.challenge_time_limit_s
        found = [c for day in days for c in ch.dailies(day, self.draws, limit)]
        return [await self.settled(c) for c in found + list(self.scheduled.values())]

    async def find(self, challenge_id: str) -> Challenge:
        got = self.scheduled.get(challenge_id) or ch.parse_daily(
            challenge_id, self.draws, self.config.challenge_time_limit_s
        )
        if got is None or not self.kept(got, self.clock.now_ms()):
            raise ServiceError("no_challenge", f"no challenge {challenge_id!r}")
        return await self.settled(got)

    def _gone_at(self, c: Challenge) -> int | None:
        """When a daily's keys expire (``kept``); a scheduled challenge's are kept."""
        return c.closes + self.config.keep_daily_s * 1000 if c.daily else None

    async def settled(self, c: Challenge) -> Challenge:
        """``c`` with its attempts' time limit, and a scheduled one's opening and close,
        as fixed for good by the first node that asked (``KR_CHALLENGE_TIME_LIMIT_S``, or
        the schedule's, as that node was set): every node then agrees when the challenge
        opens, closes and is final and its deals open, whatever each is set to now (a
        daily's window is its day)."""
        fixed = self._fixed.get(c.id)
        if fixed is None:
            limit = await self.store.challenges.fixed(
                c.id, "time_limit", str(c.time_limit), self._gone_at(c)
            )
            window = f"{c.opens} {c.closes}"
            if not c.daily:
                window = await self.store.challenges.fixed(c.id, "window", window, None)
            opens, closes = window.split()
            fixed = self._fixed[c.id] = (int(limit), int(opens), int(closes))
        if fixed == (c.time_limit, c.opens, c.closes):
            return c
        return replace(c, time_limit=fixed[0], opens=fixed[1], closes=fixed[2])

    def kept(self, c: Challenge, now: int) -> bool:
        """A daily exists from the day before it opens (nodes prepare tomorrow's) until
        ``keep_daily_s`` after it closes (its attempts' keys expire then): any other
        day's is no challenge, so no one makes the server prepare its deal."""
        if not c.daily:
            return True
        return c.opens <= now + ch.DAY_MS and now <= c.closes + self.config.keep_daily_s * 1000

    async def ranks(self, c: Challenge, now: int | None = None) -> str:
        """Who ``c``'s leaderboards rank (``ch.EVERYONE`` or ``ch.ACCOUNTS``): fixed for
        good by the first node that reads it once the challenge has opened, as that node
        is set (``KR_CHALLENGE_RANKING``); before, as this node is set."""
        if c.phase(self.clock.now_ms() if now is None else now) == ch.UPCOMING:
            return self.config.challenge_ranking
        got = self._ranks.get(c.id)
        if got is None:
            got = self._ranks[c.id] = await self.store.challenges.fixed(
                c.id, "ranking", self.config.challenge_ranking, self._gone_at(c)
            )
        return got

    async def secret(self) -> bytes:
        return await self.addresses.secret()

    # ---- deals --------------------------------------------------------------------------
    async def deal(self, c: Challenge, index: int, wait: bool = True) -> dict[str, Any] | None:
        """The prepared deal ``index`` of ``c`` (preparing it here if no node is);
        without ``wait``, None while another node prepares it."""
        settings = c.deal(index)
        budget = self.config.solver_challenge_s
        tries = self.config.solver_challenge_tries
        lock_ms = int((budget * tries + 30) * 1000)
        while True:
            got = await self.store.challenges.deal(c.id, index)
            if got is not None:
                return got
            if await self.store.challenges.preparing(c.id, index, lock_ms):
                made = await self._certify(c, index, settings.to_dict(), budget, tries)
                await self.store.challenges.store_deal(c.id, index, made)
                log.info(
                    "challenge deal prepared",
                    challenge=c.id,
                    deal=index,
                    candidate=made["candidate"],
                )
                continue  # read back what was stored (the first one stored counts)
            if not wait:
                return None
            await asyncio.sleep(0.2)

    async def _certify(
        self, c: Challenge, index: int, settings: dict[str, Any], budget: float, tries: int
    ) -> dict[str, Any]:
        secret = await self.secret()
        salt = ch.salt(secret, c.id, index)
        for candidate in range(tries):
            seed = ch.seed(secret, c.id, index, candidate)
            out = await self.solving.solve_deal({"seed": seed}, settings, budget)
            if out is not None and out["result"] == "win":
                par = len(out["line"])
                return {
                    "seed": seed,
                    "salt": salt,
                    "candidate": candidate,
                    "par": par,
                    "commitment": commitment(salt, f"v1:{seed}"),
                }
        # nothing proven within the tries: the last candidate, marked uncertified
        seed = ch.seed(secret, c.id, index, tries)
        log.warning("challenge deal not certified", challenge=c.id, deal=index)
        return {
            "seed": seed,
            "salt": salt,
            "candidate": tries,
            "par": None,
            "commitment": commitment(salt, f"v1:{seed}"),
        }

    async def prepare_ahead(self) -> None:
        """Today's and tomorrow's dailies (and scheduled challenges not closed): each deal
        prepared by exactly one node, the others moving on."""
        now = self.clock.now_ms()
        for c in await self.known(now):
            if c.phase(now) == CLOSED:
                continue
            for index in range(len(c.deals)):
                await self.deal(c, index, wait=False)

    # ---- the list -----------------------------------------------------------------------
    async def send_list(self, conn: Conn, m: ChallengesRequest) -> None:
        now = self.clock.now_ms()
        out = [await self.describe(c, now, conn) for c in await self.known(now)]
        conn.send(encode({"type": "challenges", "server_time": now, "challenges": out}))

    async def describe(self, c: Challenge, now: int, conn: Conn | None = None) -> dict[str, Any]:
        """A challenge's public form: each deal's commitment once open, its players, and
        for ``conn``'s player their attempt (room code, status, place)."""
        out = c.public(now)
        phase = c.phase(now)
        who = conn.identity.key if conn is not None and conn.identity else ""
        out["ranks"] = ranks = await self.ranks(c, now)
        for d in out["deals"]:
            index = d["index"]
            deal = await self.store.challenges.deal(c.id, index) if phase != ch.UPCOMING else None
            d["commitment"] = deal["commitment"] if deal else None
            d["par"] = deal["par"] if deal and c.revealed(now) else None
            d["reveal"] = None
            if deal and c.revealed(now):
                d["reveal"] = {
                    "seed": deal["seed"],
                    "salt": deal["salt"],
                    "deal": f"v1:{deal['seed']}",
                }
            _, players, _ = await self.store.challenges.top(c.id, index, 0)
            d["players"] = players
            d["guests"] = 0
            if ranks == ch.ACCOUNTS:
                d["guests"] = (await self.store.challenges.top(c.id, index, 0, True))[1]
            if who:
                d["you"] = await self._your(c, index, who, ch.apart(ranks, who))
        if c.ranking != "single" and conn is not None:
            out["you"] = None
            if who and phase != ch.UPCOMING:
                rows = await self.overall(c)
                mine = next((r for r in rows if r["who"] == who), None)
                if mine is not None:
                    out["you"] = {
                        "rank": mine["rank"],
                        "total": mine["total"],
                        "deals": mine["deals"],
                        "players": len(rows),
                    }
        return out

    async def overall(self, c: Challenge) -> list[dict[str, Any]]:
        """The overall ranking of a multi-deal challenge, computed from every row of its
        deals' boards (O(players) per reading), reused while no board changed or for
        ``OVERALL_CACHE_S``."""
        versions = await self.store.challenges.versions(c.id, len(c.deals))
        cached = self._overall.get(c.id)
        at = time.monotonic()
        if cached is not None and (cached[1] == versions or at - cached[0] < OVERALL_CACHE_S):
            return cached[2]
        boards = [await self.store.challenges.every(c.id, i) for i in range(len(c.deals))]
        rows = ch.overall(c.ranking, boards)
        self._overall[c.id] = (at, versions, rows)
        return rows

    async def _your(
        self, c: Challenge, index: int, who: str, guests: bool
    ) -> dict[str, Any] | None:
        code = await self.store.challenges.attempt(c.id, index, who)
        if code is None:
            return None
        around = await self.store.challenges.around(c.id, index, [who], 0, guests)
        _, rank, rows = around.get(who, (None, None, []))
        row = rows[0][2] if rows else None
        return {
            "code": code,
            "status": row["status"] if row else None,
            "rank": rank,
            "foundation": row["foundation"] if row else None,
            "guests": guests,
        }

    # ---- HTTP ---------------------------------------------------------------------------
    async def http(self, rest: str, query: str) -> tuple[int, dict[str, Any]]:
        """``/api/challenges`` (``?day=YYYY-MM-DD``: that day's dailies, the archive) and
        ``/api/challenges/ID`` (with each deal's leaderboard: the top 100, every row
        once the challenge has closed, up to ``ARCHIVE_ROWS``)."""
        now = self.clock.now_ms()
        if rest in ("", "/"):
            params = parse_qs(query, keep_blank_values=True)
            if set(params) - {"day"} or len(params.get("day", [""])) != 1:
                return 400, _bad("the only parameter is day=YYYY-MM-DD")
            if "day" in params:
                asked = params["day"][0]
                try:
                    day = date.fromisoformat(asked)
                except ValueError:
                    day = None
                if day is None or day.isoformat() != asked:  # (not 20261202, 2026-W49-3)
                    return 400, _bad("day is YYYY-MM-DD")
                found = [
                    await self.settled(c)
                    for c in ch.dailies(day, self.draws, self.config.challenge_time_limit_s)
                    if self.kept(c, now)
                ]
            else:
                found = await self.known(now)
            return 200, {
                "server_time": now,
                "challenges": [await self.describe(c, now) for c in found],
            }
        if not rest.startswith("/") or query:
            return 400, _bad("/api/challenges or /api/challenges/ID")
        try:
            c = await self.find(unquote(rest[1:], errors="strict"))
        except (ServiceError, UnicodeDecodeError):
            return 404, {"error": "no_challenge", "message": "no such challenge"}
        out = await self.describe(c, now)
        closed = c.phase(now) == CLOSED
        for d in out["deals"]:
            for field, guests in (("rows", False), ("guest_rows", True)):
                if guests and out["ranks"] != ch.ACCOUNTS:
                    d[field] = []
                    continue
                if closed:
                    rows = (await self.store.challenges.every(c.id, d["index"], guests))[
                        :ARCHIVE_ROWS
                    ]
                else:
                    rows = (await self.store.challenges.top(c.id, d["index"], TOP, guests))[2]
                d[field] = ranked_rows(rows)
                for r in d[field]:
                    r["replay"] = f"/replay/{r['code']}" if c.revealed(now) else None
        out["overall"] = None
        if c.ranking != "single":
            rows = await self.overall(c)
            out["overall_players"] = len(rows)
            out["overall"] = rows[: ARCHIVE_ROWS if closed else TOP]
        out["server_time"] = now
        return 200, out

    # ---- attempts -----------------------------------------------------------------------
    async def attempt(self, conn: Conn, m: AttemptRequest) -> None:
        """A player's one ranked attempt at a deal: made on first asking, while the
        challenge is open; the same room afterwards, from any device of theirs. With
        ``practice``: an unranked practice room on the deal, once the challenge is final
        (``not_yet`` before: docs/rules.md)."""
        c = await self.find(m.challenge)
        c.deal(m.deal)
        who, guest = seat_owner(conn)
        if not who:
            raise ServiceError("hello_first", "say hello (a device identity) before a challenge")
        now = self.clock.now_ms()
        code = await self.store.challenges.attempt(c.id, m.deal, who)
        as_guest = None if code is not None else await self._guest_attempt(c, m.deal, who)
        if m.practice:
            await self._practice(conn, c, m.deal, now, m.name)
            return
        if as_guest is not None:
            raise ServiceError(
                "attempt_made", "you played this deal as a guest before claiming your name"
            )
        if code is None:
            if c.phase(now) != OPEN:
                raise ServiceError(
                    "challenge_not_open", f"{c.id} is {c.phase(now)}: no attempt starts now"
                )
            code = await self._new_attempt(conn, c, m.deal, who, guest, m.name)
        await self.lobby.join(conn, Join(code, m.name))

    async def _guest_attempt(self, c: Challenge, index: int, who: str) -> str | None:
        """The attempt an account made at the deal as the guest it was claimed from."""
        if not who.startswith(ACCOUNT):
            return None
        before = await self.store.accounts.guest_of(who.removeprefix(ACCOUNT))
        return await self.store.challenges.attempt(c.id, index, before) if before else None

    async def _new_attempt(
        self, conn: Conn, c: Challenge, index: int, who: str, guest: bool, typed: str
    ) -> str:
        deal = await self.deal(c, index)
        assert deal is not None
        address, mark = await self._address(conn, who)
        limit = self.config.attempts_per_address
        count = await self.store.challenges.count_address(
            c.id, index, address, mark, limit, c.closes + ch.DAY_MS
        )
        if count < 0:  # (a second identity costs nothing: docs/rules.md, "Fair play")
            raise RateLimited(
                f"{-count} attempts at this deal came from your address already: at most "
                f"{limit} from one address, each deal of a challenge",
                None,
            )
        options = RoomOptions(
            settings=c.deal(index), capacity=1, private=True, time_limit=c.time_limit
        )
        name = seat_name(conn, typed)
        flags = (ch.ADDRESS,) if count > 1 else ()
        apart = ch.apart(await self.ranks(c), who)  # on the guests' list, unranked
        room, pid, _ = await self.rooms.create_seated(
            name,
            options,
            {"seed": deal["seed"]},
            who=who,
            guest=guest,
            session=conn.session,
            salt=deal["salt"],
            challenge=f"{c.id}/{index}",
            reveal_at=c.final_at(),
            flags=flags,
            apart=apart,
        )
        start = initial_progress(options.settings.scoring)
        row = ch.row(room.code, name, guest, start, flags)
        key = ranking.rank_key(start, "progress", 0)
        code = await self.store.challenges.claim_attempt(
            c.id, index, who, room.code, row, key, apart
        )
        if code != room.code:  # another device of theirs came first: theirs is the one
            # (the player stays counted once at this address, as they asked from it)
            await self.rooms.finish(room.code, "abandoned")
        else:
            log.info(
                "challenge attempt", challenge=c.id, deal=index, room=code, player=pid, flags=flags
            )
        return code

    async def _address(self, conn: Conn, who: str) -> tuple[str, str]:
        """The connection's client address as the store keeps it, a keyed hash, and
        player ``who``'s mark at it (a keyed hash of both: the store holds neither)."""
        secret = await self.secret()
        mark = f"address:{conn.address}/player:{who}"
        return await self.addresses.of(conn), keyed(secret, mark)

    async def _practice(self, conn: Conn, c: Challenge, index: int, now: int, typed: str) -> None:
        if c.phase(now) == ch.UPCOMING:
            raise ServiceError("challenge_not_open", f"{c.id} has not opened: nothing to practise")
        sealed = ch.sealed(ch.PRACTICE, c.final_at(), now)  # hints, finish it for me
        if sealed is not None:
            raise sealed
        if c.phase(now) == CLOSED:  # (as its archive shows it: not dealt afterwards)
            deal = await self.store.challenges.deal(c.id, index)
            if deal is None:
                raise ServiceError("no_deal", f"{c.id} was never dealt: nobody played it")
        else:
            deal = await self.deal(c, index)
        assert deal is not None
        options = RoomOptions(settings=c.deal(index), practice=True)
        room, pid, secret = await self.lobby.new_room(
            seat_name(conn, typed),
            options,
            {"seed": deal["seed"]},
            conn,
            reveal_at=c.final_at(),
            deal_of=f"{c.id}/{index}",
        )
        await self.lobby.enter(conn, room, pid, SeatToken(room.code, pid, secret))

    async def may_watch(self, conn: Conn, code: str) -> None:
        """Watching a game on a challenge's deal (an attempt, or a practice game,
        continuation or ghost race on its deal): ``challenge.sealed`` decides, knowing
        whether it is ``conn``'s player's own attempt (by their identity, or the guest
        they claimed their name from)."""
        loaded = await self.store.rooms.load(code)
        # an attempt, or a practice game, practice continuation or ghost on its deal
        attempt = (loaded[0].get("challenge") or loaded[0].get("deal_of")) if loaded else None
        if not attempt:
            return
        challenge_id, _, index = attempt.rpartition("/")
        c = await self.find(challenge_id)
        now = self.clock.now_ms()
        mine = None
        who = conn.identity.key if conn.identity else ""
        if who and not c.revealed(now):
            mine = await self.store.challenges.attempt(c.id, int(index), who)
            if mine is None:
                mine = await self._guest_attempt(c, int(index), who)
        sealed = ch.sealed(ch.WATCH, c.final_at(), now, own=mine == code)
        if sealed is not None:
            raise sealed


def _bad(message: str) -> dict[str, Any]:
    return {"error": "bad_request", "message": message}


def load_scheduled(path: str | None, time_limit: int) -> dict[str, Challenge]:
    """The operator's challenges (``KR_CHALLENGES_FILE``: a JSON list), by id; a file
    that cannot be read or an entry that cannot be one raises ValueError saying which."""
    if not path:
        return {}
    try:
        entries = json.loads(Path(path).read_text())
    except OSError as err:
        raise ValueError(f"cannot read it: {err.strerror or err}") from None
    except json.JSONDecodeError as err:
        raise ValueError(f"not JSON: {err}") from None
    if not isinstance(entries, list):
        raise ValueError("a JSON list of challenges")
    found = []
    for i, entry in enumerate(entries, 1):
        try:
            if not isinstance(entry, dict):
                raise ValueError("a JSON object")
            found.append(ch.scheduled(entry, time_limit))
        except KeyError as err:
            raise ValueError(f"entry {i}: no {err.args[0]!r}") from None
        except (ValueError, TypeError) as err:  # EngineError (bad settings) is a ValueError
            raise ValueError(f"entry {i}: {err}") from None
    return {c.id: c for c in found}
