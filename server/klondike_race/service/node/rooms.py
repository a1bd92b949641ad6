"""Room operations: every change of a room is a pure transition (domain/room.py) stored
with compare-and-set and emitted as a ``room`` event; a finished race gets its results
(final boards and progress, replayed from the logs) in the same event."""

from __future__ import annotations

import hashlib
import hmac
import secrets
from collections.abc import Callable
from dataclasses import dataclass, replace
from typing import Any

from ...engine import board_view, progress
from ..clock import Clock
from ..config import Config
from ..domain import played, ranking, rating
from ..domain import visibility as V
from ..domain.challenge import row as challenge_row
from ..domain.errors import ServiceError
from ..domain.options import RoomOptions
from ..domain.room import (
    CODE_ALPHABET,
    CODE_LENGTH,
    FINISHED,
    Room,
    add_player,
    finish,
    moved,
    start,
)
from ..store import Store
from ..store.arenas import ARENA_DUE
from ..store.played import PLAYED_DUE
from ..store.ratings import GUEST_KEEP_S
from ..store.rooms import MOVED
from ..wire import dumps, events
from .registry import Hubs

Change = Callable[[Room], Room]
RATING_GRACE_MS = 30_000  # a finished race's ratings are the sweeper's after this long


def token_hash(secret: str) -> str:
    return hashlib.sha256(secret.encode()).hexdigest()[:32]


def new_token(session: str | None = None) -> tuple[str, str]:
    """A seat's secret (given to its player once) and what the room keeps: its hash,
    and ``@`` the hash of the account session it was given under (``session``), so that
    it resumes nothing once that session has ended (``token_session``)."""
    secret = secrets.token_urlsafe(18)
    return secret, token_hash(secret) + (f"@{session}" if session else "")


def token_session(kept: str, secret: str) -> tuple[bool, str | None]:
    """Whether ``secret`` is the token ``kept`` (``new_token``) stands for, and the
    session it was given under (None: a guest's, or no one's)."""
    hashed, _, session = kept.partition("@")
    return hmac.compare_digest(hashed, token_hash(secret)), session or None


@dataclass(frozen=True, slots=True)
class SeatToken:
    """What a seat's player resumes it with: the room, the seat and the secret
    (``new_token``), as text ``CODE.SEAT.SECRET`` (docs/protocol.md)."""

    code: str
    seat: str
    secret: str

    def __str__(self) -> str:
        return f"{self.code}.{self.seat}.{self.secret}"

    @classmethod
    def parse(cls, text: str) -> SeatToken | None:
        """The token ``text`` is, or None when it is none: three parts, none empty, the
        first a room code's length (a secret has no dot)."""
        parts = text.split(".")
        if len(parts) != 3 or not all(parts) or len(parts[0]) != CODE_LENGTH:
            return None
        code, seat, secret = parts
        return cls(code, seat, secret)


def new_code() -> str:
    return "".join(secrets.choice(CODE_ALPHABET) for _ in range(CODE_LENGTH))


class RoomOps:
    """``finished`` is called with each race this node finished and the follow-up lists
    it joined (its analysis, ratings, arena points, play statistics are owed)."""

    def __init__(
        self,
        config: Config,
        store: Store,
        hubs: Hubs,
        finished: Callable[[Room, set[str]], None],
        clock: Clock,
    ) -> None:
        self.clock = clock
        self.config = config
        self.store = store
        self.hubs = hubs
        self.finished = finished

    async def load(self, code: str) -> Room:
        loaded = await self.store.rooms.load(code)
        if loaded is None:
            raise ServiceError("no_room", f"no room {code}")
        return Room.from_json(loaded[0])

    async def change(
        self, code: str, change: Change, results: bool = False, unmoved: str | None = None
    ) -> Room:
        """Load the room, apply the pure transition ``change(room) -> room``, store it with
        compare-and-set, emit the room event; retried when another node got there first.
        ``unmoved``: a player whose move log must be empty in the same step (a sprint's:
        else refused, ``moved``)."""
        for _ in range(50):
            loaded = await self.store.rooms.load(code)
            if loaded is None:
                raise ServiceError("no_room", f"no room {code}")
            room = Room.from_json(loaded[0])
            new = change(room)
            if new == room:
                return room
            v = await self.commit(code, loaded[1], new, results, unmoved)
            if v >= 0:
                return new
            if v == MOVED:
                raise moved()
        raise ServiceError("busy", "the room is busy, try again")

    async def finish(self, code: str, reason: str) -> None:
        await self.change(code, lambda r: finish(r, self.clock.now_ms(), reason), results=True)

    async def commit(
        self, code: str, rev: int, room: Room, results: bool, unmoved: str | None = None
    ) -> int:
        """Store ``room`` over revision ``rev`` and emit its event: the event version, or
        -1 when another writer came first (``MOVED``: ``unmoved`` had moved)."""
        now = self.clock.now_ms()
        body: events.Room = {"type": "room", "room": room.view(now).to_json()}
        ranks: list[tuple[str, dict[str, Any], int]] = []
        if results:
            body["results"], ranks = await self.results(room)
        raced = (
            bool(room.seats)
            and not room.parent
            and not room.challenge  # thousands of attempts a day: no analysis each
            and room.end_reason != "abandoned"
        )
        owed: list[tuple[str, int]] = []
        if results and room.status == FINISHED and raced:
            # due (to the sweeper, on any node) should this node die before making it
            grace = self.config.solver_analysis_s * (len(room.seats) + 1) + 30
            owed.append(("rooms:analysis", now + int(grace * 1000)))
            if rating.counts(room):  # statistics, history and maybe ratings
                owed.append(("rooms:rating", now + RATING_GRACE_MS))
        # its players' play statistics (node/played.py): every game counted, attempts too
        if results and played.counts(room) and any(s.who for s in room.seats):
            owed.append((PLAYED_DUE, now + RATING_GRACE_MS))
        # its points (node/arenas.py); an arena's room that is abandoned was never raced
        # (its players were paired elsewhere meanwhile: node/arenas.py, ``_race``)
        if results and room.status == FINISHED and room.arena and room.end_reason != "abandoned":
            owed.append((ARENA_DUE, now + RATING_GRACE_MS))
        v = await self.store.rooms.cas(
            code, rev, room.to_json(), room.status, dumps(body), ranks, owed, unmoved
        )
        if v <= 0:
            return v
        if rev == 0:
            await self.store.sweeping.track(code, now)
        ends_at = room.ends_at()
        if ends_at is not None and room.status != FINISHED:  # (the same score each time)
            await self.store.sweeping.deadline(code, ends_at)
        if room.status == FINISHED or room.options.private:
            await self.store.rooms.set_public(code, room.created, False)
        if (
            room.challenge
            and results
            and room.status == FINISHED
            and room.end_reason != "abandoned"  # a second device's room, never played
        ):
            await self._attempt_ended(room, body["results"]["progress"])
        if room.status == FINISHED:
            players = [s.id for s in room.seats]
            # an attempt is kept longer, for its replay; its events (resumes) are not
            keep = self.config.keep_daily_s if room.challenge else self.config.keep_finished_s
            await self.store.rooms.expire(code, players, keep, self.config.keep_finished_s)
            await self.store.sweeping.untrack(code)
        self.hubs.feed(code, v, body)
        if owed:  # once: only this compare-and-set finished the race
            self.finished(room, {name for name, _ in owed})
        return v

    async def _attempt_ended(self, room: Room, progress: dict[str, Any]) -> None:
        """An attempt's leaderboard row as it ended (its status: won, resigned, out of
        time); its place is what its moves made it."""
        assert room.challenge is not None
        challenge, _, index = room.challenge.rpartition("/")
        for seat in room.seats:
            if seat.who and seat.id in progress:
                prog = progress[seat.id]
                row = challenge_row(room.code, seat.name, seat.guest, prog, room.flags)
                # on a cluster its place too: the board is written after the move's step
                score = (
                    await self.store.rooms.rank_of(room.code, seat.id)
                    if self.store.challenges.cluster
                    else None
                )
                await self.store.challenges.set_row(
                    challenge, int(index), seat.who, row, score, room.apart
                )
                if challenge.startswith("daily-"):  # the player's daily results, streaks
                    result = {
                        "code": room.code,
                        "status": prog["status"],
                        "foundation": prog["foundation"],
                        "moves": prog["moves"],
                        "time_ms": prog["last_ms"],
                    }
                    keep = GUEST_KEEP_S if seat.guest else None
                    await self.store.challenges.record_daily(seat.who, challenge, result, keep)

    async def results(
        self, room: Room
    ) -> tuple[events.Results, list[tuple[str, dict[str, Any], int]]]:
        """Final boards and progress, replayed from the logs (out of time where it applies)."""
        boards, progs, ranks = {}, {}, []
        now = self.clock.now_ms()
        logs = await self.store.log.read_each(room.code, [seat.id for seat in room.seats])
        for seat, log in zip(room.seats, logs, strict=True):
            game = room.game_of(log, seat.id)  # a sprinter's by their own time limit
            elapsed = room.elapsed_at_end(seat.id, now, game, log)
            last_ms = game.last_ms
            prog = {**progress(game, elapsed), "last_ms": last_ms}
            progs[seat.id] = prog
            boards[seat.id] = board_view(game, elapsed)
            ranks.append((seat.id, prog, ranking.rank_key(prog, room.options.rank_by, last_ms)))
        return {"progress": progs, "boards": boards}, ranks

    async def create(
        self,
        options: RoomOptions,
        deal: dict[str, Any],
        seat: Callable[[Room, int], tuple[Room, list[str]]],
        parent: str | None = None,
        salt: str | None = None,
        elapsed: int = 0,
        **attempt: Any,
    ) -> tuple[Room, list[str]]:
        """Store a new room under a fresh code: ``seat(room, now)`` seats its first
        players and returns their ids. A practice room and a challenge attempt
        (``attempt``: its ``challenge`` and ``reveal_at``) start at once, a practice
        continuation with its race clock at ``elapsed`` ms (the race's last move). What
        its spectators see is decided here, once (domain/visibility.py, ``room_view``)."""
        rated = V.rated_play(options.to_dict()["rated"], bool(attempt.get("challenge")))
        view, delay = V.room_view(rated, options.spectator_delay, self.config.rated_view)
        options = replace(options, spectator_view=view, spectator_delay=delay)
        now = self.clock.now_ms()
        for _ in range(20):
            room = Room(
                new_code(),
                now,
                deal,
                salt or secrets.token_hex(16),
                options,
                parent=parent,
                **attempt,
            )
            room, pids = seat(room, now)
            if options.practice or room.challenge:
                room = start(room, now, -elapsed)
            elif options.quick:
                room = start(room, now, self.config.countdown_ms)
            if await self.commit(room.code, 0, room, False) >= 0:
                break
        else:
            raise ServiceError("busy", "could not allocate a room code")
        if not options.private:
            await self.store.rooms.set_public(room.code, now, True)
        return room, pids

    async def create_seated(
        self,
        name: str,
        options: RoomOptions,
        deal: dict[str, Any],
        parent: str | None = None,
        who: str = "",
        guest: bool = True,
        session: str | None = None,
        address: str = "",
        **attempt: Any,
    ) -> tuple[Room, str, str]:
        """A new room with one player seated (from the keyed client ``address``):
        (room, player id, token secret; given under the account ``session``)."""
        secret, hashed = new_token(session)

        def seat(room: Room, now: int) -> tuple[Room, list[str]]:
            room, pid = add_player(room, name, hashed, now, who, guest, address)
            return room, [pid]

        room, pids = await self.create(options, deal, seat, parent, **attempt)
        return room, pids[0], secret
