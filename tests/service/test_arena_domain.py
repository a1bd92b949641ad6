"""The arena tournaments' pure rules (docs/rules.md, "Arena tournaments"): the schedule,
a player's create_arena, when races may start, pairing, points and the table."""

from __future__ import annotations

import itertools
import random
from datetime import UTC, datetime

import pytest

from klondike_race.engine import Settings
from klondike_race.service.domain import arena as A
from klondike_race.service.domain.errors import ServiceError


def ms(text: str) -> int:
    return int(datetime.fromisoformat(text).replace(tzinfo=UTC).timestamp() * 1000)


NOW = ms("2026-12-05T17:40:00")
MIN = 60_000

SCHEDULE = """\
# the operator's arenas
hourly-d1  every=hour at=:00 minutes=30 draw=1

evening-d3 every=day at=18:00 minutes=60 size=4 time_limit=600 draw=3 passes=3 \
title="Evening Draw 3"   # a comment after the line
"""


# ---- the schedule ------------------------------------------------------------------------
def test_a_schedule_gives_its_arenas_in_a_window_with_deterministic_ids() -> None:
    lines = A.parse_schedule(SCHEDULE)
    assert [(x.name, x.line) for x in lines] == [("hourly-d1", 2), ("evening-d3", 4)]
    hourly, evening = lines
    assert (hourly.size, hourly.time_limit, hourly.title) == (2, 300, "Draw 1 arena")
    assert evening.settings == Settings(draw=3, passes=3)
    assert (evening.size, evening.time_limit, evening.title) == (4, 600, "Evening Draw 3")
    found = A.arenas_between(lines, ms("2026-12-05T17:20:00"), ms("2026-12-05T19:00:00"))
    assert [a.id for a in found] == [
        "arena-hourly-d1-2026-12-05-1700",  # running at the window's start
        "arena-evening-d3-2026-12-05-1800",
        "arena-hourly-d1-2026-12-05-1800",
    ]
    assert [(a.starts, a.ends) for a in found] == [
        (ms("2026-12-05T17:00:00"), ms("2026-12-05T17:30:00")),
        (ms("2026-12-05T18:00:00"), ms("2026-12-05T19:00:00")),
        (ms("2026-12-05T18:00:00"), ms("2026-12-05T18:30:00")),
    ]
    assert all(a.scheduled and not a.private for a in found)
    # one that ended at the window's start is out, one starting at its end is out
    assert [
        a.id
        for a in A.arenas_between(lines[:1], ms("2026-12-05T17:30:00"), ms("2026-12-05T18:00:00"))
    ] == []
    # the same input, the same arenas
    assert found == A.arenas_between(lines, ms("2026-12-05T17:20:00"), ms("2026-12-05T19:00:00"))


def test_a_scheduled_arena_is_found_by_its_id_and_only_then() -> None:
    lines = A.parse_schedule(SCHEDULE)
    for a in A.arenas_between(lines, ms("2026-12-05T00:00:00"), ms("2026-12-07T00:00:00")):
        assert A.scheduled_arena(lines, a.id) == a
    for bad in (
        "arena-hourly-d1-2026-12-05-1810",  # not on the hour
        "arena-evening-d3-2026-12-05-1700",  # not 18:00
        "arena-weekly-2026-12-05-1800",  # no such line
        "arena-hourly-d1-2026-02-30-1800",  # no such day
        "arena-hourly-d1-2026-12-05-2400",
        "daily-2026-12-05-draw1",
    ):
        assert A.scheduled_arena(lines, bad) is None, bad


GOOD = "fine every=hour at=:15 minutes=20"


@pytest.mark.parametrize(
    ("line", "why"),
    [
        ("Bad every=hour at=:00 minutes=30", "name 'Bad'"),
        ("x every=hour at=:00 minutes=30", "name 'x'"),
        ("a1 at=:00 minutes=30", "no every="),
        ("a1 every=hour minutes=30", "no at="),
        ("a1 every=hour at=:00", "no minutes="),
        ("a1 every=week at=:00 minutes=30", "every=week"),
        ("a1 every=hour at=18:00 minutes=30", "at=18:00"),
        ("a1 every=hour at=:60 minutes=30", "at=:60"),
        ("a1 every=day at=24:00 minutes=30", "at=24:00"),
        ("a1 every=day at=:30 minutes=30", "at=:30"),
        ("a1 every=hour at=:00 minutes=thirty", "minutes=thirty"),
        ("a1 every=hour at=:00 minutes=9", "10-120 minutes"),
        ("a1 every=day at=10:00 minutes=121", "10-120 minutes"),
        ("a1 every=hour at=:00 minutes=90", "longer than an hour"),
        ("a1 every=hour at=:00 minutes=30 size=1", "2-4 players"),
        ("a1 every=hour at=:00 minutes=30 size=5", "2-4 players"),
        ("a1 every=hour at=:00 minutes=30 time_limit=59", "60-1800 seconds"),
        ("a1 every=day at=1:00 minutes=30", "at=1:00"),
        ("a1 every=day at=10:00 minutes=120 time_limit=1801", "60-1800 seconds"),
        ("a1 every=hour at=:00 minutes=10 time_limit=301", "half the arena"),
        ("a1 every=hour at=:00 minutes=30 undo=on", "undo is off"),
        ("a1 every=hour at=:00 minutes=30 draw=2", "draw must be 1 or 3"),
        ("a1 every=hour at=:00 minutes=30 colour=red", "unknown setting 'colour'"),
        ("a1 every=hour at=:00 minutes=30 fast", "expected key=value"),
        ("a1 every=hour at=:00 minutes=30 minutes=20", "minutes given twice"),
        ("a1 every=hour at=:00 minutes=30 draw=1 draw=3", "draw given twice"),
        ('a1 every=hour at=:00 minutes=30 title="open', "quotation"),
        ("a1 every=hour at=:00 minutes=30 title=", "title"),
        ("fine every=hour at=:30 minutes=20", "fine is already line 1"),
    ],
)
def test_a_bad_schedule_line_is_named_with_why(line: str, why: str) -> None:
    with pytest.raises(ValueError) as err:
        A.parse_schedule(f"{GOOD}\n# two\n{line}\n{GOOD.replace('fine', 'later')}\n")
    assert str(err.value).startswith("line 3: "), err.value
    assert why in str(err.value), err.value


def test_an_empty_schedule_has_no_arenas() -> None:
    assert A.parse_schedule("\n  # nothing yet\n") == ()
    assert A.arenas_between((), 0, 10**13) == []


# ---- a player's arena --------------------------------------------------------------------
def _create(**fields: object) -> A.Arena:
    base: dict[str, object] = {"starts": NOW + 10 * MIN, "minutes": 30}
    base.update(fields)
    return A.created("arena-K7QW2M", {k: v for k, v in base.items() if v is not ...}, NOW)


def test_a_player_creates_an_arena_with_defaults() -> None:
    a = _create()
    assert a == A.Arena(
        "arena-K7QW2M",
        "Draw 1 arena",
        NOW + 10 * MIN,
        NOW + 40 * MIN,
        Settings(),
        2,
        300,
        private=False,
        scheduled=False,
    )
    b = _create(size=4, time_limit=600, settings={"draw": 3}, private=True, minutes=120)
    assert (b.size, b.time_limit, b.settings.draw, b.private, b.ends - b.starts) == (
        4,
        600,
        3,
        True,
        120 * MIN,
    )
    assert A.Arena.from_dict(b.to_dict()) == b


@pytest.mark.parametrize(
    ("fields", "reason"),
    [
        ({"starts": NOW - 1}, "bad_start"),
        ({"starts": NOW + 24 * 60 * MIN + 1}, "bad_start"),
        ({"minutes": 9}, "bad_length"),
        ({"minutes": 121}, "bad_length"),
        ({"size": 1}, "bad_size"),
        ({"size": 5}, "bad_size"),
        ({"time_limit": 59}, "bad_time_limit"),
        ({"time_limit": 1801, "minutes": 120}, "bad_time_limit"),
        ({"time_limit": 901}, "bad_time_limit"),  # more than half of 30 minutes
        ({"settings": {"draw": 2}}, "bad_settings"),
        ({"settings": {"undo": True}}, "bad_settings"),
        ({"settings": {"colour": "red"}}, "bad_settings"),
        ({"settings": "draw=3"}, "bad_field"),
        ({"rated": True}, "bad_field"),
        ({"starts": ...}, "bad_field"),
        ({"minutes": ...}, "bad_field"),
        ({"minutes": 30.0}, "bad_field"),
        ({"size": True}, "bad_field"),
        ({"private": "yes"}, "bad_field"),
    ],
)
def test_each_create_arena_bound_is_refused_with_its_reason(
    fields: dict[str, object], reason: str
) -> None:
    with pytest.raises(ServiceError) as err:
        _create(**fields)
    assert err.value.reason == reason, err.value


def test_create_arena_bounds_themselves_are_allowed() -> None:
    for fields in (
        {"starts": NOW},
        {"starts": NOW + 24 * 60 * MIN},
        {"minutes": 10, "time_limit": 300},
        {"minutes": 120, "time_limit": 1800},
        {"size": 2},
        {"size": 4},
        {"time_limit": 60},
        {"time_limit": 900},
    ):
        _create(**fields)


# ---- when races start --------------------------------------------------------------------
def test_pairing_stops_before_the_end_by_half_a_race_between_30_and_120_seconds() -> None:
    assert [A.closing_ms(t) for t in (60, 100, 180, 240, 300, 1800)] == [
        30_000,
        50_000,
        90_000,
        120_000,
        120_000,
        120_000,
    ]
    a = _create(time_limit=180)
    assert not a.pairing_open(a.starts - 1)
    assert a.pairing_open(a.starts)
    assert a.pairing_open(a.ends - 90_000)
    assert not a.pairing_open(a.ends - 89_999)
    assert not a.pairing_open(a.ends)
    assert not a.pairing_open(a.ends + MIN)
    assert [a.phase(t) for t in (a.starts - 1, a.starts, a.ends - 1, a.ends)] == [
        A.UPCOMING,
        A.RUNNING,
        A.RUNNING,
        A.OVER,
    ]
    assert A.sprint_limit(300) == 150 and A.sprint_limit(61) == 30


# ---- pairing -----------------------------------------------------------------------------
def w(
    player: str, points: int = 0, rating: int = 1500, since: int = NOW, last: str = ""
) -> A.Waiting:
    return A.Waiting(player, points, rating, since, frozenset(last))


def test_players_close_in_the_table_race_each_other() -> None:
    got = A.pair([w("d", 1), w("a", 10), w("c", 3), w("b", 8)], 2, NOW)
    assert got == A.Pairing((("a", "b"), ("c", "d")), ())
    # equal points: by rating, then id
    got = A.pair([w("a", 0, 1400), w("b", 0, 1700), w("c", 0, 1600), w("d", 0, 1400)], 2, NOW)
    assert got.races == (("b", "c"), ("a", "d"))


def test_no_rematch_while_others_wait() -> None:
    got = A.pair([w("a", 10, last="b"), w("b", 8, last="a"), w("c", 3), w("d", 1)], 2, NOW)
    assert got.races == (("a", "c"), ("b", "d"))
    # the last opponent is remembered by one side only: still a rematch
    got = A.pair([w("a", 10, last="b"), w("b", 8, last="x"), w("c", 3), w("d", 1)], 2, NOW)
    assert got.races == (("a", "c"), ("b", "d"))
    # three waiting: the newcomer races rather than a rematch, though it waited least
    got = A.pair(
        [w("a", 10, since=NOW - 9000, last="b"), w("b", 8, since=NOW - 9000, last="a"), w("c", 3)],
        2,
        NOW,
    )
    assert got == A.Pairing((("b", "c"),), ("a",))  # the race's first in the table goes out


def test_players_of_one_address_race_apart_while_others_wait() -> None:
    """A second identity joined from the player's address is paired as a rematch is:
    into another race when an exchange allows it, together when nobody else waits."""
    a, b, c, d = (
        A.Waiting(p, 10 - i, 1500, NOW, address=at)
        for i, (p, at) in enumerate([("a", "home"), ("b", "home"), ("c", "x"), ("d", "")])
    )
    assert A.pair([a, b, c, d], 2, NOW).races == (("a", "c"), ("b", "d"))
    assert A.pair([a, b], 2, NOW).races == (("a", "b"),)
    # no address (unknown) is shared with nobody
    e, f = A.Waiting("e", 9, 1500, NOW), A.Waiting("f", 8, 1500, NOW)
    assert A.pair([w("a", 10), e, f, w("g", 7)], 2, NOW).races == (("a", "e"), ("f", "g"))
    # in a race of three, the pair is split by the exchange with the race below
    three = [
        A.Waiting(p, 10 - i, 1500, NOW, address="home" if p in "ab" else p)
        for i, p in enumerate("abcdef")
    ]
    got = A.pair(three, 3, NOW)
    assert not any({"a", "b"} <= set(r) for r in got.races), got
    # an address more than ADDRESS_CROWD wait at is not told apart (a school's, a load
    # test's): pairing goes by the table alone, as without addresses
    crowd = [A.Waiting(f"p{i:04}", 0, 1500, NOW, address="nat") for i in range(2_000)]
    plain = [A.Waiting(f"p{i:04}", 0, 1500, NOW) for i in range(2_000)]
    assert A.pair(crowd, 2, NOW) == A.pair(plain, 2, NOW)
    few = [
        A.Waiting(p, 10 - i, 1500, NOW, address="home" if p < "f" else p)
        for i, p in enumerate("abcdefgh")
    ]  # five at "home": one more than told apart
    assert A.ADDRESS_CROWD == 4
    assert A.pair(few, 2, NOW).races == (("a", "b"), ("c", "d"), ("e", "f"), ("g", "h"))
    # players of one address who raced last time: a rematch still counts (two repeats)
    home = [A.Waiting(p, 0, 1500, NOW, frozenset(o), "home") for p, o in
            (("a", "b"), ("b", "a"), ("c", "d"), ("d", "c"))]  # fmt: skip
    assert A.pair(home, 2, NOW).races == (("a", "c"), ("b", "d"))
    assert A.pair(home[:3], 2, NOW - 1) == A.Pairing((("b", "c"),), ("a",))
    # four at "home": told apart; d and e, left together, give way to h sitting out
    assert A.pair(few[1:], 2, NOW) == A.Pairing((("b", "f"), ("c", "g"), ("e", "h")), ("d",))


def test_a_rematch_when_nobody_else_waits() -> None:
    got = A.pair([w("a", 10, last="b"), w("b", 8, last="a")], 2, NOW)
    assert got == A.Pairing((("a", "b"),), ())


def test_the_greedy_rematch_is_exchanged_away() -> None:
    # in table order a takes b, leaving c and d, who just raced: c goes to a's race
    got = A.pair([w("a", 10), w("b", 8), w("c", 3, last="d"), w("d", 1, last="c")], 2, NOW)
    assert got.races == (("a", "d"), ("b", "c"))


def test_leftovers_are_the_last_to_start_waiting_and_race_short_after_20_s() -> None:
    players = [w(p, 10 - i, since=NOW - 1000 * (10 - i)) for i, p in enumerate("abcdefg")]
    got = A.pair(players, 3, NOW)
    assert got == A.Pairing((("a", "b", "c"), ("d", "e", "f")), ("g",))
    got = A.pair(players[:6], 4, NOW)
    assert got == A.Pairing((("a", "b", "c", "d"),), ("e", "f"))
    # equal waiting: the lower in the table sits out
    got = A.pair([w(p, 10 - i) for i, p in enumerate("abcde")], 4, NOW)
    assert got == A.Pairing((("a", "b", "c", "d"),), ("e",))
    # once one of the leftovers has waited 20 s, they race together
    late = [w(p, 10 - i, since=NOW - 20_000) for i, p in enumerate("abcdef")]
    assert A.pair(late, 4, NOW).races == (("a", "b", "c", "d"), ("e", "f"))
    assert A.pair(late[:3], 4, NOW - 1) == A.Pairing((), ("a", "b", "c"))
    assert A.pair(late[:3], 4, NOW) == A.Pairing((("a", "b", "c"),), ())
    # a player alone keeps waiting, however long
    assert A.pair([w("a", since=0)], 2, NOW) == A.Pairing((), ("a",))
    assert A.pair(late[:5], 4, NOW) == A.Pairing((("a", "b", "c", "d"),), ("e",))
    assert A.pair([], 3, NOW) == A.Pairing((), ())


def test_races_of_four_after_two_races_of_four_mix_them_as_far_as_possible() -> None:
    one, two = "abcd", "efgh"
    players = [
        w(p, 20 - i, last=(one if p in one else two).replace(p, ""))
        for i, p in enumerate(one + two)
    ]
    got = A.pair(players, 4, NOW)
    assert sorted(p for r in got.races for p in r) == sorted(one + two)
    # each race holds two of each old race: 2 repeated pairs each, the fewest possible
    for race in got.races:
        assert len(set(race) & set(one)) == 2, got


def _repeats(race: tuple[str, ...], last: dict[str, frozenset[str]]) -> int:
    return sum(1 for p, q in itertools.combinations(race, 2) if q in last[p] or p in last[q])


@pytest.mark.parametrize("size", [2, 3, 4])
def test_pairing_is_deterministic_complete_and_no_exchange_removes_a_rematch(size: int) -> None:
    rng = random.Random(size)
    for _ in range(200):
        n = rng.randint(0, 11)
        names = [f"p{i}" for i in range(n)]
        players = [
            A.Waiting(
                p,
                rng.randint(0, 6),
                rng.choice([1400, 1500, 1600]),
                NOW - rng.choice([0, 5000, 25_000]),
                frozenset(rng.sample([q for q in names if q != p], min(n - 1, rng.randint(0, 3)))),
            )
            for p in names
        ]
        got = A.pair(players, size, NOW)
        shuffled = players[:]
        rng.shuffle(shuffled)
        assert A.pair(shuffled, size, NOW) == got  # the same input in any order
        placed = [p for r in got.races for p in r] + list(got.waiting)
        assert sorted(placed) == sorted(names)
        assert all(2 <= len(r) <= size for r in got.races)
        assert sum(len(r) == size for r in got.races) == n // size
        last = {x.player: x.last for x in players}
        for i, race in enumerate(got.races):
            if not _repeats(race, last):
                continue
            for p in race:
                for j, other in enumerate(got.races):
                    if j == i:
                        continue
                    for q in other:
                        mine = tuple(q if x == p else x for x in race)
                        theirs = tuple(p if x == q else x for x in other)
                        assert _repeats(mine, last) + _repeats(theirs, last) >= _repeats(
                            race, last
                        ) + _repeats(other, last)
                for q in got.waiting:
                    mine = tuple(q if x == p else x for x in race)
                    assert _repeats(mine, last) >= _repeats(race, last)


def test_pairing_refuses_a_player_twice_and_a_bad_size() -> None:
    with pytest.raises(ValueError):
        A.pair([w("a"), w("a")], 2, NOW)
    with pytest.raises(ValueError):
        A.pair([w("a"), w("b")], 5, NOW)


# ---- points ------------------------------------------------------------------------------
def r(size: int, place: int, **kw: bool) -> A.RaceResult:
    return A.RaceResult(size, place, **kw)


def test_points_by_place_for_each_size_and_ties() -> None:
    assert [A.points(r(2, p), False) for p in (1, 2)] == [2, 0]
    assert [A.points(r(3, p), False) for p in (1, 2, 3)] == [2, 1, 0]
    assert [A.points(r(4, p), False) for p in (1, 2, 3, 4)] == [2, 1, 0, 0]
    assert A.points(r(2, 1, tied=True), False) == 1  # a draw
    assert A.points(r(4, 1, tied=True), False) == 1
    assert A.points(r(4, 2, tied=True), False) == 1  # a shared place: its points
    assert A.points(r(4, 3, tied=True), False) == 0
    with pytest.raises(ValueError):
        r(3, 4)
    with pytest.raises(ValueError):
        r(5, 1)


def _run(size: int, places: list[int | tuple[int, str]]) -> list[int]:
    s, got = A.Standing(), []
    for item in places:
        place, flags = (item, "") if isinstance(item, int) else item
        s, pts = A.score(
            s, r(size, place, tied="t" in flags, sprint="s" in flags, all_resigned="r" in flags)
        )
        got.append(pts)
    assert s.points == sum(got) and s.history == tuple(got)
    return got


def test_the_streak_doubles_from_the_third_win_in_a_row_until_anything_else() -> None:
    assert _run(2, [1, 1, 1, 1, 2, 1, 1, 1]) == [2, 2, 4, 4, 0, 2, 2, 4]
    # a draw on fire is doubled and ends the streak
    assert _run(2, [1, 1, (1, "t"), 1, 1, (1, "t")]) == [2, 2, 2, 2, 2, 2]
    # a second place on fire, in a race of three: doubled, and the streak ends
    assert _run(3, [1, 1, 2, 1]) == [2, 2, 2, 2]
    s = A.Standing()
    for _ in range(2):
        s, _pts = A.score(s, r(2, 1))
    assert s.on_fire and (s.streak, s.wins, s.races) == (2, 2, 2)
    s, _pts = A.score(s, r(2, 1, tied=True))
    assert not s.on_fire and (s.streak, s.wins, s.races) == (0, 2, 3)


def test_a_sprint_win_earns_one_point_more_never_doubled() -> None:
    assert _run(2, [(1, "s"), (2, "s"), (1, "s"), (1, "s"), (1, "s")]) == [3, 0, 3, 3, 5]
    assert _run(2, [(1, "st")]) == [1]  # a shared first place is no win
    assert _run(4, [(2, "s")]) == [1]
    s, _pts = A.score(A.Standing(), r(2, 2, sprint=True))
    assert s.sprints == 1


def test_a_race_everyone_resigned_gives_nothing_and_ends_the_streak() -> None:
    assert _run(2, [1, 1, 1, (1, "r"), 1]) == [2, 2, 4, 0, 2]
    assert _run(3, [(1, "rs"), (2, "r")]) == [0, 0]
    s, _pts = A.score(A.Standing(), r(2, 1, all_resigned=True))
    assert (s.wins, s.races, s.streak) == (0, 1, 0)


def test_results_from_a_race_ranking_and_performance() -> None:
    ratings = {"a": 1500, "b": 1700, "c": 1300, "d": 1600}
    got = A.results({"a": 1, "b": 2, "c": 2, "d": 4}, ratings, {"a"})
    assert got["a"] == A.RaceResult(4, 1, False, False, True, ((1700, 1), (1300, 1), (1600, 1)))
    assert got["b"] == A.RaceResult(4, 2, True, False, False, ((1500, -1), (1300, 0), (1600, 1)))
    assert got["d"].opponents == ((1500, -1), (1700, -1), (1300, -1))
    a, _pts = A.score(A.Standing(), got["a"])
    assert a.performance == (1700 + 1300 + 1600 + 3 * 500) // 3
    b, _pts = A.score(A.Standing(), got["b"])
    assert b.performance == (1500 - 500 + 1300 + 1600 + 500) // 3
    assert A.Standing().performance == 0
    # everyone resigned: a loss to everyone, whatever the ranks
    gone = A.results({"a": 1, "b": 2}, ratings, all_resigned=True)
    a, pts = A.score(A.Standing(), gone["a"])
    assert (pts, a.performance) == (0, 1700 - 500)
    # rounded down
    odd = A.Standing(rating_sum=3001, opponents=2)
    assert odd.performance == 1500


# ---- the table ---------------------------------------------------------------------------
def test_the_sorted_set_key_orders_as_the_table_and_ties_share_a_rank() -> None:
    rng = random.Random(7)
    for _ in range(300):
        rows = {
            f"p{i}": A.Standing(
                points=rng.choice([0, 1, 2, 5, 40, A.POINTS_CAP]),
                wins=rng.choice([0, 1, 3, A.WINS_CAP]),
                rating_sum=rng.choice([0, 1500, 2999, 60_000]),
                opponents=rng.choice([0, 1, 2]),
            )
            for i in range(rng.randint(1, 8))
        }
        keys = {p: A.table_key(s) for p, s in rows.items()}
        assert all(0 <= k < 2**53 for k in keys.values())

        table = {p: (-s.points, -s.wins, -s.performance) for p, s in rows.items()}
        order = table.__getitem__

        for p, q in itertools.permutations(rows, 2):
            assert (keys[p] < keys[q]) == (order(p) < order(q))
            assert (keys[p] == keys[q]) == (order(p) == order(q))
        listed = A.table(rows)
        assert [p for p, _, _ in listed] == sorted(rows, key=lambda p: (order(p), p))
        for p, rank, s in listed:
            assert s == rows[p]
            assert rank == 1 + sum(order(q) < order(p) for q in rows)


def test_table_key_caps_and_clamps() -> None:
    assert A.table_key(A.Standing(points=A.POINTS_CAP + 5)) == A.table_key(
        A.Standing(points=A.POINTS_CAP)
    )
    low = A.Standing(rating_sum=-900, opponents=1)  # a performance below 0 counts as 0
    assert A.table_key(low) == A.table_key(A.Standing())
    assert A.table_key(A.Standing(points=1)) < A.table_key(
        A.Standing(wins=5, rating_sum=9, opponents=1)
    )
    assert A.table_key(A.Standing(points=4, wins=2)) < A.table_key(A.Standing(points=4, wins=1))
    assert A.table(
        {"b": A.Standing(points=3), "a": A.Standing(points=3), "c": A.Standing(points=5)}
    ) == [
        ("c", 1, A.Standing(points=5)),
        ("a", 2, A.Standing(points=3)),
        ("b", 2, A.Standing(points=3)),
    ]
