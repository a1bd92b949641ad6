"""A Klondike solver on top of the engine: pure, no I/O (docs/solver.md).

``solve(game)`` searches the game's current position (the solver, like the server, knows
every card) under the game's settings and returns a ``Solution``: ``win`` with a line of
engine moves (draws and recycles included) that ``Game.play`` accepts one by one and that
ends in a win, ``lose`` when its exhaustive search proved that no win exists, or
``unknown`` when the budget ran out first. Every ``win`` line is replayed through the
checked API before it is returned.

The budget is ``max_seconds`` (measured with ``clock``, by default ``time.perf_counter``:
the only clock the solver reads, and only to stop) and/or ``max_states`` (positions
visited). ``find_winnable_seed`` and ``analyse`` are built on ``solve``; ``jobs`` has
picklable entry points for a process pool and ``pool`` the asyncio bridge the server
uses. A hint is the first move of ``solve``'s line.
"""

from __future__ import annotations

from collections.abc import Callable, Iterable
from dataclasses import dataclass
from time import perf_counter
from typing import Any, NamedTuple

from ..engine.cards import RANK, SUIT
from ..engine.deal import Deal
from ..engine.game import OUT_OF_TIME, RESIGNED, WON, Game
from ..engine.moves import CARDS, DRAW_MOVE, FOUND0, RECYCLE_MOVE, WASTE, Move
from ..engine.settings import DEFAULT, Settings
from . import native
from . import search as search_module
from .search import Relaxation, Restarts, Search, Steps
from .shorten import shorten

# the module that searches: the search in C (csearch.c) when built and current, else
# search.py itself (native.py); its Search, Relaxation, Restarts and key_set (the types
# named in annotations here are the plain module's: the C ones search the same way).
# A KR_SOLVER_CORE that cannot be had is CORE_PROBLEM, which ``serve`` and ``solve``
# refuse to run with (``build-solver``, its cure, runs).
try:
    CORE, CORE_PROBLEM = native.core(), None
except native.CoreError as err:
    CORE, CORE_PROBLEM = search_module, str(err)

WIN = "win"
LOSE = "lose"
UNKNOWN = "unknown"

# the work (engine moves played, shorten.py) spent by default on shortening a par line:
# the median Draw 1 reference deal needs about 2,600 for all it gets (2,000 get it 0.82 of
# the first line's length instead of 0.80), Draw 3 about 150 (docs/benchmarks.md, "Par");
# 8-18 microseconds each on the 2-core machine measured: up to about 30 ms a deal
PAR_WORK = 2_000

__all__ = [
    "LOSE",
    "PAR_WORK",
    "UNKNOWN",
    "WIN",
    "Analysis",
    "SeedResult",
    "Solution",
    "SolverError",
    "analyse",
    "find_winnable_seed",
    "search_of",
    "seed_sequence",
    "solve",
]


class SolverError(RuntimeError):
    """The solver produced a line the engine refused: a solver bug, never a user error."""


@dataclass(frozen=True, slots=True)
class Solution:
    """``result`` is ``win``, ``lose`` or ``unknown``; ``line`` the winning moves from the
    position searched (None unless ``win``); ``states`` positions visited; ``seconds``
    the search time."""

    result: str
    line: list[Move] | None
    states: int
    seconds: float

    def to_json(self) -> dict[str, Any]:
        return {
            "result": self.result,
            "line": None if self.line is None else [str(m) for m in self.line],
            "moves": None if self.line is None else len(self.line),
            "states": self.states,
            "seconds": round(self.seconds, 4),
        }


def _playable(game: Game) -> Game:
    """A copy of ``game`` that accepts moves: resigned / out-of-time games are searched
    as if play had gone on."""
    copy = game.copy()
    copy.history = None
    if copy.ended in (RESIGNED, OUT_OF_TIME):
        copy.ended = None
    return copy


def solve(
    game: Game,
    *,
    max_seconds: float | None = 10.0,
    max_states: int | None = None,
    clock: Callable[[], float] | None = None,
    plan: int = 0,
    stop: Callable[[], bool] | None = None,
    shorten_work: int = 0,
) -> Solution:
    """Search ``game``'s current position. Never changes ``game``.

    ``shorten_work`` > 0: a winning line is then made as short as ``shorten`` makes it
    within that much work (engine moves played; the same on every machine), never
    longer than the line the search found: for a par, not for a hint.

    ``plan`` picks how the budget is shared among the searches (PLANS: 0 is the one a
    single search uses; the others are for searches of the same position in other worker
    processes at once); ``stop``, if given, is asked between turns and ends the search
    (``unknown``) when it says True: another worker has answered.

    Running out of memory ends the search like running out of time (``unknown``).
    Raises SolverError only if a found line fails to replay (a bug)."""
    clock = clock or perf_counter
    start = clock()
    game = _playable(game)
    if game.status == WON:
        return Solution(WIN, [], 0, clock() - start)
    if game.over:  # stuck: no move can ever change the position
        return Solution(LOSE, None, 0, clock() - start)
    deadline = None if max_seconds is None else start + max_seconds
    draw1 = game.settings.draw == 1 and game.settings.recycles_allowed is None
    # beyond PLANS, plans 1 and 0 in turn with other restart seeds (plan 2 has no restarts:
    # a copy of it would search exactly what it does)
    shares = PLANS[plan] if plan < len(PLANS) else PLANS[plan % 2]
    turns = _Turns(_searcher(game), relax=not draw1, plan=shares, seeds=plan)
    try:
        done, current = turns.run(clock, deadline, max_states, stop)
    except MemoryError:  # memory is a budget too: the searches are dropped, no answer
        done = None
    states = turns.states()
    if done is None:
        return Solution(UNKNOWN, None, states, clock() - start)
    if not done:
        return Solution(LOSE, None, states, clock() - start)
    line = _line(game, current)
    if shorten_work > 0:
        line = shorten(game, line, shorten_work).line
    return Solution(WIN, line, states, clock() - start)


def search_of(game: Game, core: Any = None, **options: Any) -> Search:
    """A search of ``game``'s position under its settings, in ``core`` (a search module:
    the compiled or plain one CORE names, unless given). ``options`` override the
    settings' (``draw``, ``recycles_allowed``, ``any_empty``, ``foundation_to_column``) or
    add the search's own (budget, move order, pruning)."""
    settings = game.settings
    made: Search = (core or CORE).Search(
        game.columns,
        game.down,
        game.found,
        game.waste + game.stock[::-1],
        len(game.waste),
        game.recycles,
        **{
            "draw": settings.draw,
            "recycles_allowed": settings.recycles_allowed,
            "any_empty": settings.empty == "any",
            "foundation_to_column": settings.foundation_to_column,
            **options,
        },
    )
    return made


def _searcher(game: Game) -> Callable[..., Search]:
    """Makes searches of ``game``'s position: ``searcher(deck_first, relaxed=False,
    lost=None, relaxation=None, tests=True, shuffle=None, won=None)``."""
    settings = game.settings

    def search(
        deck_first: bool,
        relaxed: bool = False,
        lost: set[bytes] | None = None,
        relaxation: Relaxation | None = None,
        tests: bool = True,
        shuffle: int | None = None,
        won: set[bytes] | None = None,
    ) -> Search:
        return search_of(
            game,
            draw=1 if relaxed else settings.draw,
            recycles_allowed=None if relaxed else settings.recycles_allowed,
            deck_first=deck_first,
            lost=lost,
            relaxation=relaxation,
            tests=tests,
            shuffle=shuffle,
            won=won,
            deadlock_test=shuffle is None,  # once is enough
        )

    return search


class _Turns:
    """The searches that take turns on one budget.

    As plan 0 has them (``PLANS``; the other plans take a part of this): two searches
    with different move orders: move order decides how soon a win is found (each order
    misses some), and either search, being complete, may prove a loss; what one proves
    lost the other skips. Unless the game is already Draw 1 with
    unlimited passes, the first also tests the positions whose moves cost many positions
    in Draw 1 with unlimited passes (and cuts off what it searched from one that is lost
    there), and a third search takes turns, for losses only: the whole position in Draw 1
    with unlimited passes (a relaxation: every line of the real game is a line there, so
    a loss there is a loss here; docs/solver.md, "The Draw 1 relaxation"). Short searches
    in random move orders take turns too, more at first than later (docs/solver.md,
    "Restarts in random orders")."""

    def __init__(self, search: Callable[..., Search], relax: bool, plan: Plan, seeds: int) -> None:
        self.share = plan.restart_share
        lost: set[bytes] = CORE.key_set()  # positions proven lost, shared by the searches
        relaxation: Relaxation | None = CORE.Relaxation() if relax else None
        self.relax = relaxation
        self.searches: list[Search | Restarts] = []
        self.slices: list[int] = []
        for deck_first, tests, size in plan.searches:
            self.searches.append(search(deck_first, lost=lost, relaxation=relaxation, tests=tests))
            self.slices.append(size)
        self.relaxed = -1
        self.relaxed_search: Search | None = None
        if relaxation is not None and plan.relaxed_slice:
            self.relaxed = len(self.searches)
            self.relaxed_search = search(
                False, relaxed=True, lost=relaxation.lost, won=relaxation.won
            )
            self.searches.append(self.relaxed_search)
            self.slices.append(plan.relaxed_slice)
        self.restarting = -1
        if plan.restart_slice:
            self.restarting = len(self.searches)
            first = seeds << 20  # another worker's restarts try other orders
            self.searches.append(
                CORE.Restarts(
                    lambda seed: search(
                        False, lost=lost, relaxation=relaxation, tests=False, shuffle=first + seed
                    )
                )
            )
            self.slices.append(plan.restart_slice)

    def states(self) -> int:
        return sum(s.states + s.relaxed_states for s in self.searches)

    def run(
        self,
        clock: Callable[[], float],
        deadline: float | None,
        max_states: int | None,
        stop: Callable[[], bool] | None = None,
    ) -> tuple[bool | None, Search | Restarts]:
        """Turns until a search decides (True: won, False: lost) or the budget is spent
        or ``stop`` says so (None); with the search that decided."""
        searches, slices = self.searches, self.slices
        turn = 0
        done = None
        current = searches[0]
        while done is None:
            states = self.states()
            if max_states is not None and states >= max_states:
                break
            if deadline is not None and clock() > deadline:
                break
            if stop is not None and stop():
                break
            if turn == self.restarting and searches[turn].states > self.share * states**0.5:
                turn = (turn + 1) % len(searches)  # most wins come early: restarts get less later
                continue
            current = searches[turn]
            step = slices[turn] if max_states is None else min(slices[turn], max_states - states)
            done = current.advance(step)
            if done and turn == self.relaxed:  # a win of the relaxation proves nothing: drop it
                assert self.relaxed_search is not None and self.relax is not None
                self.relaxed_search.unwind(self.relax.won)  # (but the tests may use its line)
                slices[turn] = 0
                done = None
            turn = (turn + 1) % len(searches)
            while not slices[turn]:
                turn = (turn + 1) % len(searches)
        return done, current


class Plan(NamedTuple):
    """How one search of a position shares its budget among the searches taking turns."""

    # (deck cards before turning face-down cards, with the Draw 1 relaxation tests of the
    # positions whose moves cost many positions (not when the game is already Draw 1 with
    # unlimited passes), positions per turn)
    searches: tuple[tuple[bool, bool, int], ...]
    relaxed_slice: int  # positions per turn of the Draw 1 relaxation of the whole position
    # (losses only; 0: none)
    restart_slice: int  # positions of each random-order search (``Restarts``); 0: none
    # the restarts' positions stay under restart_share * sqrt(all positions so far)
    restart_share: int


PLANS = (
    # one worker: both fixed orders, the relaxation, the restarts (a sixth of the budget
    # at first, 6% of it after a million positions)
    Plan(((False, True, 2048), (True, False, 512)), 2048, 1024, 64),
    # a second worker at once, for wins: the other order, and restarts in other random
    # orders with a larger share
    Plan(((True, False, 2048),), 0, 1024, 512),
    # a third, for losses (a proof needs one complete search): all of the budget to the
    # search that tests, and the relaxation of the whole position
    Plan(((False, True, 2048),), 2048, 0, 0),
)


def _line(game: Game, search: Search | Restarts) -> list[Move]:
    """Replay the search's macro line through ``Game.play`` (a copy), expanding the deck
    macro moves into draws and recycles, and finishing by playing every card home."""
    game = game.copy()
    out: list[Move] = []

    def play(move: Move) -> None:
        try:
            out.append(game.play(move))
        except Exception as err:  # a solver bug: say which move
            raise SolverError(f"solver line refused at move {len(out)} ({move}): {err}") from err

    def bring(card: int) -> None:
        for _ in range(200):
            if game.waste and game.waste[-1] == card:
                return
            play(DRAW_MOVE if game.stock else RECYCLE_MOVE)
        raise SolverError(f"deck card {card} never reached the waste top")

    def steps(done: Steps) -> None:
        for step in done:
            if isinstance(step, int):  # the search's own bookkeeping
                continue
            kind = step[0]
            if kind == "m":
                play(Move(CARDS, step[1], step[2], step[3]))
            elif kind == "h":
                play(Move(CARDS, step[1], FOUND0 + SUIT[step[2]], 1))
            elif kind == "w":
                card, d = step[1], step[2]
                bring(card)
                play(Move(CARDS, WASTE, FOUND0 + SUIT[card] if d < 0 else d, 1))
            else:
                play(Move(CARDS, FOUND0 + step[1], step[2], 1))

    steps(search.start_steps)
    for done in search.path:
        steps(done)
    # finish: no face-down card is left, and every deck card is reachable
    while game.found_count < 52:
        best = None
        for s, col in enumerate(game.columns):
            if col and game.found[SUIT[col[-1]]] == RANK[col[-1]] - 1:
                best = Move(CARDS, s, FOUND0 + SUIT[col[-1]], 1)
                break
        if best is None:
            deck = game.waste + game.stock[::-1]
            card = next((c for c in deck if game.found[SUIT[c]] == RANK[c] - 1), None)
            if card is None:
                raise SolverError("the finish found no card to play home")
            bring(card)
            best = Move(CARDS, WASTE, FOUND0 + SUIT[card], 1)
        play(best)
    if game.status != WON:
        raise SolverError("the solver line does not end in a win")
    return out


def seed_sequence(start_seed: int | str) -> Iterable[int | str]:
    """The seeds ``find_winnable_seed`` tries, in order: an integer seed counts up
    (``s, s+1, s+2, ...``); a text seed ``t`` is tried as ``t``, then ``t/1``, ``t/2``..."""
    if isinstance(start_seed, int) and not isinstance(start_seed, bool):
        n = start_seed
        while True:
            yield n
            n += 1
    yield start_seed
    k = 1
    while True:
        yield f"{start_seed}/{k}"
        k += 1


@dataclass(frozen=True, slots=True)
class SeedResult:
    """The first seed proven winnable, its line, and what was tried before it."""

    seed: int | str
    solution: Solution
    tried: int  # seeds searched, this one included


def find_winnable_seed(
    start_seed: int | str,
    settings: Settings = DEFAULT,
    *,
    max_seconds: float | None = 2.0,
    max_states: int | None = None,
    max_tries: int = 100,
    clock: Callable[[], float] | None = None,
    shorten_work: int = PAR_WORK,
) -> SeedResult | None:
    """The first seed of ``seed_sequence(start_seed)`` whose deal the solver proves
    winnable under ``settings`` (each search within the budget); deterministic for a
    state budget, and for a time budget up to how fast the machine is. None after
    ``max_tries`` seeds without a proven win. Its line is the par: shortened within
    ``shorten_work`` (``solve``)."""
    for tried, seed in enumerate(seed_sequence(start_seed), 1):
        if tried > max_tries:
            return None
        game = Game(Deal.from_seed(seed), settings)
        solution = solve(
            game,
            max_seconds=max_seconds,
            max_states=max_states,
            clock=clock,
            shorten_work=shorten_work,
        )
        if solution.result == WIN:
            return SeedResult(seed, solution, tried)
    return None  # pragma: no cover - the sequence is endless


@dataclass(frozen=True, slots=True)
class Analysis:
    """After a race: for each player's final position, ``win``/``lose``/``unknown``
    (``won`` for a game already won), and the par: the length of the shortest winning
    line the solver found from the deal's start (its first line, shortened: ``solve``'s
    ``shorten_work``; None if the deal itself was not solved)."""

    players: list[str]
    par: int | None
    deal: Solution


def analyse(
    games: list[Game],
    *,
    max_seconds: float | None = 10.0,
    max_states: int | None = None,
    clock: Callable[[], float] | None = None,
    shorten_work: int = PAR_WORK,
    deal_solution: Solution | None = None,
) -> Analysis:
    """Analyse a finished race: ``games`` are the players' games on one deal; each search
    has the budget (as ``solve``'s), and the deal's line is shortened within
    ``shorten_work`` for the par. ``deal_solution``: the deal's, from an earlier analysis
    with the same budget (then not searched again)."""
    if not games:
        raise ValueError("no games to analyse")
    first = games[0]
    start = Game(first.deal, first.settings)
    deal = deal_solution or solve(
        start,
        max_seconds=max_seconds,
        max_states=max_states,
        clock=clock,
        shorten_work=shorten_work,
    )
    players = []
    for game in games:
        if game.status == WON:
            players.append("won")
        else:
            solution = solve(game, max_seconds=max_seconds, max_states=max_states, clock=clock)
            players.append(solution.result)
    return Analysis(players, None if deal.line is None else len(deal.line), deal)
