"""The node's background tasks: each kept referenced until done, a failure logged, every
one still running cancelled when the node stops."""

from __future__ import annotations

import asyncio
from collections.abc import Coroutine
from typing import Any

import structlog

log = structlog.get_logger("klondike_race.node")


class Background:
    def __init__(self) -> None:
        self._tasks: set[asyncio.Task[Any]] = set()

    def __len__(self) -> int:
        """How many are running."""
        return len(self._tasks)

    def spawn(self, coro: Coroutine[Any, Any, Any]) -> asyncio.Task[Any]:
        """Run ``coro`` in the background (the ``Spawn`` of contracts.py)."""
        task = asyncio.get_running_loop().create_task(coro)
        self._tasks.add(task)
        task.add_done_callback(self._done)
        return task

    def _done(self, task: asyncio.Task[Any]) -> None:
        self._tasks.discard(task)
        if not task.cancelled() and task.exception() is not None:
            log.error("background task failed", exc_info=task.exception())

    async def cancel(self, within: float = 5.0) -> None:
        """Cancel every task still running and wait (up to ``within`` s a round) for them
        to end, and for those they spawned meanwhile: once this returns none uses the
        node's connections (a task cleaning up after its cancellation could otherwise open
        a Redis connection after the node closed its pools, left open for ever)."""
        for _ in range(3):
            tasks = list(self._tasks)
            if not tasks:
                return
            for task in tasks:
                task.cancel()
            _, pending = await asyncio.wait(tasks, timeout=within)
            if pending:
                log.warning("background tasks still running after cancel", count=len(pending))
                return
