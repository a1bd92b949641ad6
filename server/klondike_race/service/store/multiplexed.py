"""The node's commands on one connection of its own (store/commit.py), not redis-py's pool.

redis-py sends each command on a pooled connection of its own, in a write of its own,
and reads its reply there: about 60-100 µs of CPU a command on the project's machine
(the pool, the retry wrapper, timeouts, the stream reader, observability hooks), a third
of the server's CPU in a busy arena (docs/benchmarks.md). ``Multiplexed`` is redis-py's
client with its commands (and its pipelines) sent on one connection instead: what is
sent in one turn of the event loop goes in one write, the replies come back in order and
hiredis reads them in ``data_received``. Its command methods, scripts and reply parsing
are redis-py's (``RESP2``, whose parsed replies are the ones redis-py gives by default),
as are its exceptions; a lost or timed-out connection is tried again as redis-py's
``Retry`` would (``CommitConnection.call``).

Not for a Redis Cluster (redis-py's cluster client routes by slot), nor when writes wait
for replicas: ``WAIT`` blocks its connection, and every command behind it would wait.
The node uses it by default where it may; ``KR_COMMAND_CONNECTION=0`` keeps redis-py's
pool (docs/operations.md).
"""

from __future__ import annotations

import inspect
from typing import Any

import hiredis
import redis.asyncio as aioredis
from redis.asyncio.client import Pipeline
from redis.client import EMPTY_RESPONSE, NEVER_DECODE, default_response_callbacks
from redis.exceptions import ResponseError, WatchError

from .commit import CommitConnection, error_of


class Multiplexed(aioredis.Redis):
    """``client``'s commands sent on ``line`` (a ``CommitConnection`` that coalesces)."""

    def __init__(self, client: aioredis.Redis, line: CommitConnection) -> None:
        super().__init__(connection_pool=client.connection_pool)
        self.response_callbacks = default_response_callbacks(2, True)
        self.pooled, self.line = client, line  # (redis-py's, closed with this)

    async def execute_command(self, *args: Any, **options: Any) -> Any:
        (reply,) = await self.line.call([_wire(args)], errors=False)
        return await _parsed(self.response_callbacks, args, options, reply)

    def pipeline(self, transaction: bool = True, shard_hint: Any = None) -> Batch:
        return Batch(self, transaction)

    async def aclose(self, close_connection_pool: bool | None = None) -> None:
        self.line.close()
        await self.pooled.aclose()


class Batch(Pipeline):
    """redis-py's pipeline, its commands sent together on the ``Multiplexed`` line (in
    ``MULTI``/``EXEC`` for a transaction). One that ``WATCH``es keys is redis-py's own,
    on a pooled connection: a watch belongs to its connection, and the line is shared."""

    def __init__(self, client: Multiplexed, transaction: bool) -> None:
        super().__init__(client.connection_pool, client.response_callbacks, transaction, None)
        self.line = client.line
        self.pooled_callbacks = client.pooled.response_callbacks

    def execute_command(self, *args: Any, **options: Any) -> Any:
        if args[0] == "WATCH" and not self.watching and not self.command_stack:
            self.response_callbacks = self.pooled_callbacks  # (its connection's protocol)
        return super().execute_command(*args, **options)

    async def execute(self, raise_on_error: bool = True) -> list[Any]:
        if self.watching or self.connection is not None:
            return await super().execute(raise_on_error)
        stack, self.command_stack = self.command_stack, []
        scripts, self.scripts = self.scripts, set()
        if not stack:
            return []
        if scripts:  # (EVALSHA needs them loaded)
            shas = [s.sha for s in scripts]
            exists = await self.line.call([("SCRIPT", "EXISTS", *shas)])
            missing = [s for s, ok in zip(scripts, exists[0], strict=True) if not ok]
            if missing:
                await self.line.call([("SCRIPT", "LOAD", s.script) for s in missing])
        commands = [_wire(args) for args, _ in stack]
        if not (self.is_transaction or self.explicit_transaction):  # (multi() makes one)
            replies = await self.line.call(commands, errors=False)
        else:
            got = await self.line.call([("MULTI",), *commands, ("EXEC",)], errors=False)
            queued, replies = got[1:-1], got[-1]
            refused = next((r for r in queued if isinstance(r, hiredis.ReplyError)), None)
            if refused is not None:
                raise error_of(refused)
            if isinstance(replies, hiredis.ReplyError):
                raise error_of(replies)
            if replies is None:
                raise WatchError("Watched variable changed.")
            if len(replies) != len(commands):
                raise ResponseError("Wrong number of response items from pipeline execution")
        out = []
        for i, (reply, (args, options)) in enumerate(zip(replies, stack, strict=True)):
            if isinstance(reply, hiredis.ReplyError):
                err = error_of(reply)
                if raise_on_error:
                    self.annotate_exception(err, i + 1, args)
                    raise err
                out.append(err)
            else:
                out.append(await _parsed(self.response_callbacks, args, dict(options), reply))
        return out


def _wire(args: Any) -> Any:
    """A command's words as sent: redis-py names some in two (``"SCRIPT LOAD"``)."""
    name = args[0]
    return (*name.split(), *args[1:]) if isinstance(name, str) and " " in name else args


async def _parsed(
    callbacks: Any, args: tuple[Any, ...], options: dict[str, Any], reply: Any
) -> Any:
    """A reply as redis-py's client gives it: its command's callback applied, an error
    reply raised (or the command's stated empty response)."""
    if isinstance(reply, hiredis.ReplyError):
        if EMPTY_RESPONSE in options:
            return options[EMPTY_RESPONSE]
        raise error_of(reply)
    for option in (EMPTY_RESPONSE, NEVER_DECODE, "keys"):
        options.pop(option, None)
    callback = callbacks.get(args[0])
    if callback is None:
        return reply
    parsed = callback(reply, **options)
    return await parsed if inspect.isawaitable(parsed) else parsed
