"""The bridge between the asyncio server and the solver: searches run in worker processes.

A search is CPU-bound pure Python; run on the event loop it would stall every room. A
``SolverPool`` wraps a ``concurrent.futures.ProcessPoolExecutor`` and awaits the
picklable functions of ``jobs`` through ``loop.run_in_executor``. Every call carries its
own budget, so a worker is never held longer than that (plus the time to replay a line).

    pool = SolverPool(workers=1)
    result = await pool.solve(seed, {"draw": 3}, ["d", "w>3"], max_seconds=5)
    await pool.close()   # or: async with SolverPool() as pool: ...
"""

from __future__ import annotations

import asyncio
import functools
from collections.abc import Callable
from concurrent.futures import ProcessPoolExecutor
from typing import Any, TypeVar

from . import jobs

T = TypeVar("T")


class SolverPool:
    """Solver jobs in ``workers`` processes (default 1). Methods mirror ``jobs``."""

    def __init__(self, workers: int = 1, executor: ProcessPoolExecutor | None = None) -> None:
        self._owned = executor is None
        self._executor = executor or ProcessPoolExecutor(max_workers=workers)

    async def _run(self, fn: Callable[..., T], *args: Any, **kwargs: Any) -> T:
        loop = asyncio.get_running_loop()
        return await loop.run_in_executor(self._executor, functools.partial(fn, *args, **kwargs))

    async def solve(
        self,
        deal: Any,
        settings: dict[str, Any] | None = None,
        moves: list[str] | None = None,
        **budget: Any,
    ) -> dict[str, Any]:
        """``Solution.to_json()``: a hint is the first move of ``line``, finish it for me
        plays all of it."""
        return await self._run(jobs.solve_job, deal, settings, moves, **budget)

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

    async def __aenter__(self) -> SolverPool:
        return self

    async def __aexit__(self, *exc: object) -> None:
        await self.close()
