"""Who sees what, over every kind of room, phase and role, through real connections
(docs/rules.md: "Who sees what", "What opens when a challenge is final", "The solver's
help"; docs/protocol.md).

Each kind of room is played once through its phases with every role connected, and at
each phase every route is asked of every role: ``watch`` (its welcome), ``replay`` over
the connection and over HTTP, a ``ghost`` race of the game, ``resume`` of a seat, ``hint``
and ``finish``, and for a challenge's deal practice of it, the challenges list and the
live leaderboard. What each role's connection received while the phase lasted is kept
too. That is ``observe_kind``'s part (once per kind: the cells of a kind share its play).
Each cell (kind, phase, role) compares what its role got with what the documents say
(``expected``, written from them here, not from the server's code); a play's cells are
one test, which names every failing cell.

Cards are checked as a whole: ``cards_in`` walks a message and collects every card it
names, wherever (a value, a key, a refusal's words), outside the receiver's own board.
A role that may see no card of another game (a racer; in rated play, a spectator and a
finished player while the race runs; anyone of a challenge's deal before it is final)
must get none, and nothing of the deal either (``secrets_in``: seed, salt, reveal,
analysis, par)."""

from __future__ import annotations

import asyncio
import itertools
import re
import secrets
from collections.abc import Awaitable, Callable
from dataclasses import dataclass, field
from typing import Any

import orjson
import pytest
import redis

from klondike_race.engine import NAMES
from klondike_race.service.clock import Clock
from klondike_race.service.domain import challenge as ch

from .conftest import Client, daily_config, day_id, http, make_config, running, winnable

# ---- what a message shows ------------------------------------------------------------
CARDS = frozenset(NAMES)
CARD_IN_WORDS = re.compile(r"(?<![A-Za-z0-9])([A2-9TJQK][cdhs])(?![A-Za-z0-9])")
# messages whose ``board`` is the receiver's own game
OWN_BOARD = ("start", "ack", "welcome", "resumed", "resync")
# what names the deal, or is derived from it, besides the cards
SECRETS = ("seed", "salt", "reveal", "analysis", "par", "record", "frames", "line")


def own_board(message: dict, path: tuple[Any, ...], own: str | None) -> bool:
    """Whether ``path`` in ``message`` is the receiver's own board (``own``: their seat)."""
    if own is None or not path:
        return False
    if path == ("board",):
        return message.get("type") in OWN_BOARD or message.get("player") == own
    return path == ("boards", own)


def cards_in(message: dict, own: str | None = None) -> set[str]:
    """Every card ``message`` names outside the receiver's own board: any string that is
    a card, any key that is one, any card named in a text (an error's words)."""
    found: set[str] = set()

    def walk(value: Any, path: tuple[Any, ...]) -> None:
        if own_board(message, path, own):
            return
        if isinstance(value, str):
            if value in CARDS:
                found.add(value)
            elif path and path[-1] == "message":
                found.update(CARD_IN_WORDS.findall(value))
        elif isinstance(value, dict):
            for k, v in value.items():
                if k in CARDS:
                    found.add(k)
                walk(v, (*path, k))
        elif isinstance(value, list):
            for i, v in enumerate(value):
                walk(v, (*path, i))

    walk(message, ())
    return found


def secrets_in(message: dict) -> set[str]:
    """The fields of ``message`` that name the deal or come from it (null ones aside)."""
    found: set[str] = set()

    def walk(value: Any) -> None:
        if isinstance(value, dict):
            for k, v in value.items():
                if k in SECRETS and v is not None:
                    found.add(k)
                walk(v)
        elif isinstance(value, list):
            for v in value:
                walk(v)

    walk(message)
    if message.get("type") in ("analysis", "replay", "hint"):
        found.add(message["type"])
    return found


def boards_shown(messages: list[dict], own: str | None) -> list[dict]:
    """Every board (or outline) of another game the messages show."""
    shown = []
    for m in messages:
        shown += [b for pid, b in (m.get("boards") or {}).items() if pid != own]
        if isinstance(m.get("board"), dict) and not own_board(m, ("board",), own):
            shown.append(m["board"])
    return shown


NONE, OUTLINES, BOARDS, DELAYED = "none", "outlines", "boards", "delayed"


def sight_of(messages: list[dict], own: str | None) -> str:
    """What ``messages`` show of the other games: ``none``; ``outlines`` only; full
    ``boards`` (cards and all), live; or full boards held back (``delayed``: none showing
    a move, though every player moved before the phase's messages were taken)."""
    shown = boards_shown(messages, own)
    outlined = [bool(b.get("outline")) for b in shown]
    if not shown:
        return NONE
    if all(outlined):
        return OUTLINES
    if any(outlined):
        return "outlines and boards mixed"
    return BOARDS if any(b["moves"] for b in shown) else DELAYED


# ---- the table -----------------------------------------------------------------------
# phases of a race; a challenge's: its attempt on, over (open), closed (not final), final
WAITING, COUNTDOWN, RACING, ONE_OVER, OVER = "waiting", "countdown", "racing", "one-over", "over"
CLOSED, FINAL = "closed", "final"
ROOM_PHASE = {WAITING: "waiting", COUNTDOWN: "countdown", RACING: "racing", ONE_OVER: "racing"}
RACE = (WAITING, COUNTDOWN, RACING, ONE_OVER, OVER)
SOLO = (RACING, OVER)
CHALLENGE = (RACING, OVER, CLOSED, FINAL)

RACER = "racer"  # a racer whose game is on until the race is over
RACER2 = "racer-2nd"  # the same seat's second connection (another device)
OTHER = "other-racer"  # another racer (of a challenge: their own attempt, still on)
FINISHER = "finished"  # the racer whose game ends first, watching from their seat
FINISHER2 = "finished-2nd"  # their second connection
GUEST = "guest-spectator"  # a spectator with a throwaway guest identity
ACCOUNT = "account-spectator"  # a spectator signed in as an account
PLAYERS = (RACER, RACER2, OTHER, FINISHER, FINISHER2)
SPECTATORS = (GUEST, ACCOUNT)

LIVE, DELAY, OUTLINE = "live", "delayed", "outline"  # a room's spectator view
VIEW_SIGHT = {LIVE: BOARDS, DELAY: DELAYED, OUTLINE: OUTLINES}
DELAY_S = 60  # longer than any of these races: what is held back never comes


@dataclass(frozen=True)
class Kind:
    view: str  # what its spectators and finished players see while the race runs
    phases: tuple[str, ...]
    roles: tuple[str, ...]
    practice: bool = False
    challenge: bool = False  # an attempt at a challenge's deal
    create: dict[str, Any] = field(default_factory=dict)  # its `create` fields
    node: dict[str, Any] = field(default_factory=dict)  # its node's settings


ALL = (RACER, RACER2, OTHER, FINISHER, FINISHER2, GUEST, ACCOUNT)
KINDS = {
    "public": Kind(OUTLINE, RACE, ALL, create={"private": False}),
    # a quick match counts down as soon as it is made, and seats two
    "quick": Kind(OUTLINE, RACE[1:], tuple(r for r in ALL if r != OTHER)),
    "rated-private": Kind(OUTLINE, RACE, ALL, create={"private": True, "rated": True}),
    # rated play where the operator shows the boards behind (KR_RATED_SPECTATORS)
    "rated-delayed": Kind(
        DELAY, RACE, ALL, create={"private": False}, node={"rated_spectators": f"delayed:{DELAY_S}"}
    ),
    "unrated-private": Kind(LIVE, RACE, ALL, create={"private": True}),
    "unrated-delayed": Kind(DELAY, RACE, ALL, create={"private": True, "spectator_delay": DELAY_S}),
    "practice": Kind(LIVE, SOLO, (RACER, RACER2, *SPECTATORS), practice=True),
    # the player (``finished``) wins (finish it for me) while the ghost plays on
    "ghost": Kind(LIVE, (RACING, ONE_OVER, OVER), (FINISHER, FINISHER2, *SPECTATORS), True),
    "daily": Kind(
        OUTLINE, CHALLENGE, (RACER, RACER2, OTHER, FINISHER, *SPECTATORS), challenge=True
    ),
    # a practice game on the daily's deal once the challenge is final
    "daily-practice": Kind(LIVE, SOLO, (RACER, RACER2, *SPECTATORS), practice=True),
}
# where a practice kind's player wins (finish it for me): from this phase on, won
WON_FROM = {"practice": OVER, "daily-practice": OVER, "ghost": ONE_OVER}


def own_over(kind: str, phase: str, role: str) -> bool:
    """Whether ``role``'s own game is over in ``phase`` (of a challenge: their own
    attempt, on the deal)."""
    if KINDS[kind].challenge:  # the other racer's ends before the challenge is final
        return role == FINISHER or phase == FINAL or (role in (RACER, RACER2) and phase != RACING)
    return phase == OVER or (role in (FINISHER, FINISHER2) and phase == ONE_OVER)


def won(kind: str, phase: str, role: str) -> bool:
    k = KINDS[kind]
    if kind not in WON_FROM or role not in PLAYERS:
        return False
    return k.phases.index(phase) >= k.phases.index(WON_FROM[kind])


def sight(kind: str, phase: str, role: str) -> str:
    """What ``role`` may see of the other games in ``phase``: docs/rules.md's table."""
    k = KINDS[kind]
    if k.challenge:  # nothing of another game before the challenge is final
        return BOARDS if phase == FINAL else NONE
    if role in PLAYERS and k.practice and kind != "ghost":
        return NONE  # a game of one: there is no other
    if phase in (WAITING, COUNTDOWN):
        return NONE  # no boards before the start
    if phase == OVER:
        return BOARDS  # the results: everything
    if role in SPECTATORS or own_over(kind, phase, role):
        return VIEW_SIGHT[k.view]
    return NONE  # a racer: their own board, never another


# An expected answer: ("ok",) allowed; ("refused", reason); ("welcome" or "resumed", what
# it shows of the other games, and "reveal" or "sealed": the deal revealed in it or not);
# ("own",) one's own ended attempt; ("sealed",)/("final",) the challenge as listed;
# ("row", status) the racer's leaderboard row.
Expect = tuple[str, ...]


def solver(kind: str, phase: str, role: str, what: str) -> Expect:
    """The answer to ``hint`` or ``finish`` (docs/rules.md, "The solver's help")."""
    k = KINDS[kind]
    if role in SPECTATORS:  # not in the room (a challenge's spectators watch nothing)
        return ("refused", "not_in_room" if k.challenge else "not_a_player")
    over = own_over(kind, phase, role)
    if what == "hint":
        if not k.practice:
            return ("refused", "not_in_practice")
    elif won(kind, phase, role):
        return ("refused", "game_over")
    elif not k.practice:
        if k.challenge:  # a finished attempt's deal is sealed until final
            if not over:
                return ("refused", "race_not_over")
            return ("ok",) if phase == FINAL else ("refused", "not_yet")
        return ("ok",) if phase == OVER else ("refused", "race_not_over")
    if phase == OVER:
        return ("refused", "race_over")
    return ("refused", "game_over") if over else ("ok",)


def expected(kind: str, phase: str, role: str) -> dict[str, Expect]:
    """Every route's answer to ``role`` in ``phase`` of ``kind``, from the documents."""
    k = KINDS[kind]
    out: dict[str, Expect] = {"events": (sight(kind, phase, role),)}
    out["hint"] = solver(kind, phase, role, "hint")
    out["finish"] = solver(kind, phase, role, "finish")
    if k.challenge:  # the attempt watched is the racer's; the challenge final at FINAL
        sealed: Expect = ("refused", "not_yet")
        if phase == FINAL:
            out["watch"] = ("welcome", BOARDS, "reveal")
        elif role in (RACER, RACER2):
            out["watch"] = ("refused", "already_player") if phase == RACING else ("own",)
        else:
            out["watch"] = sealed
        for route in ("replay", "http", "ghost", "practice"):
            out[route] = ("ok",) if phase == FINAL else sealed
        if role in PLAYERS:  # their own attempt: their own board only (results: done)
            out["resume"] = ("resumed", NONE) if phase == FINAL else ("resumed", NONE, "sealed")
        out["challenges"] = ("final",) if phase == FINAL else ("sealed",)
        out["leaderboard"] = ("row", "playing" if phase == RACING else "resigned")
        return out
    done = "reveal" if phase == OVER else "sealed"
    if role in PLAYERS and phase != OVER:
        out["watch"] = ("refused", "already_player")
    else:
        out["watch"] = ("welcome", sight(kind, phase, GUEST), done)
    for route in ("replay", "http", "ghost"):
        out[route] = ("ok",) if phase == OVER else ("refused", "not_finished")
    if role in PLAYERS:
        out["resume"] = ("resumed", sight(kind, phase, role), done)
    if kind == "daily-practice":
        out["practice"] = ("ok",)
    return out


# ---- playing each kind through its phases --------------------------------------------
@dataclass
class Seen:
    """What every role got: the messages of each phase, and each route's answer."""

    code: str = ""  # the room watched
    events: dict[tuple[str, str], list[dict]] = field(default_factory=dict)
    answers: dict[tuple[str, str, str], dict] = field(default_factory=dict)
    # a player role's latest can_hint and can_finish in a phase, before its finish
    flags: dict[tuple[str, str], dict[str, bool]] = field(default_factory=dict)
    own: dict[str, str] = field(default_factory=dict)  # a player role's seat
    home: dict[str, str] = field(default_factory=dict)  # a player role's room
    challenge: str = ""  # a challenge's id and when it is final
    final_at: int = 0
    made: dict[str, int] = field(default_factory=dict)  # rooms made by a phase's refusals


class Identity:
    """A player: a guest (a device) or an account (a session); each ``connect`` is one
    more connection of theirs."""

    def __init__(self) -> None:
        self.device = secrets.token_urlsafe(24)
        self.session: str | None = None

    async def connect(self, port: int) -> Client:
        client = await Client.open(port)
        fields = {"device": self.device, **({"session": self.session} if self.session else {})}
        await must(client, "hello", "identity", **fields)
        return client

    async def register(self, port: int) -> Identity:
        client = await self.connect(port)
        name = "w" + secrets.token_hex(5)
        got = await client.request("register", "identity", name=name, password="correct horse")
        assert got["player"]["guest"] is False, got
        self.session = got["session"]
        await client.close()
        return self


ANSWER_S = 15.0
PINGS = itertools.count()


async def ask(client: Client, kind: str, *answers: str, **fields: Any) -> dict:
    """``client``'s answer to one message (an ``error`` too)."""
    try:
        return await client.request(kind, *answers, timeout=ANSWER_S, **fields)
    except TimeoutError:
        return {"type": "timeout", "asked": kind}


async def must(client: Client, kind: str, answer: str, **fields: Any) -> dict:
    """``client``'s answer to one message, which must be ``answer``."""
    got = await client.request(kind, answer, **fields)
    assert got["type"] == answer, got
    return got


async def settle(clients: list[Client]) -> None:
    """Everything the server sent these connections so far has arrived: a ping each (its
    pong leaves after what was pushed before it, batched updates included)."""
    for c in clients:
        await c.request("ping", "pong", id=next(PINGS))


async def until_finished(client: Client) -> None:
    """The room's finished event: received already (a request's wait passes over the
    events before its answer), or the next ones."""
    if any(m["type"] == "room" and m["room"]["phase"] == "finished" for m in client.seen):
        return
    room = await client.expect("room", timeout=ANSWER_S)
    while room["room"]["phase"] != "finished":
        room = await client.expect("room", timeout=ANSWER_S)


class Play:
    """One kind's play: its roles' connections (``conns``) and identities (``ids``);
    ``end(phase)`` keeps what each connection got since the last phase ended."""

    def __init__(self, kind: str, port: int) -> None:
        self.kind, self.port = kind, port
        self.seen = Seen()
        self.conns: dict[str, Client] = {}
        self.ids: dict[str, Identity] = {}
        self.tokens: dict[str, str] = {}
        self.mark: dict[str, int] = {}

    def role(self, role: str, ident: Identity, client: Client) -> None:
        self.ids[role], self.conns[role] = ident, client
        self.mark[role] = 0
        if client.token:
            self.tokens[role] = client.token
        if client.player:
            self.seen.own[role] = client.player
            welcome = [m for m in client.seen if m["type"] == "welcome"][-1]
            self.seen.home[role] = welcome["room"]["code"]

    async def end(self, phase: str) -> None:
        await settle(list(self.conns.values()))
        for role, c in self.conns.items():
            self.seen.events[(phase, role)] = c.seen[self.mark[role] :]
            self.mark[role] = len(c.seen)

    def since(self, role: str) -> int:
        """The last event version ``role``'s connection had when this phase began."""
        c = self.conns[role]
        return max((m["v"] for m in c.seen[: self.mark[role]] if "v" in m), default=0)

    async def fresh(self, role: str, kind: str, *answers: str, **fields: Any) -> dict:
        """The answer to one message on a new connection of ``role``'s identity."""
        client = await self.ids[role].connect(self.port)
        try:
            return await ask(client, kind, *answers, **fields)
        finally:
            await client.close()

    async def resume(self, role: str) -> dict:
        """A seat resumed on a new connection from this phase's start: the answer, with
        the events replayed after it (``then``)."""
        client = await Client.open(self.port)
        try:
            got = await ask(client, "resume", "resumed", "welcome", token=self.tokens[role],
                            since=self.since(role))  # fmt: skip
            await settle([client])
            return {**got, "then": client.seen[1:]}
        finally:
            await client.close()

    async def probe(self, phase: str, code: str, practice: str | None = None) -> None:
        """Every route of this phase asked by every role, on fresh connections of its
        identity (``hint`` on the role's own; with ``practice``, practice of that
        challenge's deal); ``finish`` is the caller's."""
        a = self.seen.answers
        for role in self.conns:
            if role in PLAYERS:
                self.seen.flags[(phase, role)] = flags_of(self.conns[role].seen[self.mark[role] :])
            a[(phase, role, "watch")] = await self.fresh(role, "watch", "welcome", code=code)
            a[(phase, role, "replay")] = await self.fresh(role, "replay", "replay", code=code)
            a[(phase, role, "ghost")] = await self.fresh(
                role, "ghost", "welcome", code=code, player="p1", name="G"
            )
            if role in self.tokens:
                a[(phase, role, "resume")] = await self.resume(role)
            a[(phase, role, "hint")] = await ask(self.conns[role], "hint", "hint")
        status, _, body = await http(self.port, "GET", f"/api/replays/{code}")
        for role in self.conns:
            a[(phase, role, "http")] = {"status": status, **orjson.loads(body)}
        if practice:
            for role in self.conns:
                a[(phase, role, "practice")] = await self.fresh(
                    role, "attempt", "welcome", challenge=practice, name="P", practice=True
                )

    async def finish(self, phase: str, roles: tuple[str, ...]) -> None:
        """``finish`` asked by each of ``roles`` (spectators too): the first answer."""
        for role in roles:
            if role in self.conns:
                client = self.conns[role]
                got = await ask(client, "finish", "finishing", "welcome")
                self.seen.answers[(phase, role, "finish")] = got
                if got["type"] == "welcome" and role in self.tokens:
                    # a continuation was made, the connection moved to it: back to its
                    # own room (its line is played by then), so that what follows is of it
                    await ask(client, "resume", "welcome", token=self.tokens[role])

    async def close(self) -> None:
        for c in self.conns.values():
            await c.close()


DEAL = {"cards": winnable(draw=1)["cards"]}  # won by the solver at once: finish plays it
# the countdown's routes are asked within it: about half a second on a quiet machine,
# over 2.5 s with six workers on two cores
COUNTDOWN_MS = 4000


async def play_race(kind: str, port: int) -> Seen:
    """A race of two or three: ``racer`` (and its second connection) races to the end,
    ``finished`` (and theirs) resigns first, ``other-racer`` races on; two spectators
    watch from the start (the waiting room, or a quick match's countdown)."""
    p = Play(kind, port)
    b, a, c, g, s = Identity(), Identity(), Identity(), Identity(), Identity()
    await s.register(port)
    racer, finisher = await b.connect(port), await a.connect(port)
    if kind == "quick":
        await racer.send("quick", name="racer")
        await finisher.send("quick", name="finished")
        code = (await racer.expect("welcome"))["room"]["code"]
        assert (await finisher.expect("welcome"))["room"]["code"] == code
        for client in (racer, finisher):  # the one that waited is told its token after
            if client.token is None:
                await client.expect("matched")
        phases = [COUNTDOWN, RACING, ONE_OVER, OVER]
        racers = [racer, finisher]
    else:
        made = await racer.request(
            "create", "welcome", name="racer", capacity=3, deal=DEAL, **KINDS[kind].create
        )
        assert made["type"] == "welcome", made
        code = made["room"]["code"]
        other = await c.connect(port)
        for client, name in ((other, "other"), (finisher, "finished")):
            await must(client, "join", "welcome", code=code, name=name)
        p.role(OTHER, c, other)
        phases = [WAITING, COUNTDOWN, RACING, ONE_OVER, OVER]
        racers = [racer, other, finisher]
    p.seen.code = code
    p.role(RACER, b, racer)
    p.role(FINISHER, a, finisher)
    for role, ident in ((RACER2, b), (FINISHER2, a)):
        second = await ident.connect(port)
        await must(second, "join", "welcome", code=code, name="2nd")
        p.role(role, ident, second)
    for role, ident in ((GUEST, g), (ACCOUNT, s)):
        watcher = await ident.connect(port)
        await must(watcher, "watch", "welcome", code=code)
        p.role(role, ident, watcher)
    everyone = list(p.conns.values())
    for phase in phases:
        if phase == COUNTDOWN and kind != "quick":
            for r in racers:
                await r.send("ready")
            for client in everyone:
                room = await client.expect("room")
                while room["room"]["phase"] != "countdown":
                    room = await client.expect("room")
        elif phase == RACING:
            for client in everyone:
                await client.expect("start", timeout=COUNTDOWN_MS / 1000 + ANSWER_S)
            for r in racers:  # everyone moves: what each role sees of it
                assert (await r.move("draw"))["type"] == "ack"
        elif phase == ONE_OVER:
            mark = len(finisher.seen)
            await must(finisher, "resign", "ack", seq=finisher.seq + 1)
            for client in (finisher, p.conns[FINISHER2]):
                # their game is over: the others' boards (the resigning connection's may
                # come before its ack, held for an earlier event, and skipped by the wait)
                if client is not finisher or not any(
                    m["type"] == "boards" for m in finisher.seen[mark:]
                ):
                    await client.expect("boards")
            for r in racers:
                if r is not finisher:
                    assert (await r.move("draw"))["type"] == "ack"
        elif phase == OVER:
            for r in racers:
                if r is not finisher:
                    await must(r, "resign", "ack", seq=r.seq + 1)
            for client in everyone:
                await until_finished(client)
        await settle(everyone)
        await p.probe(phase, code)
        await p.finish(phase, tuple(p.conns))  # last: at the end it makes continuations
        await p.end(phase)
        if phase == COUNTDOWN:  # (else the countdown's cells saw the race too)
            started = [m for c in everyone for m in c.seen if m["type"] == "start"]
            assert not started, "the race started before the countdown's routes were asked"
    await p.close()
    return p.seen


async def recorded_game(port: int, clock: Clock, lag_ms: int) -> str:
    """A finished practice game whose last move and resignation came ``lag_ms`` after its
    first move (the server's clock moved on meanwhile, not the test): its code."""
    rec = await Identity().connect(port)
    made = await rec.request("create", "welcome", name="Rec", practice=True, deal=DEAL)
    assert (await rec.move("draw"))["type"] == "ack"
    clock.shift(lag_ms)
    try:
        assert (await rec.move("draw"))["type"] == "ack"
        await must(rec, "resign", "ack", seq=3)
        await until_finished(rec)
    finally:
        clock.shift(0)
    await rec.close()
    return str(made["room"]["code"])


GHOST_LAG_MS = 12_000  # the ghost's game ends this long after its race starts: after the
# player's finish and the steps of one over (4 s, then 8 s, were too short for them on a
# loaded machine: the race finished first)


async def play_solo(
    kind: str, port: int, enter: Callable[[Client], Awaitable[dict]], practice: str | None = None
) -> Seen:
    """A one-player game (a practice game, a ghost race, practice of a final daily,
    ``practice`` naming its challenge): the player (and a second connection of theirs)
    and two spectators. The player's finish it for me ends the racing phase (their win
    ends the game: over; in a ghost race the ghost plays on until its recorded end:
    one-over, then over)."""
    p = Play(kind, port)
    me, g, s = Identity(), Identity(), Identity()
    await s.register(port)
    player = await me.connect(port)
    welcome = await enter(player)
    assert welcome["type"] == "welcome", welcome
    code = p.seen.code = welcome["room"]["code"]
    first, second = (FINISHER, FINISHER2) if kind == "ghost" else (RACER, RACER2)
    p.role(first, me, player)
    again = await me.connect(port)
    await must(again, "join", "welcome", code=code, name="2nd")
    p.role(second, me, again)
    for role, ident in ((GUEST, g), (ACCOUNT, s)):
        watcher = await ident.connect(port)
        await must(watcher, "watch", "welcome", code=code)
        p.role(role, ident, watcher)
    everyone = list(p.conns.values())
    assert (await player.move("draw"))["type"] == "ack"
    await settle(everyone)
    await p.probe(RACING, code, practice)
    # the second connection's finish would be the first's (one seat, one game): it is
    # the flags it was sent (``can_finish``), the first's the route itself
    p.seen.answers[(RACING, second, "finish")] = {"type": "flags", **flags_of(again.seen)}
    await p.finish(RACING, (GUEST, ACCOUNT))
    await p.end(RACING)
    await p.finish(RACING, (first,))  # the player wins by it: their game is over
    mark = len(player.seen)
    while (await player.expect("ack", timeout=ANSWER_S))["board"]["status"] != "won":
        pass
    if kind == "ghost":
        # their game is over: the ghost's board (which may come before the last of the
        # finish's acks, skipped by the wait for them)
        if not any(m["type"] == "boards" for m in player.seen[mark:]):
            await player.expect("boards")
        await settle(everyone)
        await p.probe(ONE_OVER, code)
        await p.finish(ONE_OVER, tuple(p.conns))
        await p.end(ONE_OVER)
    for client in everyone:
        await until_finished(client)
    await settle(everyone)
    await p.probe(OVER, code, practice)
    await p.finish(OVER, tuple(p.conns))
    await p.end(OVER)
    await p.close()
    return p.seen


def flags_of(messages: list[dict]) -> dict[str, bool]:
    """The latest ``can_hint`` and ``can_finish`` among ``messages`` ({}: none)."""
    flagged = [m for m in messages if "can_finish" in m]
    return {k: flagged[-1][k] for k in ("can_hint", "can_finish")} if flagged else {}


async def play_daily(
    port: int, clock: Clock, redis_url: str, cid: str, c: ch.Challenge
) -> tuple[Seen, Seen]:
    """Today's daily, its close 5 minutes away: ``racer`` (and a second device) plays an
    attempt, ``other-racer`` plays theirs through the close, ``finished``'s ended first,
    two spectators made none. Every route of the deal is asked in each phase: the racer's
    attempt on; over (the challenge open); the challenge closed (not final); final. Then
    a practice game on the deal, once final (the second ``Seen``)."""
    p = Play("daily", port)
    x, y, z, g, s = Identity(), Identity(), Identity(), Identity(), Identity()
    await s.register(port)
    finished = await z.connect(port)
    await must(finished, "attempt", "welcome", challenge=cid, name="Z")
    await must(finished, "resign", "ack", seq=1)
    await until_finished(finished)
    other = await y.connect(port)
    await must(other, "attempt", "welcome", challenge=cid, name="Y")
    assert (await other.move("draw"))["type"] == "ack"
    racer = await x.connect(port)
    mine = await racer.request("attempt", "welcome", challenge=cid, name="X")
    code = p.seen.code = mine["room"]["code"]
    assert (await racer.move("draw"))["type"] == "ack"
    second = await x.connect(port)
    again = await second.request("attempt", "welcome", challenge=cid, name="X")
    assert again["room"]["code"] == code, again  # the same attempt, from another device
    for role, ident, client in (
        (RACER, x, racer), (RACER2, x, second), (OTHER, y, other), (FINISHER, z, finished)
    ):  # fmt: skip
        p.role(role, ident, client)
    for role, ident in ((GUEST, g), (ACCOUNT, s)):
        watcher = await ident.connect(port)
        await must(watcher, "watch_board", "leaderboard", challenge=cid)
        p.role(role, ident, watcher)
    p.seen.challenge, p.seen.final_at = cid, c.final_at()
    rds = redis.Redis.from_url(redis_url)

    async def phase(name: str) -> None:
        await settle(list(p.conns.values()))
        rooms = sorted(rds.scan_iter(match="room:{*}"))
        await p.probe(name, code, practice=cid)
        a = p.seen.answers
        for role in p.conns:
            a[(name, role, "challenges")] = await p.fresh(role, "challenges", "challenges")
            a[(name, role, "leaderboard")] = await p.fresh(
                role, "watch_board", "leaderboard", challenge=cid
            )
        if name != FINAL:  # every refusal of the deal made nothing
            p.seen.made[name] = len(set(rds.scan_iter(match="room:{*}")) - set(rooms))
        await p.finish(name, tuple(p.conns))
        await p.end(name)

    await phase(RACING)
    await must(racer, "resign", "ack", seq=2)
    for client in (racer, second):
        await until_finished(client)
    await phase(OVER)
    clock.shift_to(c.closes + 1_000)  # closed: the other racer's attempt goes on
    assert (await other.move("draw"))["type"] == "ack"
    await phase(CLOSED)
    await must(other, "resign", "ack", seq=other.seq + 1)
    await until_finished(other)
    clock.shift_to(c.final_at() + 1_000)
    await phase(FINAL)
    await p.close()
    rds.close()

    async def practise(client: Client) -> dict:
        return await client.request("attempt", "welcome", challenge=cid, name="P", practice=True)

    return p.seen, await play_solo("daily-practice", port, practise, cid)


async def observe_kind(kind: str, redis_url: str) -> dict[str, Seen]:
    if kind.startswith("daily"):
        cid = day_id()
        c = ch.parse_daily(cid, (1,), 1800)
        assert c is not None
        clock = Clock()
        clock.shift_to(c.closes - 300_000)
        async with running(daily_config(redis_url, solver_finish_s=2.0), clock) as node:
            daily, practice = await play_daily(node.port, clock, redis_url, cid, c)
        return {"daily": daily, "daily-practice": practice}
    config = make_config(
        redis_url, countdown_ms=COUNTDOWN_MS, solver_finish_s=1.0, **KINDS[kind].node
    )
    async with running(config) as node:
        port, clock = node.port, node.clock
        if kind == "practice":

            async def practise(client: Client) -> dict:
                return await client.request("create", "welcome", name="P", practice=True, deal=DEAL)

            return {kind: await play_solo(kind, port, practise)}
        if kind == "ghost":
            source = await recorded_game(port, clock, GHOST_LAG_MS)

            async def race_ghost(client: Client) -> dict:
                return await client.request("ghost", "welcome", code=source, player="p1", name="P")

            return {kind: await play_solo(kind, port, race_ghost)}
        return {kind: await play_race(kind, port)}


# ---- the cells -----------------------------------------------------------------------
HTTP_STATUS = {"not_finished": 409, "not_yet": 403}


def refusal(route: str, got: dict) -> str:
    """The reason ``got`` refuses (else what it is)."""
    if route == "http":
        return str(got.get("error") if got.get("status") != 200 else "200")
    if got.get("type") == "flags":  # a second connection's finish: its can_finish
        return "allowed" if got.get("can_finish") else "can_finish false"
    return str(got.get("reason") if got.get("type") == "error" else got.get("type"))


def allowed(kind: str, route: str, got: dict, seen: Seen, role: str) -> bool:
    if route == "finish":
        # a race's line is played in a continuation of the race (its welcome comes
        # first); a quick match's random deal may be one the solver cannot win
        if got.get("type") == "welcome":
            return got["room"].get("parent") == seen.home[role]
        return (
            got.get("type") == "finishing"
            or (got.get("type") == "flags" and got.get("can_finish") is True)
            or (kind == "quick" and got.get("reason") in ("no_winning_line", "unknown"))
        )
    return {
        "replay": got.get("type") == "replay" and got["replay"]["code"] == seen.code,
        "http": got.get("status") == 200 and got.get("code") == seen.code,
        "ghost": got.get("type") == "welcome"
        and got["room"].get("ghost_of", {}).get("code") == seen.code,
        "hint": got.get("type") == "hint" and got.get("result") == "win",
        "practice": got.get("type") == "welcome" and got["room"]["practice"] is True,
    }[route]


def check(
    kind: str, phase: str, role: str, route: str, want: Expect, got: dict, seen: Seen
) -> str | None:
    """What is wrong with ``got`` as the answer ``want`` to ``route`` (None: nothing)."""
    if want[0] == "refused":
        reason = refusal(route, got)
        if route == "http" and got.get("status") != HTTP_STATUS.get(want[1]):
            return f"wanted {want[1]}, got status {got.get('status')} {reason}"
        wanted = "can_finish false" if got.get("type") == "flags" else want[1]
        if reason != wanted:
            return f"wanted {want[1]}, got {brief(got)}"
        # a not_yet says when it opens, in its field and in words
        opens = got.get("opens_at") == seen.final_at and "UTC" in got.get("message", "")
        if want[1] == "not_yet" and not opens:
            return f"not_yet without its opening time: {brief(got)}"
        return None
    if want[0] == "ok":
        return (
            None
            if allowed(kind, route, got, seen, role)
            else f"wanted it allowed, got {brief(got)}"
        )
    if want[0] in ("welcome", "resumed"):
        if got.get("type") not in ("welcome", "resumed"):
            return f"wanted a {want[0]}, got {brief(got)}"
        messages = [got, *got.get("then", [])]
        mine = seen.own.get(role) if route == "resume" else None
        shown = sight_of(messages, mine)
        if shown != want[1]:
            return f"its {got['type']} showed {shown}, not {want[1]}"
        leaked = set().union(*(cards_in(m, mine) for m in messages))
        if want[1] in (NONE, OUTLINES) and leaked:
            return f"cards of another game: {sorted(leaked)}"
        revealed = any("reveal" in m.get("room", {}) for m in messages)
        if len(want) > 2 and revealed != (want[2] == "reveal"):
            return "the deal revealed" if revealed else "no reveal"
        if route == "watch" and phase in ROOM_PHASE and got["room"]["phase"] != ROOM_PHASE[phase]:
            return f"watched in phase {got['room']['phase']}"
        return None
    if want[0] == "own":  # one's own attempt, ended: its board and result, nothing else
        if got.get("type") != "welcome":
            return f"wanted its own attempt, got {brief(got)}"
        if set(got.get("boards", {})) != {"p1"} or secrets_in(got):
            return f"more than its own board and result: {sorted(got)}"
        return None
    if want[0] in ("sealed", "final"):
        (entry,) = [e for e in got.get("challenges", []) if e["id"] == seen.challenge]
        deal = entry["deals"][0]
        if (deal["par"] is None and deal["reveal"] is None) != (want[0] == "sealed"):
            return f"par {deal['par']}, reveal {deal['reveal']} when {want[0]}"
        if role in (RACER, RACER2):  # the racer's own result
            status = "playing" if phase == RACING else "resigned"
            if (deal.get("you") or {}).get("status") != status:
                return f"their own result is not {status}: {deal.get('you')}"
        return None
    if want[0] == "row":
        rows = [r for r in got.get("rows", []) if r["code"] == seen.code]
        if len(rows) != 1 or rows[0]["status"] != want[1]:
            return f"the racer's row is not {want[1]}: {rows}"
        return None
    raise AssertionError(want)


def brief(got: dict) -> str:
    keys = ("type", "reason", "status", "error", "can_finish", "opens_at")
    return str({k: got[k] for k in keys if k in got})


# a play observes these kinds (the daily's practice is played after its attempts)
PLAYS = {kind: (kind,) for kind in KINDS if not kind.startswith("daily")}
PLAYS["daily"] = ("daily", "daily-practice")


@pytest.mark.parametrize("play", PLAYS)
def test_who_sees_what(play: str, redis_url: str) -> None:
    """Every cell (kind, phase, role) of one play: everything the role got in the phase
    of the kind of room, route by route and message by message, against the documents.
    (A play's cells share it, so they are one test: apart, a parallel run would play the
    kind again on every worker that took one of its cells.)"""
    observed = asyncio.run(observe_kind(play, redis_url))
    problems = [
        f"{kind}-{phase}-{role}: {problem}"
        for kind in PLAYS[play]
        for phase in KINDS[kind].phases
        for role in KINDS[kind].roles
        for problem in cell(kind, phase, role, observed[kind])
    ]
    assert not problems, "\n".join(problems)


def cell(kind: str, phase: str, role: str, seen: Seen) -> list[str]:
    """What is wrong with what ``role`` got in ``phase`` of ``kind`` (nothing: [])."""
    k = KINDS[kind]
    want = expected(kind, phase, role)
    problems: list[str] = []
    events, own = seen.events[(phase, role)], seen.own.get(role)
    if phase == OVER and not k.challenge:  # before the results the race ran on
        results = next(
            i for i, m in enumerate(events) if m.get("room", {}).get("phase") == "finished"
        )
        ending, events = events[:results], events[results:]
        if k.view == OUTLINE:  # whoever resigned watches outlines meanwhile: no card
            for m in ending:
                if leaked := cards_in(m, own):
                    problems.append(f"while the race ended: a {m['type']} names {sorted(leaked)}")
    shown, sees = sight_of(events, own), want["events"][0]
    # (a delayed view shows nothing new while nothing old enough has happened)
    lag = sees == DELAYED and shown == NONE and phase == ONE_OVER
    if shown != sees and not lag and not (k.challenge and phase == FINAL):
        problems.append(f"events: showed {shown}, not {sees}")
    if phase not in (OVER, FINAL) and (sees in (NONE, OUTLINES) or k.challenge):
        for m in events:  # no card of another game, nothing of the deal
            if leaked := cards_in(m, own):
                problems.append(f"events: a {m['type']} names {sorted(leaked)}")
            if (told := secrets_in(m)) and not (m["type"] == "hint" and k.practice):
                problems.append(f"events: a {m['type']} tells {sorted(told)}")
    for route, expect in want.items():
        if route == "events":
            continue
        got = seen.answers.get((phase, role, route))
        if got is None:
            problems.append(f"{route}: never asked")
        elif (problem := check(kind, phase, role, route, expect, got, seen)) is not None:
            problems.append(f"{route}: {problem}")
    # the flags the player was sent in the phase say what the routes answer (but those
    # of a challenge's final phase, sent before final_at: no message comes at it)
    flags = {} if k.challenge and phase == FINAL else seen.flags.get((phase, role), {})
    for name, route in (("can_hint", "hint"), ("can_finish", "finish")):
        if name in flags and flags[name] != (want[route][0] == "ok"):
            problems.append(f"{name} {flags[name]} where {route} is {want[route]}")
    if seen.made.get(phase):
        problems.append(f"the refusals made {seen.made[phase]} rooms")
    return problems
