"""Lobby commands: create, join, watch, resume, ready, start, leave, the rooms list and
quick match; and entering a room as a player (a welcome, or only the missed events)."""

from __future__ import annotations

import asyncio
import secrets
from collections.abc import Callable
from typing import Any

import structlog

from ...engine import Deal, EngineError, Settings
from ..clock import Clock
from ..config import Config
from ..contracts import Spawn
from ..domain import movelog, rating
from ..domain.errors import ServiceError
from ..domain.options import RoomOptions
from ..domain.room import (
    FINISHED,
    RACING,
    WAITING,
    Room,
    add_device,
    add_player,
    all_ready,
    as_ended,
    random_deal,
    remove_player,
    set_ready,
    start,
)
from ..domain.visibility import Sight, sees_boards
from ..hub import RoomHub
from ..store import Store
from ..store.matchmaking import Pair
from ..store.ratings import GUEST_KEEP_S
from ..wire import Create, GhostRequest, Join, Watch, encode, encode_text
from ..wire.encode import stored_event
from ..wire.outbound import Resumed
from .conn import Addresses, Conn, seat_name, seat_owner
from .ghosts import Ghosts
from .race import player_hub
from .registry import Attendance
from .rooms import RoomOps, SeatToken, new_token, token_session
from .solving import Solving

log = structlog.get_logger("klondike_race.lobby")


class Lobby:
    def __init__(
        self,
        config: Config,
        store: Store,
        attendance: Attendance,
        rooms: RoomOps,
        solving: Solving,
        ghosts: Ghosts,
        spawn: Spawn,
        open_here: Callable[[], int],
        clock: Clock,
        addresses: Addresses,
    ) -> None:
        self.clock = clock
        self.addresses = addresses  # a seat keeps its client address, keyed
        self.config = config
        self.store = store
        self.attendance = attendance
        self.rooms = rooms
        self.solving = solving
        self.ghosts = ghosts
        self.spawn = spawn
        self.open_here = open_here  # connections open on this node
        self.tickets: dict[str, Conn] = {}  # quick-match tickets of connections here

    # ---- new rooms --------------------------------------------------------------------
    async def create(self, conn: Conn, m: Create) -> None:
        deal: dict[str, Any] | None = None  # (a random one: new_room's)
        if m.deal is not None:
            if not self.config.dev:
                raise ServiceError("deal_not_allowed", "explicit deals need a dev server")
            try:
                deal = Deal.from_json(m.deal).to_json()
            except EngineError as err:
                raise ServiceError("bad_field", f"create: deal: {err}") from None
            if deal != m.deal:  # one strict reading: the seed a string, cards as written
                raise ServiceError(
                    "bad_field", 'create: deal: {"seed": "S"} or {"cards": [52 names like "Ah"]}'
                )
            if m.options.winnable_only and "seed" not in deal:
                raise ServiceError("bad_field", "create: winnable_only needs a seeded deal")
        name = seat_name(conn, m.name)
        # entering a room: out of the quick-match queue now, not once the room is stored
        # (a winnable-only deal's search can take seconds, and a match meanwhile would
        # pull this player into a quick race)
        await self._drop_ticket(conn)
        room, pid, secret = await self.new_room(name, m.options, deal, conn)
        await self.enter(conn, room, pid, SeatToken(room.code, pid, secret))

    async def new_room(
        self,
        name: str,
        options: RoomOptions,
        deal: dict[str, Any] | None = None,
        conn: Conn | None = None,
        parent: str | None = None,
        reveal_at: int | None = None,
        deal_of: str | None = None,
        elapsed: int = 0,
    ) -> tuple[Room, str, str]:
        """A new room with its first player seated: (room, player id, secret). A
        winnable-only room deals the first seed from a random (or the given) one that the
        solver proves winnable. ``reveal_at``: the deal stays secret until then (a
        practice game on a challenge's deal)."""
        if deal is None:
            deal = random_deal(options.settings)
        if options.winnable_only:
            settings = options.settings.to_dict()
            deal = {"seed": await self.solving.winnable_seed(deal["seed"], settings)}
        who, guest = seat_owner(conn) if conn is not None else ("", True)
        return await self.rooms.create_seated(
            name,
            options,
            deal,
            parent,
            who,
            guest,
            conn.session if conn else None,
            # (a practice game is one seat, never counted: its address is not kept)
            await self.addresses.of(conn) if conn and not options.practice else "",
            reveal_at=reveal_at,
            deal_of=deal_of,
            elapsed=elapsed,
        )

    async def race_ghost(self, conn: Conn, m: GhostRequest) -> None:
        """A practice race against a recorded game (node/ghosts.py), entered at once: the
        ghost starts playing as the player enters."""
        room, pid, token = await self.ghosts.new_race(conn, m)
        await self.enter(conn, room, pid, token)

    # ---- entering rooms ---------------------------------------------------------------
    async def enter(
        self,
        conn: Conn,
        room: Room,
        pid: str,
        token: SeatToken | None,
        log: list[str] | None = None,
        since: int | None = None,
    ) -> None:
        """Seat ``conn`` as player ``pid`` with their game replayed from ``log``: a
        welcome, or with ``since`` only the events missed since then when they are kept.
        A guest's seat names their profile (``token``: a seat given now, not resumed)
        before the welcome, so their own name links to it from the first message."""
        game = room.game_of(log or (), pid)
        await self._drop_ticket(conn)  # in a room now: no longer waiting for a quick match
        seat = room.seat(pid)
        who = conn.identity.key if conn.identity is not None else None
        mine = seat if seat is not None and seat.who == who else None  # (not anonymous)
        if mine is not None and mine.guest:
            at = self.clock.now_ms() if token is not None else room.created
            await self.store.accounts.guest_seated(mine.who, mine.name, at, GUEST_KEEP_S)

        async def welcome(hub: RoomHub) -> None:
            # the race may have ended since the room was read
            as_ended(game, hub.public.end_reason if hub.phase() == FINISHED else None)
            if since is None or not await self._send_missed(conn, hub, since):
                told = None if token is None else str(token)
                conn.send(await hub.snapshot(conn, "welcome", told))

        await self.attendance.attach(conn, room.code, "player", welcome, pid, game)
        self.ghosts.resume(room)  # a ghost race's ghost plays on, on this node
        if mine is not None:
            await self.store.accounts.seated(mine.who, room.code, room.created)
        conn.log.info("player in room", seq=movelog.logged(game))

    async def _send_missed(self, conn: Conn, hub: RoomHub, since: int) -> bool:
        """Resume with only the events missed since ``since``, when they are still kept."""
        assert hub.version is not None
        if since > hub.version:
            return False
        oldest = await self.store.rooms.oldest_event(hub.code)
        if since < hub.version and (oldest is None or oldest > since + 1):
            return False
        events = await self.store.rooms.events_since(hub.code, since)
        for _ in range(5):  # events this hub delivered while they were read: read again
            if hub.version <= (events[-1]["v"] if events else since):
                break
            events += await self.store.rooms.events_since(
                hub.code, events[-1]["v"] if events else since
            )
        else:
            return False
        if sees_boards(hub.sight(conn)) and any(e.get("type") == "progress" for e in events):
            return False  # stored events carry no boards: a full welcome has them all
        phase = hub.phase()
        assert conn.role is not None
        resumed: Resumed = {
            "type": "resumed",
            "v": since,
            "role": conn.role,
            "server_time": self.clock.now_ms(),
            "room": hub.public.to_json(phase),
        }
        hub.add_own(resumed, conn, phase)
        conn.send(encode(resumed))
        # (none for those who see the race behind it: the standings now are live)
        behind = hub.sight(conn) is Sight.DELAYED_BOARDS
        leaderboard = None if behind else hub.leaderboard()
        flags = hub.flags(conn) if conn.role == "player" else None
        seat = conn.player if conn.role == "player" else None
        for event in events:
            if event["v"] <= hub.version:
                data = stored_event(event, phase, leaderboard, flags, seat)
                if data is not None:
                    conn.send(data)
        return True

    async def join(self, conn: Conn, m: Join) -> None:
        """A seat in a waiting room; a player already seated there (from another device)
        gets their own seat back, with a token of this device's, in any phase (a new seat
        is refused to a connection that watched the race: its own one is not)."""
        watched = m.code in conn.watched
        secret, hashed = new_token(conn.session)
        seat: list[str] = []
        who, guest = seat_owner(conn)
        name = seat_name(conn, m.name)
        address = await self.addresses.of(conn)
        # this connection's own seat here (anonymous, or its identity changed since)
        mine_here = conn.hub is not None and conn.hub.code == m.code and conn.role == "player"
        here = conn.player if mine_here else None

        def change(room: Room) -> Room:
            mine = room.seat_of(who) or (room.seat(here) if here else None)
            if mine is not None:
                seat[:] = [mine.id]
                return add_device(room, mine.id, hashed)
            if watched:
                raise ServiceError(
                    "watched_this_race", "a connection that watched this race cannot join it"
                )
            new, pid = add_player(room, name, hashed, self.clock.now_ms(), who, guest, address)
            seat[:] = [pid]
            return new

        room = await self.rooms.change(m.code, change)
        log = await self.store.log.read(m.code, seat[0])
        await self.enter(conn, room, seat[0], SeatToken(m.code, seat[0], secret), log)

    async def watch(self, conn: Conn, m: Watch) -> None:
        """Watch a room; a player who sits in it, from any device, joins it instead until
        it has finished (a racer sees no other board live)."""
        here = conn.hub
        seated = (
            here is not None
            and here.code == m.code
            and conn.role == "player"
            and here.phase() != FINISHED
        )
        who, _ = seat_owner(conn)
        if not seated and who:
            loaded = await self.store.rooms.load(m.code)
            room = Room.from_json(loaded[0]) if loaded else None
            seated = room is not None and room.status != FINISHED and room.seat_of(who) is not None
        if seated:
            raise ServiceError("already_player", "you are a player of this room: join it")

        async def welcome(hub: RoomHub) -> None:
            conn.send(await hub.snapshot(conn, "welcome"))

        if conn.ticket is not None:  # watching now: no longer waiting for a quick match
            if await self.store.rooms.load(m.code) is None:  # (a refusal changes nothing)
                raise ServiceError("no_room", f"no room {m.code}")
            await self._drop_ticket(conn)
        await self.attendance.attach(conn, m.code, "spectator", welcome)

    async def resume(self, conn: Conn, text: str, since: int | None) -> None:
        token = SeatToken.parse(text)
        loaded = await self.store.rooms.load(token.code) if token is not None else None
        if token is None or loaded is None:
            raise ServiceError("bad_token", "unknown or invalid token")
        room = Room.from_json(loaded[0])
        seat = room.seat(token.seat)
        kept = seat.token_hash.split() if seat else []
        found = next(
            (got for got in (token_session(k, token.secret) for k in kept) if got[0]), None
        )
        if found is None:
            raise ServiceError("bad_token", "unknown or invalid token")
        session = found[1]
        if session is not None and not (await self.store.accounts.live_sessions([session]))[0]:
            raise ServiceError(
                "bad_token", "the sign-in this seat was taken under has ended: sign in and join"
            )
        log = await self.store.log.read(token.code, token.seat)
        await self.enter(conn, room, token.seat, None, log, since)

    # ---- in the room ------------------------------------------------------------------
    async def ready(self, conn: Conn, ready: bool) -> None:
        hub = player_hub(conn)
        countdown, player = self.config.countdown_ms, conn.player or ""

        def change(room: Room) -> Room:
            new = set_ready(room, player, ready, self.clock.now_ms())
            return start(new, self.clock.now_ms(), countdown) if all_ready(new) else new

        await self.rooms.change(hub.code, change)

    async def start(self, conn: Conn) -> None:
        hub = player_hub(conn)
        countdown, player = self.config.countdown_ms, conn.player
        await self.rooms.change(
            hub.code, lambda r: start(r, self.clock.now_ms(), countdown, player)
        )

    async def leave(self, conn: Conn) -> None:
        hub = conn.hub
        if hub is None:
            raise ServiceError("not_in_room", "not in a room")
        if conn.role == "player" and hub.phase() == WAITING:
            pid, countdown = conn.player or "", self.config.countdown_ms

            def change(room: Room) -> Room:  # the last one not ready left: the countdown
                new = remove_player(room, pid, self.clock.now_ms())
                return start(new, self.clock.now_ms(), countdown) if all_ready(new) else new

            await self.rooms.change(hub.code, change)
        await self.attendance.detach(conn)
        conn.send(encode_text({"type": "left", "code": hub.code}))

    async def unseat(self, conn: Conn, key: str) -> None:
        """``conn`` is no longer the player ``key`` (it signed out, or its session ended
        elsewhere): it leaves the seat of that player it sits in, as ``leave`` does (a
        waiting room's seat is given up): its device's guest plays none of their games."""
        hub = conn.hub
        if hub is None or conn.role != "player":
            return
        # the room as its events left it (the hub's Room is as it was when it opened)
        seat = hub.public.seat(conn.player or "")
        if seat is None or seat.who != key:
            return
        try:
            await self.leave(conn)
        except ServiceError as err:  # the countdown began meanwhile, a busy room
            conn.log.info("seat kept, connection out", reason=err.reason)
            await self.attendance.detach(conn)
            conn.send(encode_text({"type": "left", "code": hub.code}))

    async def list_rooms(self, conn: Conn) -> None:
        now = self.clock.now_ms()
        rooms = [Room.from_json(state) for state in await self.store.rooms.list_public()]
        # a room whose time limit passed is not a live race
        live = [r for r in rooms if r.phase(now) != FINISHED]
        # nor one nobody is connected to: every node marks the rooms its players are in
        # each sweep interval, so a room unmarked for two intervals has nobody
        seen = await self.store.sweeping.last_seen_many([r.code for r in live])
        idle = now - int(2000 * self.config.sweep_interval_s)
        pairs = zip(live, seen, strict=True)
        listed = [r.listed(now) for r, at in pairs if at is None or at >= idle]
        racing = sum(1 for r in listed if r["phase"] == RACING)
        online = await self.store.sweeping.online(self.open_here())
        conn.send(encode({"type": "rooms", "rooms": listed, "online": online, "racing": racing}))

    # ---- quick match ------------------------------------------------------------------
    async def quick(self, conn: Conn, name: str, draw: int = 1) -> None:
        """Queue for a quick match (Draw 1 or Draw 3) by rating (store/matchmaking.py): a
        race at once when a waiting player's window admits this one, else ``queued``."""
        await self.attendance.detach(conn)
        await self._drop_ticket(conn)  # asked again: one ticket at a time
        who, guest = seat_owner(conn)
        me: dict[str, Any] = {
            "name": seat_name(conn, name),
            "who": who,
            "guest": guest,
            "session": conn.session,
            "address": await self.addresses.of(conn),
        }
        ticket = f"{draw}.{secrets.token_hex(12)}"  # its variant, then its own part
        conn.ticket = ticket
        self.tickets[ticket] = conn
        (score,) = await self.ratings_of([who], draw)
        pairs = await self.store.matchmaking.match(self.clock.now_ms(), draw, ticket, score, me)
        for pair in pairs:
            await self.pair(pair, conn)
        if conn.ticket == ticket:
            conn.send(encode_text({"type": "queued", "draw": draw}))

    async def leave_queue(self, conn: Conn) -> None:
        """Out of the quick-match queue (``unqueued``), the connection kept; a match made
        before this came has entered it already, and leaves nothing to cancel."""
        ticket = conn.ticket
        if ticket is None:
            raise ServiceError("not_queued", "not waiting for a quick match")
        await self._drop_ticket(conn)
        conn.send(encode_text({"type": "unqueued", "draw": _draw_of(ticket)}))

    async def ratings_of(self, whos: list[str], draw: int) -> list[int]:
        """Players' display ratings of a variant, Draw ``draw`` (1500 when unknown, or for
        no one), read together: what quick matches and arena pairing go by."""
        named = [w for w in whos if w]
        stats = await self.store.ratings.variant_stats(named, f"draw{draw}")
        found = dict(zip(named, stats, strict=True))
        return [rating.display(s["mu"]) if (s := found.get(w)) else rating.BASE for w in whos]

    async def matcher(self, interval: float = 0.5) -> None:
        """While this node has players waiting, pair their queues every ``interval``: the
        windows widen with time, so two waiting players may become a match."""
        while True:
            await asyncio.sleep(interval)
            try:
                for draw in sorted({_draw_of(t) for t in self.tickets}):
                    for pair in await self.store.matchmaking.match(self.clock.now_ms(), draw):
                        await self.pair(pair)
            except asyncio.CancelledError:
                raise
            except Exception:
                log.exception("quick matching failed")

    async def pair(self, pair: Pair, conn: Conn | None = None) -> None:
        """A race for a matched pair: ``conn`` (when it holds one of the tickets) enters
        at once; the other ticket's node (any) is told."""
        (ticket1, p1), (ticket2, p2) = pair
        (secret1, hash1), (secret2, hash2) = (new_token(p.get("session")) for p in (p1, p2))

        def seat(room: Room, now: int) -> tuple[Room, list[str]]:
            pids = []
            for p, hashed in ((p1, hash1), (p2, hash2)):
                room, pid = add_player(
                    room, p["name"], hashed, now, p["who"], p["guest"], p.get("address", "")
                )
                pids.append(pid)
            return room, pids

        settings = Settings(draw=_draw_of(ticket1))
        room, pids = await self.rooms.create(
            RoomOptions(settings=settings, quick=True), random_deal(settings), seat
        )
        for ticket, pid, secret, held in (
            (ticket1, pids[0], secret1, p1),
            (ticket2, pids[1], secret2, p2),
        ):
            token = SeatToken(room.code, pid, secret)
            if conn is not None and ticket == conn.ticket:
                self.tickets.pop(ticket, None)
                conn.ticket = None
                await self.enter(conn, room, pid, token)
            else:
                await self.store.matchmaking.notify(ticket, held, {"token": str(token)})

    def matched(self, ticket: str, payload: dict[str, Any]) -> None:
        """News from any node: the connection waiting with ``ticket`` has a race."""
        conn = self.tickets.pop(ticket, None)
        if conn is None:
            return
        conn.ticket = None
        token = payload["token"]
        self.enter_made(conn, token, encode_text({"type": "matched", "token": token}), False)

    def enter_made(self, conn: Conn, token: str, news: str, first: bool) -> None:
        """``conn`` enters a race made for it elsewhere (a quick match, an arena's
        pairing) as a resume of its seat would, ``news`` told before the race's welcome
        (``first``) or after it. The entry is ``conn.entering``: a closing connection
        waits for it before it leaves its room (``cancel_quick``)."""

        async def enter() -> None:
            try:
                if first:
                    conn.send(news)
                await self.resume(conn, token, None)
                if not first:
                    conn.send(news)
            except Exception:
                conn.log.exception("entering a race made for the connection failed")

        conn.entering = self.spawn(enter())

    async def cancel_quick(self, conn: Conn) -> None:
        """``conn`` is closing: from now on no match enters it, and an entry already under
        way (a quick match's, an arena race's: ``enter_made``) is waited for, so that the
        connection's cleanup, after this, leaves its room."""
        await self._drop_ticket(conn)
        if conn.entering is not None:
            await asyncio.wait([conn.entering])
            conn.entering = None

    async def _drop_ticket(self, conn: Conn) -> None:
        ticket, conn.ticket = conn.ticket, None
        if ticket is not None:
            self.tickets.pop(ticket, None)
            await self.store.matchmaking.cancel(ticket, _draw_of(ticket))


def _draw_of(ticket: str) -> int:
    """The variant of a quick-match ticket (``D.HEX``)."""
    return int(ticket.partition(".")[0])
