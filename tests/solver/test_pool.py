"""SolverPool: searches in a real process pool, awaited from the event loop."""

from __future__ import annotations

import asyncio

from klondike_race.solver.jobs import make_game
from klondike_race.solver.pool import SolverPool

from .helpers import reference


async def test_pool_solves_off_the_loop() -> None:
    ref = reference(0, 1)
    async with SolverPool(workers=1) as pool:
        ticks = 0

        async def ticker() -> None:
            nonlocal ticks
            while True:
                await asyncio.sleep(0.001)
                ticks += 1

        task = asyncio.create_task(ticker())
        out = await pool.solve(ref["cards"], {"draw": 1}, [], max_seconds=60)
        task.cancel()
        assert out["result"] == "win"
        game = make_game(ref["cards"], {"draw": 1}, out["line"])
        assert game.status == "won"
        assert ticks > 0  # the loop kept running while the worker searched
        lost = await pool.solve(reference(104, 1)["cards"], {"draw": 1}, max_seconds=120)
        assert lost["result"] == "lose"
        unknown = await pool.solve(reference(104, 1)["cards"], {"draw": 1}, max_states=100)
        assert unknown["result"] == "unknown"


async def test_pool_seed_and_analysis() -> None:
    async with SolverPool(workers=2) as pool:
        found, analysis = await asyncio.gather(
            pool.winnable_seed(11, {"draw": 3}, max_seconds=None, max_states=200_000),
            pool.analyse(reference(0, 1)["cards"], {"draw": 1}, [[], ["d"]], max_seconds=60),
        )
    assert found is not None and found["solution"]["result"] == "win"
    assert len(analysis["players"]) == 2
    assert analysis["players"] == ["win", "win"]
    assert analysis["par"] == analysis["deal"]["moves"]
