"""Arena tournaments (docs/rules.md, "Arena tournaments"): the pure rules. No Redis, no
clock, no I/O: the time comes in as an argument (epoch ms).

- **Arenas**: ``Arena`` (one tournament: when, the variant, the race size, the race time
  limit), ``pairing_open`` (may a race start now), ``created`` (a player's
  ``create_arena`` fields checked, each bound with its own refusal).
- **The operator's schedule**: ``parse_schedule`` (a text file, one arena line a line, a
  bad line named by its number) and ``arenas_between`` / ``scheduled_arena`` (the arenas
  the lines give in a window of time, each with a deterministic id).
- **Pairing**: ``pair`` (the waiting players into races of the arena's size).
- **Points**: ``results`` (a finished race's ranks as each player's ``RaceResult``) and
  ``score`` (a player's ``Standing`` after one race, and the points it gave).
- **The table**: ``table_key`` (one integer per player for a Redis sorted set, smaller is
  better) and ``table`` (the ranked rows, exact ties sharing a rank).
"""

from __future__ import annotations

import re
import shlex
from collections import Counter
from collections.abc import Callable, Iterable, Mapping, Set
from dataclasses import dataclass, field, replace
from datetime import UTC, datetime, timedelta
from typing import Any

from ...engine import Settings
from ...engine.errors import EngineError
from .errors import ServiceError
from .ranking import ranks

MIN_SIZE, MAX_SIZE = 2, 4  # players in one race of an arena
MIN_MINUTES, MAX_MINUTES = 10, 120  # an arena's length
MIN_RACE_LIMIT, MAX_RACE_LIMIT = 60, 1800  # seconds: a race's time limit (a sprint: half)
DEFAULT_SIZE, DEFAULT_RACE_LIMIT = 2, 300
CREATE_AHEAD_MS = 24 * 3600 * 1000  # a player's arena starts within this of its creation
MINUTE_MS = 60_000

UPCOMING, RUNNING, OVER = "upcoming", "running", "over"


# ---- arenas ------------------------------------------------------------------------------
@dataclass(frozen=True, slots=True)
class Arena:
    """One arena: races are paired from ``starts`` until ``pairing_open`` says no more;
    a race still running at ``ends`` finishes and counts."""

    id: str
    title: str
    starts: int  # epoch ms
    ends: int  # epoch ms
    settings: Settings
    size: int  # players in a race
    time_limit: int  # seconds a race lasts (a sprinter's own game: half of it)
    private: bool = False  # a player's arena joined with its code (the server keeps the code)
    scheduled: bool = False  # from the operator's schedule

    def phase(self, now: int) -> str:
        """``upcoming`` before ``starts``, ``running`` until ``ends``, then ``over`` (races
        still running at the end finish and count; the results are final when they have)."""
        if now < self.starts:
            return UPCOMING
        return RUNNING if now < self.ends else OVER

    def pairing_open(self, now: int) -> bool:
        """Whether a race may start at ``now``: the arena has started and at least
        ``closing_ms(time_limit)`` remains before its end."""
        return self.starts <= now and self.ends - now >= closing_ms(self.time_limit)

    def to_dict(self) -> dict[str, Any]:
        return {
            "id": self.id,
            "title": self.title,
            "starts": self.starts,
            "ends": self.ends,
            "settings": self.settings.to_dict(),
            "size": self.size,
            "time_limit": self.time_limit,
            "private": self.private,
            "scheduled": self.scheduled,
        }

    @classmethod
    def from_dict(cls, d: Mapping[str, Any]) -> Arena:
        return cls(
            id=d["id"],
            title=d["title"],
            starts=d["starts"],
            ends=d["ends"],
            settings=Settings.from_dict(d["settings"]),
            size=d["size"],
            time_limit=d["time_limit"],
            private=d["private"],
            scheduled=d["scheduled"],
        )


def closing_ms(time_limit: int) -> int:
    """How long before an arena's end pairing stops, in ms: half a race's time limit,
    at least 30 s and at most 120 s (lichess's arena rule, its clock read as the race's
    time limit in seconds)."""
    return max(30, min(time_limit // 2, 120)) * 1000


def sprint_limit(time_limit: int) -> int:
    """A sprinter's time limit in seconds: half the race's, rounded down."""
    return time_limit // 2


def check(settings: Settings, size: int, minutes: int, time_limit: int) -> None:
    """The bounds every arena keeps, whoever made it; ``ServiceError`` with the reason of
    the first broken: ``bad_size`` (a race is 2-4 players), ``bad_length`` (an arena
    lasts 10-120 minutes), ``bad_time_limit`` (a race's limit is 60-1800 seconds and at
    most half the arena, so two rounds fit), ``bad_settings`` (undo is off in arenas)."""
    if not MIN_SIZE <= size <= MAX_SIZE:
        raise ServiceError("bad_size", f"a race of an arena has {MIN_SIZE}-{MAX_SIZE} players")
    if not MIN_MINUTES <= minutes <= MAX_MINUTES:
        raise ServiceError("bad_length", f"an arena lasts {MIN_MINUTES}-{MAX_MINUTES} minutes")
    if not MIN_RACE_LIMIT <= time_limit <= MAX_RACE_LIMIT:
        raise ServiceError(
            "bad_time_limit", f"a race's time limit is {MIN_RACE_LIMIT}-{MAX_RACE_LIMIT} seconds"
        )
    if time_limit * 2 > minutes * 60:
        raise ServiceError(
            "bad_time_limit", "a race's time limit is at most half the arena's length"
        )
    if settings.undo:
        raise ServiceError("bad_settings", "undo is off in arenas")


def title_of(settings: Settings) -> str:
    return f"Draw {settings.draw} arena"


CREATE_FIELDS = ("starts", "minutes", "size", "time_limit", "settings", "private")


def created(arena_id: str, fields: Mapping[str, Any], now: int) -> Arena:
    """A player's arena from the fields of ``create_arena`` (the id, and a private arena's
    code, are the server's), or ``ServiceError``: ``bad_field`` (an unknown field, a
    missing ``starts`` or ``minutes``, which the wire's decoder refuses first as
    ``missing_field``, a value of the wrong type), ``bad_start`` (not
    from ``now`` to 24 h after it), then ``check``'s reasons; ``settings`` invalid as room
    settings: ``bad_settings``. Defaults: ``size`` 2, ``time_limit`` 300, ``settings``
    the default ones, ``private`` false."""
    extra = sorted(set(fields) - set(CREATE_FIELDS))
    if extra:
        raise ServiceError("bad_field", f"create_arena: unknown field {extra[0]!r}")
    starts = _int(fields, "starts", None)
    minutes = _int(fields, "minutes", None)
    size = _int(fields, "size", DEFAULT_SIZE)
    time_limit = _int(fields, "time_limit", DEFAULT_RACE_LIMIT)
    private = fields.get("private", False)
    if not isinstance(private, bool):
        raise ServiceError("bad_field", "create_arena: 'private' is true or false")
    raw = fields.get("settings", {})
    if not isinstance(raw, dict):
        raise ServiceError("bad_field", "create_arena: 'settings' is an object")
    try:
        settings = Settings.from_wire(raw)
    except EngineError as err:
        raise ServiceError("bad_settings", f"create_arena: settings: {err}") from None
    if not now <= starts <= now + CREATE_AHEAD_MS:
        raise ServiceError("bad_start", "an arena starts within the next 24 hours")
    check(settings, size, minutes, time_limit)
    return Arena(
        arena_id,
        title_of(settings),
        starts,
        starts + minutes * MINUTE_MS,
        settings,
        size,
        time_limit,
        private,
    )


def _int(fields: Mapping[str, Any], name: str, default: int | None) -> int:
    if name not in fields and default is not None:
        return default
    value = fields.get(name)
    if type(value) is not int:
        raise ServiceError("bad_field", f"create_arena: {name!r} is a whole number")
    return value


# ---- the operator's schedule -------------------------------------------------------------
NAME = re.compile(r"[a-z0-9][a-z0-9-]{1,31}")
HOUR, DAY = "hour", "day"
PERIOD_MINUTES = {HOUR: 60, DAY: 1440}
LINE_KEYS = ("every", "at", "minutes", "size", "time_limit", "title")
_AT = {HOUR: re.compile(r":([0-5]\d)"), DAY: re.compile(r"([01]\d|2[0-3]):([0-5]\d)")}
_ID = re.compile(r"arena-([a-z0-9][a-z0-9-]{1,31})-(\d{4}-\d{2}-\d{2})-(\d{2})(\d{2})")


@dataclass(frozen=True, slots=True)
class ScheduleLine:
    """One line of the schedule: an arena every hour (``at`` minutes past it) or every
    day (``at`` minutes after 00:00 UTC), ``minutes`` long."""

    name: str
    every: str  # hour or day
    at: int  # minutes into the hour or the UTC day
    minutes: int
    size: int
    time_limit: int
    settings: Settings
    title: str
    line: int  # its line number in the file, for messages

    def arena(self, starts: int) -> Arena:
        return Arena(
            arena_id(self.name, starts),
            self.title,
            starts,
            starts + self.minutes * MINUTE_MS,
            self.settings,
            self.size,
            self.time_limit,
            scheduled=True,
        )

    def starts_between(self, since: int, until: int) -> list[int]:
        """The starts (epoch ms) of this line's arenas that overlap ``[since, until)``."""
        period = PERIOD_MINUTES[self.every] * MINUTE_MS
        offset = self.at * MINUTE_MS
        length = self.minutes * MINUTE_MS
        # the first start whose arena has not ended at ``since``
        first = ((since - length - offset) // period + 1) * period + offset
        return list(range(first, until, period))


def parse_schedule(text: str) -> tuple[ScheduleLine, ...]:
    """The operator's arena schedule, one arena a line, blank lines and ``#`` comments
    skipped::

        NAME every=hour at=:MM minutes=M [size=N] [time_limit=S] [title="..."] [SETTING=V ...]
        NAME every=day at=HH:MM minutes=M ...

    ``NAME``: 2-32 of ``a-z 0-9 -``, unique; ``at``: past the hour, or a UTC time of day;
    ``minutes``: 10-120 and no longer than the period (one line's arenas never overlap);
    ``size`` 2-4 (default 2); ``time_limit`` seconds (default 300, ``check``'s bounds);
    the other ``key=value`` words are room settings (docs/rules.md). A bad line raises
    ValueError ``line N: why``."""
    lines: list[ScheduleLine] = []
    names: dict[str, int] = {}
    for number, raw in enumerate(text.splitlines(), 1):
        try:
            words = shlex.split(raw, comments=True)
        except ValueError as err:
            raise ValueError(f"line {number}: {err}") from None
        if not words:
            continue
        try:
            entry = _line(words, number)
        except (ValueError, ServiceError) as err:  # EngineError is a ValueError
            raise ValueError(f"line {number}: {err}") from None
        if entry.name in names:
            raise ValueError(f"line {number}: {entry.name} is already line {names[entry.name]}")
        names[entry.name] = number
        lines.append(entry)
    return tuple(lines)


def _line(words: list[str], number: int) -> ScheduleLine:
    name, *pairs = words
    if not NAME.fullmatch(name):
        raise ValueError(f"name {name!r}: 2-32 of a-z, 0-9, '-', first a letter or digit")
    own: dict[str, str] = {}
    settings: dict[str, str] = {}
    for word in pairs:
        key, sep, value = word.partition("=")
        if not sep:
            raise ValueError(f"expected key=value, got {word!r}")
        target = own if key in LINE_KEYS else settings
        if key in target:
            raise ValueError(f"{key} given twice")
        target[key] = value
    for key in ("every", "at", "minutes"):
        if key not in own:
            raise ValueError(f"no {key}=")
    every = own["every"]
    if every not in _AT:
        raise ValueError(f"every={every}: hour or day")
    m = _AT[every].fullmatch(own["at"])
    if m is None:
        shape = ":MM" if every == HOUR else "HH:MM (UTC)"
        raise ValueError(f"at={own['at']}: every={every} takes at={shape}")
    at = int(m.group(1)) if every == HOUR else int(m.group(1)) * 60 + int(m.group(2))
    minutes = _number(own, "minutes", None)
    size = _number(own, "size", DEFAULT_SIZE)
    time_limit = _number(own, "time_limit", DEFAULT_RACE_LIMIT)
    parsed = Settings.from_dict(settings)
    check(parsed, size, minutes, time_limit)
    if minutes > PERIOD_MINUTES[every]:
        raise ValueError(f"minutes={minutes}: longer than an {every}, its arenas would overlap")
    title = own.get("title", title_of(parsed)).strip()
    if not 1 <= len(title) <= 64:
        raise ValueError("title: 1-64 characters")
    return ScheduleLine(name, every, at, minutes, size, time_limit, parsed, title, number)


def _number(own: dict[str, str], key: str, default: int | None) -> int:
    if key not in own and default is not None:
        return default
    value = own[key]
    if not (value.isascii() and value.isdigit() and len(value) <= 6):
        raise ValueError(f"{key}={value}: a whole number")
    return int(value)


def arena_id(name: str, starts: int) -> str:
    """A scheduled arena's id: ``arena-NAME-YYYY-MM-DD-HHMM`` (its UTC start)."""
    when = datetime.fromtimestamp(starts / 1000, UTC)
    return f"arena-{name}-{when:%Y-%m-%d-%H%M}"


def arenas_between(lines: Iterable[ScheduleLine], since: int, until: int) -> list[Arena]:
    """The scheduled arenas overlapping ``[since, until)`` (running at ``since`` or
    starting before ``until``), by start, then id."""
    found = [line.arena(s) for line in lines for s in line.starts_between(since, until)]
    return sorted(found, key=lambda a: (a.starts, a.id))


def scheduled_arena(lines: Iterable[ScheduleLine], arena_id: str) -> Arena | None:
    """The scheduled arena with this id, or None (no such line, or the line has no arena
    starting then)."""
    m = _ID.fullmatch(arena_id)
    if m is None:
        return None
    hour, minute = int(m.group(3)), int(m.group(4))
    if hour > 23 or minute > 59:
        return None
    try:
        day = datetime.fromisoformat(m.group(2)).replace(tzinfo=UTC)
    except ValueError:
        return None
    when = day + timedelta(hours=hour, minutes=minute)
    starts = int(when.timestamp() * 1000)
    for line in lines:
        if line.name == m.group(1) and starts in line.starts_between(starts, starts + 1):
            return line.arena(starts)
    return None


# ---- pairing -----------------------------------------------------------------------------
SHORT_RACE_WAIT_MS = 20_000  # leftovers who waited this long race with fewer players


@dataclass(frozen=True, slots=True)
class Waiting:
    """A player waiting to be paired: joined, connected, not in a race, not paused (the
    server's to decide)."""

    player: str
    points: int
    rating: int
    since: int  # epoch ms they started waiting
    last: frozenset[str] = frozenset()  # the opponents of their last race in this arena
    address: str = ""  # their client address, keyed ('': unknown, shared with nobody)


@dataclass(frozen=True, slots=True)
class Pairing:
    races: tuple[tuple[str, ...], ...]  # each race's players, in table order
    waiting: tuple[str, ...]  # who keeps waiting, in table order


ADDRESS_CROWD = 4  # players waiting at one address told apart by pairing, at most


def pair(waiting: Iterable[Waiting], size: int, now: int) -> Pairing:
    """The races to start now among the ``waiting`` players, for an arena of races of
    ``size``; the same for the same input, in any order.

    1. The table order: more points first, then higher rating, then player id.
    2. Who races: with ``n`` waiting, ``n // size`` races of ``size``; the ``n % size``
       players who started waiting last (``since``; equal: lower in the table) sit out.
    3. Races are made in table order: the highest player not yet placed opens a race and
       takes the next players below who repeat no pair (below), then, if too few such
       remain, those who repeat the fewest pairs with the race so far (first in table
       order).
    4. The players sitting out race together, fewer than ``size``, when they are two or
       more and one of them has waited ``SHORT_RACE_WAIT_MS`` or longer; else they keep
       waiting (a player alone always does).
    5. While exchanging a player of a race with one of another race, or with one sitting
       out, lowers the number of repeated pairs, the first such exchange is made: races
       in the order made, a race's players in table order, then the players of the other
       races in table order, then those sitting out in table order.

    A **repeated pair** is two players in one race where one was an opponent in the
    other's last race, or who joined from one client address (a second identity is a
    scout on the same deal, and their race moves no rating) shared by at most
    ``ADDRESS_CROWD`` of the players waiting (more are a school's or a carrier's
    address, or a load test, not told apart); a pair that is both counts twice. So a
    rematch, or a race of one address, happens only when no exchange of one player
    avoids it (two players alone may always race again).

    The races come out ordered by their highest player, each in table order; who keeps
    waiting, in table order."""
    players = sorted(waiting, key=lambda w: (-w.points, -w.rating, w.player))
    if len({w.player for w in players}) != len(players):
        raise ValueError("a player is waiting twice")
    if not MIN_SIZE <= size <= MAX_SIZE:
        raise ValueError(f"a race has {MIN_SIZE}-{MAX_SIZE} players")
    position = {w.player: i for i, w in enumerate(players)}
    last = {w.player: w.last for w in players}
    crowd = Counter(w.address for w in players)
    address = {w.player: w.address if crowd[w.address] <= ADDRESS_CROWD else "" for w in players}
    by_wait = sorted(players, key=lambda w: (w.since, position[w.player]))
    playing = len(players) // size * size
    chosen = {w.player for w in by_wait[:playing]}
    out = [w.player for w in players if w.player not in chosen]

    def repeated(p: str, q: str) -> int:
        """A pair's repeats: 1 for a rematch, 1 for one address, so both count 2."""
        return (q in last[p] or p in last[q]) + (address[p] != "" and address[p] == address[q])

    def repeats(group: Iterable[str]) -> int:
        g = list(group)
        return sum(repeated(p, q) for i, p in enumerate(g) for q in g[i + 1 :])

    races: list[list[str]] = []
    free = [w.player for w in players if w.player in chosen]
    while free:
        race = [free.pop(0)]
        while len(race) < size:
            # the first in table order who adds no repeated pair, else the fewest
            base = repeats(race)
            best = next((q for q in free if repeats([*race, q]) == base), None)
            if best is None:
                best = min(free, key=lambda q: (repeats([*race, q]), position[q]))
            free.remove(best)
            race.append(best)
        races.append(race)
    since = {w.player: w.since for w in players}
    if len(out) >= 2 and min(since[p] for p in out) <= now - SHORT_RACE_WAIT_MS:
        races.append(out)
        out = []
    _exchange(races, out, repeats, position)
    ordered = sorted(
        (sorted(r, key=position.__getitem__) for r in races), key=lambda r: position[r[0]]
    )
    return Pairing(tuple(tuple(r) for r in ordered), tuple(sorted(out, key=position.__getitem__)))


def _exchange(
    races: list[list[str]],
    out: list[str],
    repeats: Callable[[Iterable[str]], int],
    position: dict[str, int],
) -> None:
    """Step 5 of ``pair``, in place: each exchange lowers the total, so it ends."""
    while True:
        for i, race in enumerate(races):
            before = repeats(race)
            if not before:
                continue
            others = sorted(
                ((j, q) for j, r in enumerate(races) if j != i for q in r),
                key=lambda jq: position[jq[1]],
            ) + [(-1, q) for q in sorted(out, key=position.__getitem__)]
            for p in sorted(race, key=position.__getitem__):
                for j, q in others:
                    mine = [q if x == p else x for x in race]
                    if j < 0:
                        gain = before - repeats(mine)
                    else:
                        theirs = [p if x == q else x for x in races[j]]
                        gain = before + repeats(races[j]) - repeats(mine) - repeats(theirs)
                    if gain > 0:
                        races[i] = mine
                        if j < 0:
                            out[out.index(q)] = p
                        else:
                            races[j] = theirs
                        break
                else:
                    continue
                break
            else:
                continue
            break
        else:
            return


# ---- points ------------------------------------------------------------------------------
PLACE_POINTS = {2: (2, 0), 3: (2, 1, 0), 4: (2, 1, 0, 0)}  # by place, 1st first
DRAW_POINTS = 1  # a first place shared
SPRINT_BONUS = 1  # an outright win of a sprinter, never doubled
PERFORMANCE_DIFF = 500  # lichess's: an opponent's rating + 500 beaten, - 500 beaten by


@dataclass(frozen=True, slots=True)
class RaceResult:
    """One player's result in one race of an arena."""

    size: int  # players in the race
    place: int  # 1 + the players strictly ahead (a tie shares the place)
    tied: bool = False  # another player has the same place
    all_resigned: bool = False  # every player of the race resigned
    sprint: bool = False  # the player chose a sprint at the start
    # each opponent's rating and the outcome against them: 1 ahead, 0 level, -1 behind
    opponents: tuple[tuple[int, int], ...] = ()

    def __post_init__(self) -> None:
        if self.size not in PLACE_POINTS or not 1 <= self.place <= self.size:
            raise ValueError(f"place {self.place} of a race of {self.size}")

    @property
    def won(self) -> bool:
        """An outright first place: alone first, and not a race everyone resigned."""
        return self.place == 1 and not self.tied and not self.all_resigned


@dataclass(frozen=True, slots=True)
class Standing:
    """A player's line of an arena's table."""

    points: int = 0
    streak: int = 0  # outright wins in a row, up to the last race
    races: int = 0
    wins: int = 0  # outright first places
    sprints: int = 0  # races sprinted
    rating_sum: int = 0  # over the opponents met: their rating, +500 beaten, -500 lost to
    opponents: int = 0  # opponents met (a race of n: n - 1)
    history: tuple[int, ...] = field(default=())  # the points of each race, in order

    @property
    def on_fire(self) -> bool:
        """Whether the next race's points are doubled: the last two were outright wins."""
        return self.streak >= 2

    @property
    def performance(self) -> int:
        """The average over opponents met of their rating, +500 for one beaten and -500 for
        one who finished ahead (rounded down); 0 before any race."""
        return self.rating_sum // self.opponents if self.opponents else 0


def points(result: RaceResult, on_fire: bool) -> int:
    """The points of one race: by place (``PLACE_POINTS``; a shared first place is a draw,
    ``DRAW_POINTS``; a shared lower place gets that place's points), doubled ``on_fire``,
    plus ``SPRINT_BONUS`` for a sprinter's outright win; 0 when everyone resigned."""
    if result.all_resigned:
        return 0
    if result.place == 1 and result.tied:
        base = DRAW_POINTS
    else:
        base = PLACE_POINTS[result.size][result.place - 1]
    bonus = SPRINT_BONUS if result.sprint and result.won else 0
    return base * (2 if on_fire else 1) + bonus


def score(standing: Standing, result: RaceResult) -> tuple[Standing, int]:
    """A player's standing after one more race, and the points it gave. The streak grows
    with an outright win and ends with anything else (a shared first place, a race where
    everyone resigned); everyone resigning is a loss to every opponent for performance."""
    got = points(result, standing.on_fire)
    perf = sum(
        rating + PERFORMANCE_DIFF * (-1 if result.all_resigned else outcome)
        for rating, outcome in result.opponents
    )
    return (
        replace(
            standing,
            points=standing.points + got,
            streak=standing.streak + 1 if result.won else 0,
            races=standing.races + 1,
            wins=standing.wins + (1 if result.won else 0),
            sprints=standing.sprints + (1 if result.sprint else 0),
            rating_sum=standing.rating_sum + perf,
            opponents=standing.opponents + len(result.opponents),
            history=(*standing.history, got),
        ),
        got,
    )


def results(
    race_ranks: Mapping[str, int],
    ratings: Mapping[str, int],
    sprinted: Set[str] = frozenset(),
    all_resigned: bool = False,
) -> dict[str, RaceResult]:
    """Each player's ``RaceResult`` from a finished race's final ranks (docs/rules.md,
    "Race ranking": exact ties share a rank), their ratings at the race's start, who
    sprinted, and whether everyone resigned."""
    size = len(race_ranks)
    out: dict[str, RaceResult] = {}
    for player, rank in race_ranks.items():
        others = sorted((q, r) for q, r in race_ranks.items() if q != player)
        out[player] = RaceResult(
            size,
            rank,
            tied=any(r == rank for _, r in others),
            all_resigned=all_resigned,
            sprint=player in sprinted,
            opponents=tuple((ratings[q], (r > rank) - (r < rank)) for q, r in others),
        )
    return out


# ---- the table ---------------------------------------------------------------------------
POINTS_BITS, WINS_BITS, PERF_BITS = 20, 16, 16
POINTS_CAP = (1 << POINTS_BITS) - 1
WINS_CAP = (1 << WINS_BITS) - 1
PERF_CAP = (1 << PERF_BITS) - 1


def table_key(standing: Standing) -> int:
    """The table order as one integer below 2**52 (a Redis sorted set's double holds it
    exactly), smaller is better, 20 + 16 + 16 bits::

        (POINTS_CAP - min(points, POINTS_CAP)) * 2**32
            + (WINS_CAP - min(wins, WINS_CAP)) * 2**16
            + (PERF_CAP - clamp(performance, 0, PERF_CAP))

    more points first (capped at 1,048,575), then more outright wins (capped at 65,535),
    then the higher performance (clamped to 0-65,535); beyond a cap players tie on that
    part."""
    return (
        ((POINTS_CAP - min(max(standing.points, 0), POINTS_CAP)) << (WINS_BITS + PERF_BITS))
        + ((WINS_CAP - min(max(standing.wins, 0), WINS_CAP)) << PERF_BITS)
        + (PERF_CAP - min(max(standing.performance, 0), PERF_CAP))
    )


def table(standings: Mapping[str, Standing]) -> list[tuple[str, int, Standing]]:
    """``[(player, rank, standing)]`` best first: by ``table_key``; equal keys share a rank
    and are listed by player id."""
    ordered = ranks((player, table_key(s)) for player, s in standings.items())
    return [(player, rank, standings[player]) for player, rank, _ in ordered]
