"""A room and its race as explicit states, changed only by pure transition functions.

A room is ``waiting`` (players join and get ready), then ``countdown`` (stored status
``started`` with a start time in the future), ``racing`` (the start time has passed) and
``finished`` (stored, or the time limit has passed). Every transition returns a new
``Room`` or raises ``RoomError`` with a reason and changes nothing. No clock is read here:
``now`` (epoch milliseconds, the server's) comes in as an argument.

RoomError reasons: ``room_full``, ``not_waiting``, ``not_host``, ``not_in_room``,
``no_players``, ``room_finished``, ``race_not_over``, ``already_seated``; a sprint's
(``sprint``): ``not_arena_race``, ``race_over``, ``already_sprinting``, ``too_late``, and
``already_moved`` (``moved``: the store checks the player's move log in the same step).
"""

from __future__ import annotations

import hashlib
import secrets
from collections.abc import Iterable, Sequence
from dataclasses import dataclass, field, replace
from typing import Any

from ...engine import RESIGNED, STUCK, Deal, Game, Settings
from . import movelog
from .arena import sprint_limit
from .errors import RoomError
from .options import LISTED, RoomOptions

WAITING, COUNTDOWN, RACING, FINISHED = "waiting", "countdown", "racing", "finished"
CODE_ALPHABET = "ABCDEFGHJKLMNPQRSTUVWXYZ23456789"  # room codes: no 0/O, 1/I
CODE_LENGTH = 6
STARTED = "started"  # the stored status of countdown and racing


def phase_at(finished: bool, start_at: int | None, ends_at: int | None, now: int) -> str:
    """The one phase rule: a room's phase at ``now`` from its stored state (finished or
    not, when it starts, when its time limit ends it). The hub applies it to the room's
    view it was sent (``RoomView.phase_at``), so every node and every client message
    agrees."""
    if finished:
        return FINISHED
    if start_at is None:
        return WAITING
    if now < start_at:
        return COUNTDOWN
    if ends_at is not None and now >= ends_at:
        return FINISHED
    return RACING


def sprint_ends_at(start_at: int | None, time_limit: int | None) -> int | None:
    """When a sprinter's own time limit ends (epoch ms): the race's start plus half its
    time limit, rounded down to whole seconds (domain/arena.py, ``sprint_limit``); None
    before the race has a start or without a time limit."""
    if start_at is None or time_limit is None:
        return None
    return start_at + sprint_limit(time_limit) * 1000


def random_deal(settings: Settings) -> dict[str, Any]:
    """A fresh random deal (``{"seed"}``, 16 hex digits) not stuck before its first move:
    about 3 Draw 3 deals in 1,000 are stuck from the start (docs/rules.md), and a race on
    one would end as it starts (with undo on too: nothing to undo). Those are drawn again."""
    while True:
        seed = secrets.token_hex(8)
        if Game(Deal.from_seed(seed), settings).status != STUCK:
            return {"seed": seed}


def commitment(salt: str, deal_id: str) -> str:
    """SHA-256 (hex) of ``salt + ":" + deal_id``; ``deal_id`` is ``v1:SEED`` for a seed."""
    return hashlib.sha256(f"{salt}:{deal_id}".encode()).hexdigest()


@dataclass(frozen=True, slots=True)
class Seat:
    id: str  # p1, p2, … in order of joining (a seat given up while waiting is not reused)
    name: str
    token_hash: str  # one per device seated here, space-separated
    ready: bool = False
    who: str = ""  # the player's key (domain/players.py), "" for an anonymous player
    guest: bool = True
    sprint: bool = False  # an arena race's player racing with half the time limit
    # the client address it was taken from, keyed (node/conn.py ``Addresses``; '' for a
    # seat taken before seats kept it, or by the server: a ghost): never sent
    address: str = ""

    def view(self) -> SeatView:
        return SeatView(self.id, self.name, self.ready, self.who or None, self.guest, self.sprint)


@dataclass(frozen=True, slots=True)
class SeatView:
    """A seat as anyone in the room may know it: no token."""

    id: str
    name: str
    ready: bool
    who: str | None  # the player's key, None for an anonymous player
    guest: bool
    sprint: bool = False

    def to_json(self, ends_at: int | None = None) -> dict[str, Any]:
        """The protocol's seat; a sprinter's with ``sprint`` and their own ``ends_at``."""
        out: dict[str, Any] = {
            "id": self.id,
            "name": self.name,
            "ready": self.ready,
            "who": self.who,
            "guest": self.guest,
        }
        if self.sprint:
            out["sprint"] = True
            out["ends_at"] = ends_at
        return out

    @classmethod
    def from_json(cls, d: dict[str, Any]) -> SeatView:
        return cls(d["id"], d["name"], d["ready"], d["who"], d["guest"], d.get("sprint", False))


@dataclass(frozen=True, slots=True)
class RoomView:
    """What anyone in a room may know of it, as of one moment (``Room.view``): never the
    deal or the salt before the end. A hub holds its room's; its JSON (``to_json``) is
    the protocol's ``room``, and a ``room`` event carries that JSON to the other nodes
    (``from_json``)."""

    code: str
    phase: str  # as of the moment it was made: ``phase_at`` gives it at another
    options: RoomOptions
    host: str | None
    players: tuple[SeatView, ...]
    start_at: int | None
    ends_at: int | None
    commitment: str | None  # once the countdown began (none for a continuation)
    parent: str | None = None
    rematch: str | None = None
    challenge: str | None = None
    ghost_of: dict[str, str] | None = None
    arena: str | None = None
    reveal: dict[str, Any] | None = None  # finished, and its deal may be shown
    end_reason: str | None = None  # finished

    def phase_at(self, now: int) -> str:
        return phase_at(self.phase == FINISHED, self.start_at, self.ends_at, now)

    def phase_for(self, player: str | None, now: int) -> str:
        """The phase at ``now`` as ``player``'s game knows it: finished once a sprinter's
        own time limit has passed (``sprint_ends_at``), else the room's."""
        end = self.sprint_ends_at(player)
        phase = self.phase_at(now)
        return FINISHED if phase == RACING and end is not None and now >= end else phase

    def sprint_ends_at(self, player: str | None) -> int | None:
        """When ``player``'s own time limit ends, if they sprint (else None)."""
        seat = self.seat(player) if player else None
        if seat is None or not seat.sprint:
            return None
        return sprint_ends_at(self.start_at, self.options.time_limit)

    def seat(self, player: str) -> SeatView | None:
        return next((s for s in self.players if s.id == player), None)

    def to_json(self, phase: str | None = None) -> dict[str, Any]:
        """The protocol's ``room``, with its phase (``phase``: another, the phase now)."""
        out: dict[str, Any] = {
            "code": self.code,
            "phase": phase or self.phase,
            **self.options.to_dict(),
            "host": self.host,
            "players": [s.to_json(self.sprint_ends_at(s.id)) for s in self.players],
            "start_at": self.start_at,
            "ends_at": self.ends_at,
            "commitment": self.commitment,
        }
        if self.parent:
            out["parent"] = self.parent
        if self.rematch:
            out["rematch"] = self.rematch
        if self.challenge:
            out["challenge"] = self.challenge
        if self.ghost_of:
            out["ghost_of"] = self.ghost_of
        if self.arena:
            out["arena"] = self.arena
        if self.reveal is not None:
            out["reveal"] = self.reveal
        if self.end_reason is not None:
            out["end_reason"] = self.end_reason
        return out

    @classmethod
    def from_json(cls, d: dict[str, Any]) -> RoomView:
        return cls(
            code=d["code"],
            phase=d["phase"],
            options=RoomOptions.from_dict(d),
            host=d["host"],
            players=tuple(SeatView.from_json(p) for p in d["players"]),
            start_at=d["start_at"],
            ends_at=d["ends_at"],
            commitment=d["commitment"],
            parent=d.get("parent"),
            rematch=d.get("rematch"),
            challenge=d.get("challenge"),
            ghost_of=d.get("ghost_of"),
            arena=d.get("arena"),
            reveal=d.get("reveal"),
            end_reason=d.get("end_reason"),
        )


@dataclass(frozen=True, slots=True)
class Room:
    code: str
    created: int
    deal: dict[str, Any]  # {"seed": S} or {"cards": [...]}: SECRET until finished
    salt: str  # SECRET until finished
    options: RoomOptions = field(default_factory=RoomOptions)
    status: str = WAITING  # waiting, started, finished
    start_at: int | None = None  # epoch ms the race starts
    ended: int | None = None
    end_reason: str | None = None
    host: str | None = None
    seats: tuple[Seat, ...] = ()
    next_seat: int = 1
    parent: str | None = None  # a practice continuation of this race's position
    rematch: str | None = None  # the code of this room's rematch, once asked for
    challenge: str | None = None  # "ID/N": a player's one attempt at a challenge's deal N
    reveal_at: int | None = None  # an attempt's deal is revealed when its challenge closes
    ghost: dict[str, str] | None = None  # {"code", "player"}: the recorded game raced
    # "ID/N": the challenge deal a practice game, a practice continuation of an attempt or
    # a ghost of one plays (watched by the attempt's rule until the challenge closes)
    deal_of: str | None = None
    # an attempt's: why its leaderboard row is flagged (domain/challenge.py, ADDRESS), and
    # whether it is listed apart from the ranked rows (a guest's, where accounts are ranked)
    flags: tuple[str, ...] = ()
    apart: bool = False
    arena: str | None = None  # the arena tournament this race is one of (its id)

    # ---- derived ----------------------------------------------------------------------
    @property
    def settings(self) -> Settings:
        return self.options.settings

    @property
    def game_deal(self) -> Deal:
        return Deal.from_json(self.deal)

    @property
    def commitment(self) -> str:
        return commitment(self.salt, self.game_deal.id)

    def game_of(self, log: Iterable[str] = (), player: str | None = None) -> Game:
        """A player's game replayed from their move ``log``, as the race's end left it:
        out of time when the time limit ended the race, or when ``player`` sprints and
        their own time limit had passed by the race's end (nobody there to log it)."""
        game = movelog.replay(Game(self.game_deal, self.settings), log)
        return as_ended(game, self.ended_for(player))

    def ended_for(self, player: str | None) -> str | None:
        """How the race's end ends ``player``'s game (None: the race is on): the room's
        ``end_reason``, or ``time_limit`` for a sprinter whose own time limit had passed
        by then."""
        if self.status != FINISHED:
            return None
        end = self.sprint_ends_at(player)
        if end is not None and self.ended is not None and self.ended >= end:
            return "time_limit"
        return self.end_reason

    def elapsed_at_end(
        self, player: str | None, now: int, game: Game | None = None, log: Sequence[str] = ()
    ) -> int:
        """The race time at which ``player``'s game (``game``, played from ``log``) ended:
        the race's end (its time limit, when that ended it; a sprinter's own, when
        sooner), or sooner its own resignation or, stuck, its last move (timed scoring
        counts to it)."""
        ended = self.ended or self.ends_at() or now
        end = self.sprint_ends_at(player)
        if end is not None:
            ended = min(ended, end)
        elapsed = max(0, ended - (self.start_at or ended))
        if game is not None and log and game.status in (RESIGNED, STUCK):
            elapsed = min(elapsed, movelog.at_ms(log[-1]))
        return elapsed

    def phase(self, now: int) -> str:
        start_at = None if self.status == WAITING else self.start_at
        return phase_at(self.status == FINISHED, start_at, self.ends_at(), now)

    def ends_at(self) -> int | None:
        if self.start_at is None or self.options.time_limit is None:
            return None
        return self.start_at + self.options.time_limit * 1000

    def seat(self, player: str) -> Seat | None:
        return next((s for s in self.seats if s.id == player), None)

    def sprint_ends_at(self, player: str | None) -> int | None:
        """When ``player``'s own time limit ends, if they sprint (else None)."""
        seat = self.seat(player) if player else None
        if seat is None or not seat.sprint:
            return None
        return sprint_ends_at(self.start_at, self.options.time_limit)

    def seat_of(self, who: str) -> Seat | None:
        """The seat of the player with key ``who`` (every device of theirs sits there)."""
        return next((s for s in self.seats if who and s.who == who), None)

    def view(self, now: int) -> RoomView:
        """What anyone in the room may know at ``now``: never the deal or the salt before
        the end."""
        phase = self.phase(now)
        finished = phase == FINISHED
        # a continuation reveals nothing (its race's room does); an attempt nothing before
        # its challenge closes
        revealed = finished and not self.parent and now >= (self.reveal_at or 0)
        return RoomView(
            code=self.code,
            phase=phase,
            options=self.options,
            host=self.host,
            players=tuple(s.view() for s in self.seats),
            start_at=self.start_at,
            ends_at=self.ends_at(),
            commitment=self.commitment if phase != WAITING and not self.parent else None,
            parent=self.parent,
            rematch=self.rematch,
            challenge=self.challenge,
            ghost_of=self.ghost,
            arena=self.arena,
            reveal=self.reveal() if revealed else None,
            end_reason=(self.end_reason or "time_limit") if finished else None,
        )

    def listed(self, now: int) -> dict[str, Any]:
        """The room as a lobby list shows it."""
        public = self.view(now).to_json()
        return {k: public[k] for k in ("code", "phase", *LISTED, "players")}

    def reveal(self) -> dict[str, Any]:
        deal = self.game_deal
        return {
            "seed": deal.seed,
            "deal": deal.id,
            "salt": self.salt,
            "commitment": self.commitment,
        }

    # ---- storage form -----------------------------------------------------------------
    def to_json(self) -> dict[str, Any]:
        return {
            "code": self.code,
            "created": self.created,
            "deal": self.deal,
            "salt": self.salt,
            **self.options.to_dict(),
            "status": self.status,
            "start_at": self.start_at,
            "ended": self.ended,
            "end_reason": self.end_reason,
            "host": self.host,
            "seats": [
                [s.id, s.name, s.token_hash, s.ready, s.who, s.guest, s.sprint, s.address]
                for s in self.seats
            ],
            "next_seat": self.next_seat,
            "parent": self.parent,
            "rematch": self.rematch,
            "challenge": self.challenge,
            "reveal_at": self.reveal_at,
            "ghost_of": self.ghost,  # "ghost" is the option's (RoomOptions.ghost)
            "deal_of": self.deal_of,
            "flags": list(self.flags),
            "apart": self.apart,
            "arena": self.arena,
        }

    @classmethod
    def from_json(cls, d: dict[str, Any]) -> Room:
        return cls(
            code=d["code"],
            created=d["created"],
            deal=d["deal"],
            salt=d["salt"],
            options=RoomOptions.from_dict(d),
            status=d["status"],
            start_at=d["start_at"],
            ended=d["ended"],
            end_reason=d["end_reason"],
            host=d["host"],
            seats=tuple(Seat(*s) for s in d["seats"]),
            next_seat=d["next_seat"],
            parent=d.get("parent"),
            rematch=d.get("rematch"),
            challenge=d.get("challenge"),
            reveal_at=d.get("reveal_at"),
            ghost=d.get("ghost_of"),
            deal_of=d.get("deal_of"),
            flags=tuple(d.get("flags", ())),
            apart=d.get("apart", False),
            arena=d.get("arena"),
        )


def as_ended(game: Game, end_reason: str | None) -> Game:
    """``game`` as its race's end (``end_reason``; None: not ended) left it: out of time
    when the time limit ended the race and the game was still on."""
    if end_reason == "time_limit" and not game.over:
        game.time_out()
    return game


# ---- transitions ------------------------------------------------------------------------
def add_player(
    room: Room,
    name: str,
    token_hash: str,
    now: int,
    who: str = "",
    guest: bool = True,
    address: str = "",
) -> tuple[Room, str]:
    """Seat a new player (from the keyed client ``address``); a player already seated
    (``who``) gets no second seat."""
    if room.seat_of(who) is not None:
        raise RoomError("already_seated", "you already have a seat in this room")
    phase = room.phase(now)
    if phase == FINISHED:
        raise RoomError("room_finished", "this race is over")
    if phase != WAITING:
        raise not_waiting(phase)
    if len(room.seats) >= room.options.capacity:
        raise RoomError("room_full", f"the room is full ({room.options.capacity} players)")
    pid = f"p{room.next_seat}"
    seat = Seat(pid, name, token_hash, room.options.quick, who, guest, address=address)
    room = replace(
        room, seats=(*room.seats, seat), next_seat=room.next_seat + 1, host=room.host or pid
    )
    return room, pid


def add_device(room: Room, player: str, token_hash: str) -> Room:
    """Another device of a seated player gets its own token to the same seat (the last
    four devices' tokens are kept)."""
    seat = room.seat(player)
    if seat is None:
        raise RoomError("not_in_room", "not a player of this room")
    hashes = " ".join([*seat.token_hash.split()[-3:], token_hash])
    seats = tuple(replace(s, token_hash=hashes) if s.id == player else s for s in room.seats)
    return replace(room, seats=seats)


def remove_player(room: Room, player: str, now: int) -> Room:
    """A player leaves a room that has not started (racing players resign instead)."""
    if room.phase(now) == COUNTDOWN:
        raise RoomError("not_waiting", "the countdown has begun: resign once it has started")
    if room.phase(now) != WAITING:
        raise RoomError("not_waiting", "the race has started: resign instead")
    if room.seat(player) is None:
        raise RoomError("not_in_room", "not a player of this room")
    seats = tuple(s for s in room.seats if s.id != player)
    host = room.host if room.host != player else (seats[0].id if seats else None)
    room = replace(room, seats=seats, host=host)
    if not seats:
        room = replace(room, status=FINISHED, ended=now, end_reason="abandoned")
    return room


def not_waiting(phase: str) -> RoomError:
    """The refusal of what only a waiting room allows, in a room in ``phase``."""
    if phase == COUNTDOWN:
        return RoomError("not_waiting", "the countdown has begun")
    return RoomError("not_waiting", "the race has already started")


def set_ready(room: Room, player: str, ready: bool, now: int) -> Room:
    if room.phase(now) != WAITING:
        raise not_waiting(room.phase(now))
    if room.seat(player) is None:
        raise RoomError("not_in_room", "not a player of this room")
    seats = tuple(replace(s, ready=ready) if s.id == player else s for s in room.seats)
    return replace(room, seats=seats)


def all_ready(room: Room) -> bool:
    return len(room.seats) >= 2 and all(s.ready for s in room.seats)


def start(room: Room, now: int, countdown_ms: int, by: str | None = None) -> Room:
    """Begin the countdown: by the host (``by``), or when every seated player is ready."""
    if room.phase(now) != WAITING:
        raise not_waiting(room.phase(now))
    if by is not None and by != room.host:
        raise RoomError("not_host", "only the host can start the race")
    if not room.seats:
        raise RoomError("no_players", "nobody to race")
    return replace(room, status=STARTED, start_at=now + countdown_ms)


def set_rematch(room: Room, code: str, now: int) -> Room:
    """Name the rematch room of a finished race; the first one named stays."""
    if room.phase(now) != FINISHED:
        raise RoomError("race_not_over", "a rematch is for a finished race")
    if room.rematch is not None:
        return room
    return replace(room, rematch=code)


def sprint(room: Room, player: str, now: int) -> Room:
    """An arena race's player races with half its time limit (docs/rules.md, "Sprint"):
    once, before their own time limit would have passed, in a race not over. Only before
    their first move too: the store checks their move log is empty in the same step
    (``moved`` is the refusal)."""
    seat = room.seat(player)
    if seat is None:
        raise RoomError("not_in_room", "not a player of this room")
    if not room.arena:
        raise RoomError("not_arena_race", "a sprint is for an arena's races")
    if room.phase(now) == FINISHED:
        raise RoomError("race_over", "the race is over")
    if seat.sprint:
        raise RoomError("already_sprinting", "you are sprinting already")
    end = sprint_ends_at(room.start_at, room.options.time_limit)
    if end is not None and now >= end:
        raise RoomError("too_late", "half the time limit has passed: too late to sprint")
    seats = tuple(replace(s, sprint=True) if s.id == player else s for s in room.seats)
    return replace(room, seats=seats)


def moved() -> RoomError:
    """The refusal of a sprint once the player's move log holds anything."""
    return RoomError("already_moved", "a sprint is chosen before your first move")


def finish(room: Room, now: int, reason: str) -> Room:
    """End the race (``all_over``, ``time_limit`` or ``abandoned``); idempotent."""
    if room.status == FINISHED:
        return room
    ended = now
    ends_at = room.ends_at()
    if room.phase(now) == FINISHED and ends_at is not None:
        ended = ends_at  # the time limit passed: it ended then
        reason = "time_limit"
    return replace(room, status=FINISHED, ended=ended, end_reason=reason)
