"""Who a connection's player is: hello (a guest's device identity or an account's
session), claiming a name (register), signing in and out, changing the password.

Passwords are hashed with argon2id (argon2-cffi's profile KR_PASSWORD_PROFILE) in worker
threads, at most two at a time per node, never logged or echoed. A sign-in with an unknown
name checks a dummy hash, so "wrong name or password" takes the same time either way.
"""

from __future__ import annotations

import asyncio
import secrets
from collections.abc import Iterable
from typing import Any

from argon2 import PasswordHasher, profiles
from argon2.exceptions import InvalidHashError, VerificationError

from ..clock import Clock
from ..domain import players
from ..domain.errors import RateLimited, ServiceError
from ..domain.players import ACCOUNT, Identity
from ..domain.room import FINISHED, Room
from ..store import Store
from ..store.accounts import session_hash
from ..wire import ChangePassword, Hello, Register, SignIn, SignOut, encode_text, outbound
from .conn import Conn

# (limit, window in seconds) of each kind of attempt
SIGN_IN_PER_ACCOUNT = (5, 900)  # failed sign-ins of one account
SIGN_IN_PER_ADDRESS = (20, 600)  # sign-ins from one address
ACCOUNTS_PER_ADDRESS = (5, 3600)  # accounts created from one address


class Players:
    def __init__(self, store: Store, password_profile: str, clock: Clock) -> None:
        self.clock = clock
        self.store = store
        self.hasher = PasswordHasher.from_parameters(getattr(profiles, password_profile))
        self._hashing = asyncio.Semaphore(2)  # each hash takes 64 MiB for ~50 ms
        self._dummy: str | None = None

    async def _hash(self, password: str) -> str:
        async with self._hashing:
            return await asyncio.to_thread(self.hasher.hash, password)

    async def _verify(self, hashed: str | None, password: str) -> bool:
        """Whether ``password`` matches ``hashed``; with None, a dummy hash is checked so
        an unknown name costs the same time as a wrong password."""
        if hashed is None:
            if self._dummy is None:
                self._dummy = await self._hash(secrets.token_urlsafe(16))
            hashed = self._dummy
        async with self._hashing:
            try:
                return await asyncio.to_thread(self.hasher.verify, hashed, password)
            except (VerificationError, InvalidHashError):
                return False

    # ---- who is here ------------------------------------------------------------------
    async def hello(self, conn: Conn, m: Hello) -> None:
        """Who this connection is; a refused hello (an ended session) changes nothing."""
        guest = players.guest(m.device) if m.device is not None else None
        account = None
        if m.session is not None:
            got = await self.store.accounts.session(m.session)
            if got is None:
                raise ServiceError("bad_session", "this session has ended: sign in again")
            account = Identity(ACCOUNT + got[0], got[1], False)
            conn.session = session_hash(m.session)
        if guest is not None:
            conn.guest = conn.identity = guest
        if account is not None:
            conn.identity = account
        else:
            conn.session = None  # the device's guest now: its seats are no session's
        await self._tell(conn)

    async def _tell(self, conn: Conn, session: str | None = None) -> None:
        """The ``identity`` message: who the connection is now, the unfinished rooms the
        player sits in, and a new session token when one was just made."""
        identity = conn.identity
        assert identity is not None
        told: outbound.Identity = {
            "type": "identity",
            "player": identity.public(),
            "rooms": await self._rooms(identity),
        }
        if session is not None:
            told["session"] = session
        conn.send(encode_text(told))

    async def _rooms(self, identity: Identity) -> list[dict[str, Any]]:
        """The unfinished rooms ``identity`` sits in (finished ones leave the list)."""
        out, done = [], []
        now = self.clock.now_ms()
        for code in await self.store.accounts.rooms_of(identity.key):
            loaded = await self.store.rooms.load(code)
            room = Room.from_json(loaded[0]) if loaded else None
            seat = room.seat_of(identity.key) if room else None
            if room is None or seat is None or room.phase(now) == FINISHED:
                done.append(code)
                continue
            out.append({"code": code, "phase": room.phase(now), "player": seat.id})
        await self.store.accounts.unseat(identity.key, done)
        return out

    # ---- accounts ---------------------------------------------------------------------
    async def register(self, conn: Conn, m: Register) -> None:
        """Claim a name: a new account, signed in on this connection. A guest (hello
        with a device) keeps their statistics under it."""
        name = players.display_name(m.name)
        players.check_password(m.password)
        await self._limit(f"create:{conn.address}", ACCOUNTS_PER_ADDRESS, "accounts created")
        guest = conn.guest.key if conn.guest is not None else ""
        account = await self.store.accounts.create(
            players.canonical(name), name, await self._hash(m.password), guest
        )
        if account is None:
            raise ServiceError("name_taken", f"the name {name!r} is taken")
        if guest:  # the guest's statistics, ratings and history are the account's now
            await self.store.ratings.claim_guest(guest, ACCOUNT + account)
        await self._signed_in(conn, account, name)

    async def sign_in(self, conn: Conn, m: SignIn) -> None:
        canonical = players.canonical(m.name)
        await self._limit(f"signin:addr:{conn.address}", SIGN_IN_PER_ADDRESS, "sign-ins")
        await self._limit(
            f"signin:name:{canonical}", SIGN_IN_PER_ACCOUNT, "failed sign-ins", count=False
        )
        found = await self.store.accounts.find(canonical)
        if not await self._verify(found[2] if found else None, m.password) or found is None:
            await self.store.accounts.hit(f"signin:name:{canonical}", *SIGN_IN_PER_ACCOUNT)
            raise ServiceError("bad_credentials", "wrong name or password")
        await self.store.accounts.forgive(f"signin:name:{canonical}")
        await self._signed_in(conn, found[0], found[1])

    async def sign_out(self, conn: Conn, m: SignOut) -> str:
        """End this session (or, ``everywhere``, every session of the account); the
        connection is its guest again (or nobody, without a device identity). The player
        key it had, whose seat it gives up (node/lobby.py ``unseat``)."""
        account = self._account(conn)
        if m.everywhere:
            await self.store.accounts.end_sessions(account)
        elif conn.session is not None:
            await self.store.accounts.end_session(account, conn.session)
        await self._as_guest(conn)
        return ACCOUNT + account

    async def _as_guest(self, conn: Conn) -> None:
        """The connection is its device's guest again (or nobody), and is told so."""
        conn.session = None
        conn.identity = conn.guest
        if conn.identity is None:
            conn.send(encode_text({"type": "identity", "player": None, "rooms": []}))
        else:
            await self._tell(conn)

    async def sessions_ended(
        self, conns: Iterable[Conn], accounts: set[str]
    ) -> list[tuple[Conn, str]]:
        """Some sessions of ``accounts`` ended (a sign-out everywhere, a new password, on
        any node): those of ``conns`` signed in with one of them are guests again. Each
        such connection, with the player key it had."""
        signed = [
            c
            for c in conns
            if c.session is not None
            and c.identity is not None
            and c.identity.key.removeprefix(ACCOUNT) in accounts
        ]
        if not signed:
            return []
        live = await self.store.accounts.live_sessions([c.session or "" for c in signed])
        out = []
        for conn, alive in zip(signed, live, strict=True):
            if not alive and conn.session is not None and conn.identity is not None:
                conn.log.info("signed out elsewhere")
                out.append((conn, conn.identity.key))
                await self._as_guest(conn)
        return out

    async def change_password(self, conn: Conn, m: ChangePassword) -> None:
        """A new password: every other session of the account ends, this connection
        gets a new one."""
        account = self._account(conn)
        players.check_password(m.new_password)
        canonical = players.canonical(conn.identity.name or "") if conn.identity else ""
        await self._limit(
            f"signin:name:{canonical}", SIGN_IN_PER_ACCOUNT, "failed sign-ins", count=False
        )
        found = await self.store.accounts.find(canonical)
        if found is None or not await self._verify(found[2], m.password):
            await self.store.accounts.hit(f"signin:name:{canonical}", *SIGN_IN_PER_ACCOUNT)
            raise ServiceError("bad_credentials", "wrong password")
        await self.store.accounts.set_password(account, await self._hash(m.new_password))
        await self.store.accounts.end_sessions(account)
        await self._signed_in(conn, account, found[1])

    async def _signed_in(self, conn: Conn, account: str, name: str) -> None:
        session = await self.store.accounts.new_session(account)
        conn.identity = Identity(ACCOUNT + account, name, False)
        conn.session = session_hash(session)
        await self._tell(conn, session)

    def _account(self, conn: Conn) -> str:
        if conn.identity is None or conn.identity.guest:
            raise ServiceError("not_signed_in", "sign in first")
        return conn.identity.key.removeprefix(ACCOUNT)

    async def _limit(self, key: str, limit: tuple[int, int], what: str, count: bool = True) -> None:
        wait = await self.store.accounts.hit(key, *limit, count=count)
        if wait:
            raise RateLimited(f"too many {what} ({limit[0]} per {limit[1] // 60} min)", wait)
