"""A connection of the node's own to the Redis primary: the group commit's (store/moves.py),
and with ``coalesce``, the one the node's other commands share (store/multiplexed.py).

Each group commit is one ``EVALSHA`` of APPEND_MOVES (and a ``WAIT`` in the same write
when moves wait for replicas). Through redis-py such a call costs about 245 µs of CPU on
the project's machine (its pool, retry wrapper, stream reader and reply parser), against
50-75 µs for the same bytes written on an asyncio protocol and parsed by hiredis
(docs/benchmarks.md); in an open loop most moves are alone in their round trip, so that
was a fifth of a move's CPU at 500 moves/s. This connection does only that: commands
packed as RESP, one write, replies read by hiredis in ``data_received``. With
``coalesce``, the calls made in one turn of the event loop share one write, at its end.

It keeps the command client's failure semantics: a broken or timed-out connection is
dropped and the commands are tried again (3 times, backing off 50 ms to 0.5 s; APPEND_MOVES
answers a repeat by its sequence check); a primary that became a replica (``READONLY``,
after a failover) is left and the primary found again (Sentinel names it); any other error
reply raises redis-py's exception for it, NoScriptError included. A Redis Cluster, a TLS
or a Unix-socket URL keep redis-py's way (``for_url`` says None). The node uses it by
default; ``KR_COMMIT_CONNECTION=0`` commits through redis-py instead (docs/operations.md).
"""

from __future__ import annotations

import asyncio
import collections
from collections.abc import Awaitable, Callable
from typing import Any, cast

import hiredis
from redis._parsers.base import BaseParser
from redis.asyncio.connection import parse_url
from redis.exceptions import ConnectionError as RedisConnectionError
from redis.exceptions import TimeoutError as RedisTimeoutError

RETRIES = 3  # as the command client's Retry(ExponentialBackoff(cap=0.5, base=0.05), 3)
Command = tuple[Any, ...]  # bytes, str, int or float arguments


def pack(commands: list[Command]) -> bytes:
    """Commands as RESP arrays of bulk strings, back to back."""
    out: list[bytes] = []
    for command in commands:
        out.append(b"*%d\r\n" % len(command))
        for arg in command:
            data = arg if isinstance(arg, bytes) else str(arg).encode()
            out.append(b"$%d\r\n" % len(data))
            out.append(data)
            out.append(b"\r\n")
    return b"".join(out)


def error_of(reply: hiredis.ReplyError) -> Exception:
    """redis-py's exception for an error reply (a replica's ``READONLY``: a lost
    connection, so that the primary is found again)."""
    text = str(reply)
    if text.startswith("READONLY"):  # an old primary, now a replica: find the primary again
        return RedisConnectionError(f"the primary is now a replica: {text}")
    return cast(Exception, BaseParser.parse_error(text))  # type: ignore[no-untyped-call]


class _Replies(asyncio.Protocol):
    def __init__(self, coalesce: bool = False) -> None:
        self.reader = hiredis.Reader()
        self.waiting: collections.deque[asyncio.Future[Any]] = collections.deque()
        self.transport: asyncio.Transport | None = None
        self.open = False
        # ``coalesce``: what is sent in one turn of the event loop goes in one write, at
        # its end (``outbox``)
        self.coalesce = coalesce
        self.outbox: list[bytes] = []

    def connection_made(self, transport: asyncio.BaseTransport) -> None:
        # a stream transport (uvloop's is no subclass of asyncio.Transport)
        self.transport = cast(asyncio.Transport, transport)
        self.open = True

    def data_received(self, data: bytes) -> None:
        self.reader.feed(data)
        try:
            while (reply := self.reader.gets()) is not False:
                if self.waiting:
                    fut = self.waiting.popleft()
                    if not fut.done():
                        fut.set_result(reply)
        except hiredis.ProtocolError as err:
            self._fail(RedisConnectionError(f"a reply Redis sent could not be read: {err}"))

    def connection_lost(self, exc: Exception | None) -> None:
        self._fail(RedisConnectionError("the connection to Redis was lost"))

    def send(self, data: bytes) -> None:
        if not self.coalesce:
            assert self.transport is not None
            self.transport.write(data)
            return
        if not self.outbox:
            asyncio.get_running_loop().call_soon(self._flush)
        self.outbox.append(data)

    def _flush(self) -> None:
        out, self.outbox = self.outbox, []
        if self.open and out and self.transport is not None:
            self.transport.write(b"".join(out))

    def _fail(self, err: Exception) -> None:
        self.open = False
        self.outbox = []
        if self.transport is not None:
            self.transport.abort()
        while self.waiting:
            fut = self.waiting.popleft()
            if not fut.done():
                fut.set_exception(err)
                fut.exception()  # a reply after the first failed one is awaited by no one


class CommitConnection:
    """One connection to the primary, opened when first needed and again after a failure."""

    def __init__(
        self,
        address: Callable[[], Awaitable[tuple[str, int]]],
        username: str | None = None,
        password: str | None = None,
        db: int = 0,
        timeout: float = 10.0,
        connect_timeout: float = 5.0,
        coalesce: bool = False,
    ) -> None:
        self.address = address  # where the primary is now
        self.username, self.password, self.db = username, password, db
        self.timeout, self.connect_timeout = timeout, connect_timeout
        self.coalesce = coalesce  # the calls of one event-loop turn go in one write
        self._replies: _Replies | None = None
        self._connecting: asyncio.Lock | None = None

    @classmethod
    def for_url(cls, url: str, coalesce: bool = False) -> CommitConnection | None:
        """For a ``redis://`` URL; None for TLS or a Unix socket (redis-py's way there)."""
        options = parse_url(url)
        if "path" in options or "connection_class" in options:
            return None
        host, port = str(options.get("host", "localhost")), int(options.get("port", 6379))

        async def address() -> tuple[str, int]:
            return host, port

        return cls(
            address,
            options.get("username"),
            options.get("password"),
            int(options.get("db", 0)),
            coalesce=coalesce,
        )

    async def call(self, commands: list[Command], errors: bool = True) -> list[Any]:
        """Send ``commands`` in one write and return their replies; the first error reply
        raises (after every reply was read; ``errors=False``: error replies are returned
        as ``hiredis.ReplyError``), a lost connection is tried again."""
        for attempt in range(RETRIES + 1):
            try:
                replies = await self._round_trip(await self._connected(), commands)
                break
            except (RedisConnectionError, RedisTimeoutError):
                self.close()
                if attempt == RETRIES:
                    raise
                await asyncio.sleep(min(0.5, 0.05 * 2**attempt))
        if not errors:
            return replies
        for reply in replies:
            if isinstance(reply, hiredis.ReplyError):
                raise error_of(reply)
        return replies

    async def _round_trip(self, replies: _Replies, commands: list[Command]) -> list[Any]:
        loop = asyncio.get_running_loop()
        futures = [loop.create_future() for _ in commands]
        replies.waiting.extend(futures)
        replies.send(pack(commands))
        try:
            async with asyncio.timeout(self.timeout):
                got = [await fut for fut in futures]
        except TimeoutError as err:  # the replies may still come: the connection is dropped
            raise RedisTimeoutError(f"Redis did not answer within {self.timeout} s") from err
        for reply in got:
            if isinstance(reply, hiredis.ReplyError) and str(reply).startswith("READONLY"):
                raise error_of(reply)
        return got

    async def _connected(self) -> _Replies:
        if self._replies is not None and self._replies.open:
            return self._replies
        if self._connecting is None:
            self._connecting = asyncio.Lock()
        async with self._connecting:
            if self._replies is not None and self._replies.open:
                return self._replies
            host, port = await self.address()
            try:
                async with asyncio.timeout(self.connect_timeout):
                    _, replies = await asyncio.get_running_loop().create_connection(
                        lambda: _Replies(self.coalesce), host, port
                    )
            except (OSError, TimeoutError) as err:
                raise RedisConnectionError(f"cannot reach Redis at {host}:{port}: {err!r}") from err
            hello: list[Command] = []
            if self.password:
                hello.append(("AUTH", *([self.username] if self.username else []), self.password))
            if self.db:
                hello.append(("SELECT", self.db))
            if hello:
                try:
                    got = await self._round_trip(replies, hello)
                except BaseException:  # not kept: closed
                    replies.connection_lost(None)
                    raise
                for reply in got:
                    if isinstance(reply, hiredis.ReplyError):
                        replies.connection_lost(None)
                        raise error_of(reply)
            self._replies = replies
            return replies

    def close(self) -> None:
        if self._replies is not None:
            self._replies.connection_lost(None)
            self._replies = None
