"""Picklable entry points for a process pool: plain data in, plain data (JSON) out.

Each function rebuilds the game from a deal (a seed, or a list of 52 card names as in
tests/data/README.md), a settings dict (``Settings.from_dict``) and the moves played
so far (compact notation, replayed through the checked API), searches it, and returns a
dict. They may raise ``EngineError`` (bad input) or ``SolverError`` (a bug).
"""

from __future__ import annotations

import json
import os
from collections import OrderedDict
from typing import Any

from ..engine.deal import Deal
from ..engine.game import Game
from ..engine.moves import Move
from ..engine.settings import Settings
from . import LOSE, PAR_WORK, WIN, Solution, analyse, find_winnable_seed, solve

# this worker's decided deals (their shortened lines), by deal, settings and budget: an
# arena's races are dealt from a pool of about a hundred deals, so most of its analyses
# find their deal here, and every race on a deal gets the same par
DEALS_KEPT = 512
_deals: OrderedDict[str, Solution] = OrderedDict()


def make_game(
    deal: Any, settings: dict[str, Any] | None = None, moves: list[str] | None = None
) -> Game:
    """``deal``: a seed (int or str), a list of 52 card names, or a ``Deal.to_json``
    dict. The moves are played through ``Game.play``."""
    if isinstance(deal, dict):
        the_deal = Deal.from_json(deal)
    elif isinstance(deal, (list, tuple)):
        the_deal = Deal.from_cards(list(deal))
    else:
        the_deal = Deal.from_seed(deal)
    game = Game(the_deal, Settings.from_dict(settings or {}))
    for move in moves or []:
        game.play(Move.parse(move))
    return game


def solve_job(
    deal: Any,
    settings: dict[str, Any] | None = None,
    moves: list[str] | None = None,
    max_seconds: float | None = 10.0,
    max_states: int | None = None,
    plan: int = 0,
    stop: tuple[str, ...] = (),
    shorten_work: int = 0,
) -> dict[str, Any]:
    """``Solution.to_json()`` of the position after ``moves``: result, line (move
    strings), moves, states, seconds. ``plan`` and ``shorten_work`` (a par: the line
    shortened) as ``solve``'s; the search ends early
    (``unknown``) once any of the files ``stop`` names exists (another worker answered:
    ``pool.SolverPool.solve``)."""
    game = make_game(deal, settings, moves)

    def stopped() -> bool:
        return any(os.path.exists(path) for path in stop)

    solution = solve(
        game,
        max_seconds=max_seconds,
        max_states=max_states,
        plan=plan,
        stop=stopped if stop else None,
        shorten_work=shorten_work,
    )
    return solution.to_json()


def winnable_seed_job(
    start_seed: int | str,
    settings: dict[str, Any] | None = None,
    max_seconds: float | None = 2.0,
    max_states: int | None = None,
    max_tries: int = 100,
    shorten_work: int = PAR_WORK,
) -> dict[str, Any] | None:
    """``{"seed", "tried", "solution"}`` for the first proven-winnable seed, or None (the
    solution's line shortened: its ``moves`` is the par)."""
    found = find_winnable_seed(
        start_seed,
        Settings.from_dict(settings or {}),
        max_seconds=max_seconds,
        max_states=max_states,
        max_tries=max_tries,
        shorten_work=shorten_work,
    )
    if found is None:
        return None
    return {"seed": found.seed, "tried": found.tried, "solution": found.solution.to_json()}


def analyse_job(
    deal: Any,
    settings: dict[str, Any] | None,
    players_moves: list[list[str]],
    max_seconds: float | None = 10.0,
    max_states: int | None = None,
    shorten_work: int = PAR_WORK,
) -> dict[str, Any]:
    """``{"players": [result per player], "par": int | None, "deal": Solution json}``;
    the par is the deal's line shortened within ``shorten_work``."""
    games = [make_game(deal, settings, moves) for moves in players_moves]
    if not games:
        games = [make_game(deal, settings)]
    key = json.dumps([deal, settings or {}, max_seconds, max_states, shorten_work])
    known = _deals.get(key)
    analysis = analyse(
        games,
        max_seconds=max_seconds,
        max_states=max_states,
        shorten_work=shorten_work,
        deal_solution=known,
    )
    if known is not None:
        _deals.move_to_end(key)
    elif analysis.deal.result in (WIN, LOSE):
        _deals[key] = analysis.deal
        if len(_deals) > DEALS_KEPT:
            _deals.popitem(last=False)
    players = analysis.players if players_moves else []
    return {"players": players, "par": analysis.par, "deal": analysis.deal.to_json()}
