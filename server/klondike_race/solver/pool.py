"""The bridge between the asyncio server and the solver: searches run in worker processes.

A search is CPU-bound; run on the event loop it would stall every room. A ``SolverPool``
wraps a ``concurrent.futures.ProcessPoolExecutor`` and awaits the picklable functions of
``jobs`` through ``loop.run_in_executor``. Every call carries its own budget, so a worker
is never held longer than that (plus the time to replay a line).

A position that one worker has not decided within ``spread_after`` seconds is searched by
the idle workers too, each with another plan (``solver.PLANS``): the first answer that
decides is returned and the others stop. They share nothing but the stop signal (a file
each checks between turns); a job that arrives while every worker is busy stops the
helpers of such searches first (docs/solver.md, "Several workers on one position").

    pool = SolverPool(workers=1)
    result = await pool.solve(seed, {"draw": 3}, ["d", "w>3"], max_seconds=5)
    await pool.close()   # or: async with SolverPool() as pool: ...
"""

from __future__ import annotations

import asyncio
import contextlib
import functools
import itertools
import tempfile
from collections.abc import Callable, Iterable
from concurrent.futures import ProcessPoolExecutor
from pathlib import Path
from typing import Any, TypeVar

from . import jobs

T = TypeVar("T")


# seconds one worker searches a position alone before the idle workers join in
SPREAD_AFTER = 0.02


class SolverPool:
    """Solver jobs in ``workers`` processes (default 1; with ``executor``, the number of
    workers it has). Methods mirror ``jobs``."""

    def __init__(
        self,
        workers: int = 1,
        executor: ProcessPoolExecutor | None = None,
        spread_after: float = SPREAD_AFTER,
    ) -> None:
        self._owned = executor is None
        self._executor = executor or ProcessPoolExecutor(max_workers=workers)
        self.workers = max(1, workers)
        self.spread_after = spread_after
        self.running = 0  # jobs submitted and not finished
        self._flags: tempfile.TemporaryDirectory[str] | None = None
        self._names = itertools.count()
        self._helping: set[Path] = set()  # the helpers' stop files of searches spread now
        self._forgetting: set[asyncio.Task[None]] = set()

    async def _run(self, fn: Callable[..., T], *args: Any, **kwargs: Any) -> T:
        if self.running >= self.workers:  # no idle worker: helpers make way
            for flag in self._helping:
                with contextlib.suppress(OSError):
                    flag.touch()
        loop = asyncio.get_running_loop()
        self.running += 1
        try:
            return await loop.run_in_executor(
                self._executor, functools.partial(fn, *args, **kwargs)
            )
        finally:
            self.running -= 1

    async def solve(
        self,
        deal: Any,
        settings: dict[str, Any] | None = None,
        moves: list[str] | None = None,
        *,
        max_seconds: float | None = 10.0,
        max_states: int | None = None,
        spread: bool = True,
        shorten_work: int = 0,
    ) -> dict[str, Any]:
        """``Solution.to_json()``: a hint is the first move of ``line``, finish it for me
        plays all of it; with ``shorten_work`` (a par) the line is shortened. With a time
        budget only (a state budget gives the same answer on every machine, so it is
        searched by one worker) and ``spread``, idle workers join a search still going
        after ``spread_after`` seconds."""
        job = functools.partial(
            self._run,
            jobs.solve_job,
            deal,
            settings,
            moves,
            max_states=max_states,
            shorten_work=shorten_work,
        )
        if not spread or max_states is not None or max_seconds is None or self.workers < 2:
            return await job(max_seconds=max_seconds)
        loop = asyncio.get_running_loop()
        start = loop.time()
        stop, helpers_stop = self._flag(), self._flag()
        first = asyncio.ensure_future(job(max_seconds=max_seconds, stop=(str(stop),)))
        tasks = {first}
        try:
            await asyncio.wait(tasks, timeout=min(self.spread_after, max_seconds))
            if not first.done():
                left = max_seconds - (loop.time() - start)
                flags = (str(stop), str(helpers_stop))
                for plan in range(1, 1 + self.workers - self.running):
                    tasks.add(asyncio.ensure_future(job(max_seconds=left, plan=plan, stop=flags)))
                if len(tasks) > 1:  # helpers: they make way for other jobs
                    self._helping.add(helpers_stop)
            while True:
                done, _ = await asyncio.wait(tasks, return_when=asyncio.FIRST_COMPLETED)
                for task in done:
                    tasks.discard(task)
                    out = task.result()
                    if out["result"] != "unknown" or task is first:
                        return out
        finally:
            self._helping.discard(helpers_stop)
            if tasks:  # searches still going (helpers, or the first one if cancelled)
                with contextlib.suppress(OSError):  # (gone if the pool was closed)
                    stop.touch()  # they stop at their next turn
                forget = loop.create_task(self._forget(tasks, stop, helpers_stop))
                self._forgetting.add(forget)
                forget.add_done_callback(self._forgetting.discard)

    def _flag(self) -> Path:
        if self._flags is None:
            self._flags = tempfile.TemporaryDirectory(prefix="klondike-race-solver-")
        return Path(self._flags.name) / str(next(self._names))

    @staticmethod
    async def _forget(tasks: Iterable[asyncio.Future[Any]], *flags: Path) -> None:
        """Once the searches that may read them are over, remove the stop files."""
        await asyncio.gather(*tasks, return_exceptions=True)
        for flag in flags:
            flag.unlink(missing_ok=True)

    async def winnable_seed(
        self, start_seed: int | str, settings: dict[str, Any] | None = None, **budget: Any
    ) -> dict[str, Any] | None:
        return await self._run(jobs.winnable_seed_job, start_seed, settings, **budget)

    async def analyse(
        self,
        deal: Any,
        settings: dict[str, Any] | None,
        players_moves: list[list[str]],
        **budget: Any,
    ) -> dict[str, Any]:
        return await self._run(jobs.analyse_job, deal, settings, players_moves, **budget)

    async def close(self) -> None:
        if self._owned:
            await asyncio.get_running_loop().run_in_executor(
                None, functools.partial(self._executor.shutdown, wait=True, cancel_futures=True)
            )
        if self._flags is not None:
            self._flags.cleanup()
            self._flags = None

    async def __aenter__(self) -> SolverPool:
        return self

    async def __aexit__(self, *exc: object) -> None:
        await self.close()
