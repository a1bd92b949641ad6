"""Accounts: claimed names, password hashes, sign-in sessions, the rooms each player is
seated in, a guest's name (that of their last seat), and the rate limits of signing in
and creating accounts.

A session token is given to the client once and kept here only as its SHA-256, so the
store never holds a usable token; the password only as its argon2 hash.
"""

from __future__ import annotations

import hashlib
import secrets
from typing import Any

from .base import Part
from .keys import player_key
from .scripts import CREATE_ACCOUNT, GUEST_NAME, HIT

SESSION_S = 30 * 86400  # a session lasts 30 days from its sign-in
ENDED = "sess:ended"  # accounts -> when (epoch ms) a session of theirs last ended
ENDED_KEPT_MS = 60_000  # ... kept this long: every node reads it every few seconds
ROOMS_KEPT = 20  # the rooms a player is listed in, newest first


def session_hash(token: str) -> str:
    return hashlib.sha256(token.encode()).hexdigest()


class Accounts(Part):
    def __init__(self, *args: Any) -> None:
        super().__init__(*args)
        self._create = self._script(CREATE_ACCOUNT)
        self._hit = self._script(HIT)
        self._guest_name = self._script(GUEST_NAME)

    async def create(self, canonical: str, name: str, password_hash: str, guest: str) -> str | None:
        """A new account under ``canonical`` (unique): its id, or None if the name is
        taken. ``guest``: the guest key whose statistics the account takes over."""
        account = secrets.token_hex(16)
        now = str(self.clock.now_ms())
        if self.cluster:  # the name and the account are two slots: two steps
            return await self._create_slots(canonical, account, name, password_hash, guest, now)
        made = await self._durably(
            self._create, [canonical, account, name, password_hash, guest, now]
        )
        return account if int(made) else None

    async def _create_slots(
        self, canonical: str, account: str, name: str, password_hash: str, guest: str, now: str
    ) -> str | None:
        """The account first (nobody can reach it yet), then its name (``SET NX``); a name
        taken meanwhile deletes the account again. A node dying in between leaves an
        account no name leads to: unreachable, a few bytes."""
        key = f"acct:{account}"
        fields = {"name": name, "hash": password_hash, "guest": guest, "created": now}
        async with self.redis.pipeline(transaction=False) as pipe:
            pipe.hset(key, mapping=fields)
            await self._replicated(pipe)
        async with self.redis.pipeline(transaction=False) as pipe:
            pipe.set(f"acct:name:{canonical}", account, nx=True)
            made = (await self._replicated(pipe))[0]
        if not made:
            await self._timed(self.redis.delete(key))
            return None
        return account

    async def find(self, canonical: str) -> tuple[str, str, str] | None:
        """(account id, name, password hash) of a claimed name, or None."""
        account: Any = await self._timed(self.redis.get(f"acct:name:{canonical}"))
        if account is None:
            return None
        got: Any = await self._timed(self.redis.hmget(f"acct:{account.decode()}", "name", "hash"))
        name, hashed = got
        if name is None:
            return None
        return account.decode(), name.decode(), hashed.decode()

    async def name_of(self, account: str) -> str | None:
        name: Any = await self._timed(self.redis.hget(f"acct:{account}", "name"))
        return name.decode() if name is not None else None

    async def guest_of(self, account: str) -> str:
        """The guest key an account was claimed from ("" if none)."""
        got: Any = await self._timed(self.redis.hget(f"acct:{account}", "guest"))
        return got.decode() if got else ""

    async def set_password(self, account: str, password_hash: str) -> None:
        await self._timed(self.redis.hset(f"acct:{account}", "hash", password_hash))

    # ---- sessions -----------------------------------------------------------------------
    async def new_session(self, account: str) -> str:
        """A new session token for ``account`` (only its hash is stored)."""
        token = secrets.token_urlsafe(32)
        hashed = session_hash(token)
        async with self.redis.pipeline(transaction=not self.cluster) as pipe:
            pipe.set(f"sess:{hashed}", account, ex=SESSION_S)
            pipe.sadd(f"acct:{account}:sess", hashed)
            pipe.expire(f"acct:{account}:sess", SESSION_S)
            await self._replicated(pipe)
        return token

    async def session(self, token: str) -> tuple[str, str] | None:
        """(account id, name) of a live session token, or None."""
        account: Any = await self._timed(self.redis.get(f"sess:{session_hash(token)}"))
        if account is None:
            return None
        name = await self.name_of(account.decode())
        return (account.decode(), name) if name is not None else None

    async def end_session(self, account: str, token_hash: str) -> None:
        async with self.redis.pipeline(transaction=not self.cluster) as pipe:
            pipe.delete(f"sess:{token_hash}")
            pipe.srem(f"acct:{account}:sess", token_hash)
            await self._replicated(pipe)
        await self._ended(account)

    async def end_sessions(self, account: str) -> int:
        """Sign ``account`` out everywhere: the number of sessions ended."""
        hashes: Any = await self._timed(self.redis.smembers(f"acct:{account}:sess"))
        async with self.redis.pipeline(transaction=not self.cluster) as pipe:
            for hashed in hashes:
                pipe.delete(f"sess:{hashed.decode()}")
            pipe.delete(f"acct:{account}:sess")
            await self._replicated(pipe)
        await self._ended(account)
        return len(hashes)

    async def _ended(self, account: str) -> None:
        """Note that sessions of ``account`` ended, for every node's open connections."""
        now = self.clock.now_ms()
        async with self.redis.pipeline(transaction=False) as pipe:
            pipe.zadd(ENDED, {account: now})
            pipe.zremrangebyscore(ENDED, 0, now - ENDED_KEPT_MS)
            await self._timed(pipe.execute())

    async def ended_since(self, since: int) -> set[str]:
        """The accounts some session of which ended at or after ``since`` (epoch ms)."""
        got: Any = await self._timed(self.redis.zrangebyscore(ENDED, since, "+inf"))
        return {a.decode() for a in got}

    async def live_sessions(self, hashes: list[str]) -> list[bool]:
        """Whether each session (by its hash) has not ended."""
        async with self.redis.pipeline(transaction=False) as pipe:
            for hashed in hashes:
                pipe.exists(f"sess:{hashed}")
            got: Any = await self._timed(pipe.execute())
        return [bool(n) for n in got]

    # ---- where a player sits ------------------------------------------------------------
    async def seated(self, who: str, code: str, at: int) -> None:
        """``who`` has a seat in room ``code`` (every device of theirs may resume it)."""
        key = player_key(who, "rooms", self.cluster)
        async with self.redis.pipeline(transaction=False) as pipe:
            pipe.zadd(key, {code: at})
            pipe.zremrangebyrank(key, 0, -ROOMS_KEPT - 1)
            pipe.expire(key, SESSION_S)
            await self._timed(pipe.execute())

    async def guest_seated(self, who: str, name: str, at: int, keep_s: int) -> None:
        """The guest ``who`` took a seat named ``name`` at ``at`` (epoch ms): their
        profile's name from now on, unless they took a seat since; kept ``keep_s``."""
        key = player_key(who, "name", self.cluster)
        await self._timed(self._guest_name(keys=[key], args=[name, at, keep_s]))

    async def guest_name(self, who: str) -> str | None:
        """The name of the last seat the guest ``who`` took, or None (no seat kept)."""
        got: Any = await self._timed(self.redis.hget(player_key(who, "name", self.cluster), "name"))
        return got.decode() if got is not None else None

    async def rooms_of(self, who: str) -> list[str]:
        key = player_key(who, "rooms", self.cluster)
        raw: Any = await self._timed(self.redis.zrevrange(key, 0, -1))
        return [c.decode() for c in raw]

    async def unseat(self, who: str, codes: list[str]) -> None:
        if codes:
            await self._timed(self.redis.zrem(player_key(who, "rooms", self.cluster), *codes))

    # ---- rate limits --------------------------------------------------------------------
    async def hit(self, key: str, limit: int, window_s: int, count: bool = True) -> int:
        """Count one attempt against ``key`` (at most ``limit`` per ``window_s``, a window
        starting at the first): 0 when it is allowed, else the seconds until the window
        ends. With ``count`` False it only checks."""
        retry_ms = await self._timed(
            self._hit(
                keys=[f"rl:{key}"], args=[f"rl:{key}", limit, window_s * 1000, 1 if count else 0]
            )
        )
        return (int(retry_ms) + 999) // 1000

    async def forgive(self, key: str) -> None:
        """Forget the attempts counted against ``key`` (a successful sign-in)."""
        await self._timed(self.redis.delete(f"rl:{key}"))
