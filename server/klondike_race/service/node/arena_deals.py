"""Arena races on certified deals (docs/rules.md, "Arena tournaments", "Deals"): each
node keeps a pool of deals the solver proved winnable for the arenas its players are in
(store/arena_deals.py), ahead of need, and a race takes one at once when it is made.

The solver is too slow to certify a deal while players wait to be paired (a loss or a
hard win can take its whole budget), so the pool is filled in the background: a secret
random seed (``secrets``), searched within ``KR_SOLVER_ARENA_S``, pooled only when the
search found a winning line. The pool's target follows the arena's pace (``target``),
at most ``KR_ARENA_DEALS``. Certification comes last on the node's solver
(``Solving.certify``): never while a player's hint, finish or winnable-only search waits
or runs here, one search at a time.
"""

from __future__ import annotations

import asyncio
import secrets
from collections.abc import Awaitable, Callable
from typing import Any

import structlog

from ..clock import Clock
from ..config import Config
from ..domain import arena as A
from ..domain.room import random_deal
from ..store import Store
from .solving import Solving

log = structlog.get_logger("klondike_race.arena_deals")

FILL_INTERVAL_S = 1.0  # how often a node tops up the pools of the arenas its players are in
ROUNDS = 2  # the pool's target: this many races for each of the arena's active players
LOSSES_PER_DEAL = 4  # candidates tried per missing deal in one round, at most


def target(arena: A.Arena, waiting: int, running: int, most: int) -> int:
    """How many deals the pool of ``arena`` should hold: the races its ``waiting``
    players and the players of its ``running`` races would start in the next ``ROUNDS``
    rounds (each race's players start the next one together), at most ``most``."""
    active = waiting + running * arena.size
    return min(most, ROUNDS * -(-active // arena.size))


class ArenaDeals:
    def __init__(self, config: Config, store: Store, solving: Solving, clock: Clock) -> None:
        self.config = config
        self.store = store
        self.solving = solving
        self.clock = clock
        self.certified = 0  # seeds this node pooled (each a proven win)
        self.tried = 0  # seeds this node searched

    async def take(self, arena: A.Arena) -> tuple[dict[str, Any], bool]:
        """A new race's deal and whether it is certified: the oldest pooled seed (each
        goes to one race, whichever node pairs), else at once a fresh random one."""
        seed = await self.store.arena_deals.take(arena.id)
        if seed is not None:
            return {"seed": seed}, True
        return random_deal(arena.settings), False

    async def run(
        self, arena_ids: Callable[[], list[str]], find: Callable[[str], Awaitable[A.Arena]]
    ) -> None:
        """Every ``FILL_INTERVAL_S``: each arena ``arena_ids`` names (those with players
        here) topped up to its target."""
        while True:
            await asyncio.sleep(FILL_INTERVAL_S)
            for arena_id in arena_ids():
                try:
                    await self.fill(await find(arena_id))
                except asyncio.CancelledError:
                    raise
                except Exception:
                    log.exception("arena deals failed", arena=arena_id)

    async def fill(self, arena: A.Arena) -> int:
        """Top up ``arena``'s pool, before its start or while races are paired: the
        deals added. Each node with players of the arena does (the adding script caps
        the pool); a round stops when a player's search waits for the solver here."""
        now = self.clock.now_ms()
        most = self.config.arena_deals
        if most <= 0 or not (now < arena.starts or arena.pairing_open(now)):
            return 0
        waiting = len(await self.store.arenas.waiting(arena.id))
        want = target(arena, waiting, await self.store.arenas.running(arena.id), most)
        have = await self.store.arena_deals.size(arena.id)
        settings = arena.settings.to_dict()
        added = 0
        for _ in range(LOSSES_PER_DEAL * max(0, want - have)):
            if have >= want or self.solving.players_waiting or self.solving.stopping:
                break
            seed = secrets.token_hex(8)
            self.tried += 1
            if await self.solving.certify(seed, settings, self.config.solver_arena_s) is None:
                continue
            have = await self.store.arena_deals.add(arena.id, [seed], want)
            if have < 0:  # the arena is not stored (nobody joined it)
                break
            self.certified += 1
            added += 1
        return added
