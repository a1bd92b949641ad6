"""SolverPool: searches in a real process pool, awaited from the event loop."""

from __future__ import annotations

import asyncio
from pathlib import Path

from klondike_race.engine import Deal
from klondike_race.engine.cards import NAMES
from klondike_race.engine.errors import EngineError
from klondike_race.solver.jobs import make_game, solve_job
from klondike_race.solver.pool import SolverPool
from tests.conftest import until

from .helpers import reference

# a Draw 3 loss that takes seconds (an evaluation seed: about 6.6 million positions)
SLOW_LOSS = [NAMES[c] for c in Deal.from_seed(1_000_213).cards]


async def test_pool_solves_off_the_loop() -> None:
    ref = reference(0, 1)
    async with SolverPool(workers=1) as pool:
        search = asyncio.create_task(pool.solve(ref["cards"], {"draw": 1}, [], max_seconds=60))
        turns = 0  # loop turns taken while the search was not yet done
        while not search.done():
            await asyncio.sleep(0)
            turns += 1
        out = search.result()
        assert out["result"] == "win"
        game = make_game(ref["cards"], {"draw": 1}, out["line"])
        assert game.status == "won"
        # a search run on the loop would be done within the first turn that ran it; a
        # worker's answer comes back in a later turn (the executor's callback)
        assert turns >= 2
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


async def test_a_position_one_worker_has_not_decided_is_searched_by_the_idle_ones() -> None:
    async with SolverPool(workers=2, spread_after=0.05) as pool:
        search = asyncio.create_task(pool.solve(SLOW_LOSS, {"draw": 3}, max_seconds=120))
        await until(lambda: pool.running == 2)  # the idle worker joined in
        out = await search
        assert out["result"] == "lose"
        # whichever answered first, the other stopped long before its 120 s were up
        await until(lambda: pool.running == 0)
        assert pool._flags is not None
        await until(lambda: not any(Path(pool._flags.name).iterdir()))  # stop files removed


async def test_a_quick_answer_is_never_spread() -> None:
    async with SolverPool(workers=2, spread_after=5) as pool:
        out = await pool.solve(reference(0, 1)["cards"], {"draw": 1}, max_seconds=60)
        assert out["result"] == "win"
        assert pool.running == 0
    # a state budget is searched by one worker (the same answer on every machine), even
    # long after a time budget would have spread
    async with SolverPool(workers=2, spread_after=0.05) as pool:
        search = asyncio.create_task(pool.solve(SLOW_LOSS, {"draw": 3}, max_states=3_000_000))
        await asyncio.sleep(0.5)
        assert pool.running == 1
        assert (await search)["result"] == "unknown"


async def test_a_job_that_finds_every_worker_busy_stops_the_helpers() -> None:
    async with SolverPool(workers=2, spread_after=0.05) as pool:
        search = asyncio.create_task(pool.solve(SLOW_LOSS, {"draw": 3}, max_seconds=120))
        await until(lambda: pool.running == 2)
        hint = await pool.solve(reference(0, 1)["cards"], {"draw": 1}, max_seconds=60)
        assert hint["result"] == "win"
        assert not search.done()  # the helper made way; the first worker searches on
        assert (await search)["result"] == "lose"


async def test_a_bad_deal_is_an_error_and_the_pool_goes_on() -> None:
    """The engine's error crosses back from the worker whole, and the pool stays usable."""
    async with SolverPool(workers=1) as pool:
        try:
            await pool.solve(["Ah"] * 52, {"draw": 1}, max_seconds=5)
        except EngineError as err:
            assert err.reason == "bad_deal" and "Ah" in str(err)
        else:
            raise AssertionError("a deal of 52 aces was searched")
        out = await pool.solve(reference(0, 1)["cards"], {"draw": 1}, max_seconds=60)
        assert out["result"] == "win"


def test_a_search_told_to_stop_answers_unknown(tmp_path: Path) -> None:
    cards = reference(25, 3)["cards"]  # a Draw 3 loss proven in a moment
    flag, absent = tmp_path / "stop", str(tmp_path / "absent")
    flag.touch()
    out = solve_job(cards, {"draw": 3}, max_seconds=60, stop=(absent, str(flag)))
    assert out["result"] == "unknown" and out["states"] == 0
    assert solve_job(cards, {"draw": 3}, max_seconds=60, stop=(absent,))["result"] == "lose"
