"""The node's solver: worker processes made on first use, a bounded queue for the
searches players wait on (hints, finish it for me, winnable-only deals), and the
analysis of every finished race."""

from __future__ import annotations

import asyncio
import contextlib
import multiprocessing
from collections.abc import Iterator
from concurrent.futures import ProcessPoolExecutor
from typing import Any

import structlog

from ...solver.pool import SolverPool
from ..config import Config
from ..domain import movelog
from ..domain.errors import ServiceError
from ..domain.room import Room
from ..embedded import solver_worker_start
from ..store import Store
from .registry import Hubs

log = structlog.get_logger("klondike_race.solver")


class Solving:
    def __init__(self, config: Config, store: Store, hubs: Hubs) -> None:
        self.config = config
        self.store = store
        self.hubs = hubs
        self._pool: SolverPool | None = None
        self._executor: ProcessPoolExecutor | None = None
        self._jobs = 0  # hint, finish and seed searches queued or running here
        # finished races' analyses: one in the pool at a time, so that a burst of them
        # (many short games ending) never queues ahead of a hint or a finish
        self._analysis_turn = asyncio.Semaphore(1)
        self._analyses = 0  # analyses waiting or running here
        self.stopping = False

    def pool(self) -> SolverPool:
        """Worker processes, created on first use."""
        if self._pool is None:
            # forkserver: workers are not forked from this threaded, event-looping process.
            # The fork server dies with this process (SIGKILL included: it preloads
            # tether.py), and each worker with the fork server: no solver outlives its node.
            # It also loads the solver before it forks them, and their start
            # (``solver_worker_start``) comes from a module as cheap to import: a worker
            # that had to import this one would load the whole node (0.7 s).
            context = multiprocessing.get_context("forkserver")
            context.set_forkserver_preload(
                ["klondike_race.service.tether", "klondike_race.solver.jobs"]
            )
            workers = max(1, self.config.solver_workers)
            self._executor = ProcessPoolExecutor(
                max_workers=workers, mp_context=context, initializer=solver_worker_start
            )
            self._pool = SolverPool(workers, executor=self._executor)
        return self._pool

    async def close(self) -> None:
        self.stopping = True
        if self._executor is None:
            return
        executor, self._executor, pool, self._pool = self._executor, None, self._pool, None
        try:
            await asyncio.get_running_loop().run_in_executor(
                None, lambda: executor.shutdown(wait=True, cancel_futures=True)
            )
            if pool is not None:
                await pool.close()  # (its stop files: the executor is this node's)
        except Exception:
            log.exception("solver shutdown failed")

    @contextlib.contextmanager
    def _slot(self) -> Iterator[None]:
        """Beyond ``solver_queue`` searches at once the next is refused (``busy``)."""
        if self._jobs >= self.config.solver_queue:
            raise ServiceError("busy", "the solver is busy; try again in a moment")
        self._jobs += 1
        try:
            yield
        finally:
            self._jobs -= 1

    async def winnable_seed(self, start_seed: str, settings: dict[str, Any]) -> str:
        """The first seed from ``start_seed`` on that the solver proves winnable."""
        try:
            with self._slot():
                found = await self.pool().winnable_seed(
                    start_seed,
                    settings,
                    max_seconds=self.config.solver_seed_s,
                    max_tries=self.config.solver_seed_tries,
                    shorten_work=self.config.solver_par_work,
                )
        except ServiceError:
            raise
        except Exception:
            log.exception("winnable seed search failed")
            raise ServiceError("solver_failed", "the solver failed; try again") from None
        if found is None:
            raise ServiceError(
                "no_winnable_deal",
                f"no deal proven winnable within {self.config.solver_seed_tries} tries",
            )
        return str(found["seed"])

    async def solve_deal(
        self, deal: dict[str, Any], settings: dict[str, Any], budget: float
    ) -> dict[str, Any] | None:
        """The solver's verdict on a whole deal (a challenge candidate: never refused as
        busy), or None when the search failed."""
        try:
            out = await self.pool().solve(
                deal,
                settings,
                None,
                max_seconds=budget,
                shorten_work=self.config.solver_par_work,
            )
        except Exception:
            log.exception("challenge deal search failed")
            return None
        return dict(out)

    async def certify(self, seed: str, settings: dict[str, Any], budget: float) -> int | None:
        """An arena pool's candidate (node/arena_deals.py), at the lowest priority: the
        length of the winning line the solver found for ``seed``'s deal within
        ``budget``, or None (a loss, unknown, a failure, or not searched at all because a
        player's hint, finish or winnable-only search waits or runs here: those go
        first). One worker, never spread: a player's search arriving meanwhile waits
        at most ``budget``."""
        if self._jobs or self.stopping:
            return None
        try:
            out = await self.pool().solve(
                {"seed": seed}, settings, None, max_seconds=budget, spread=False
            )
        except Exception:
            if not self.stopping:
                log.exception("arena deal search failed")
            return None
        return len(out["line"]) if out["result"] == "win" and out["line"] is not None else None

    @property
    def players_waiting(self) -> bool:
        """A player's search waits or runs here now (``certify`` searches nothing)."""
        return self._jobs > 0

    async def line(self, room: Room, moves: list[str], budget: float) -> dict[str, Any]:
        """A winning line from the position after ``moves``, or a ServiceError."""
        try:
            with self._slot():
                out = await self.pool().solve(
                    room.deal, room.settings.to_dict(), moves, max_seconds=budget
                )
        except ServiceError:
            raise
        except Exception:
            log.exception("solver failed", room=room.code)
            raise ServiceError("solver_failed", "the solver failed; try again") from None
        if out["result"] == "lose":
            raise ServiceError("no_winning_line", "this position cannot be won any more")
        if out["result"] != "win" or not out["line"]:
            raise ServiceError("unknown", f"no winning line found within {budget:g} s")
        return dict(out)

    async def analyse(self, room: Room) -> None:
        """The solver's analysis of a finished race, off the event loop, stored once and
        sent to everyone in the room as an ``analysis`` event."""
        if self.stopping:
            return
        if room.options.practice and self._analyses >= self.config.solver_queue:
            # a practice game's analysis is a courtesy: not when the node is behind
            log.info("practice analysis skipped: analyses waiting", room=room.code)
            return
        self._analyses += 1
        try:
            logs = await self.store.log.read_each(room.code, [seat.id for seat in room.seats])
            players_moves = [movelog.solver_moves(log) for log in logs]
            async with self._analysis_turn:
                out = await self.pool().analyse(
                    room.deal,
                    room.settings.to_dict(),
                    players_moves,
                    max_seconds=self.config.solver_analysis_s,
                    shorten_work=self.config.solver_par_work,
                )
        except Exception:
            if not self.stopping:
                log.exception("analysis failed", room=room.code)
            return
        finally:
            self._analyses -= 1
        analysis = {
            "par": out["par"],
            "deal": out["deal"]["result"],
            "players": {s.id: r for s, r in zip(room.seats, out["players"], strict=True)},
        }
        v = await self.store.rooms.save_analysis(room.code, analysis)
        self.hubs.feed(room.code, v, {"type": "analysis", "analysis": analysis})
