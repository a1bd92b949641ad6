"""The composite leaderboard score orders exactly as docs/rules.md says, within a double."""

from __future__ import annotations

import random

import pytest
import redis

from klondike_race.service.domain import ranking


def test_progress_key_orders_like_the_tuple_and_is_exact_in_a_double() -> None:
    rng = random.Random(7)
    rows = [
        (rng.randint(0, 52), rng.randint(0, ranking.MOVES_CAP), rng.randint(0, ranking.MS_CAP))
        for _ in range(5000)
    ]
    rows += [(52, ranking.MOVES_CAP, ranking.MS_CAP), (0, 0, 0), (0, 0, 1), (1, 0, 0)]
    keys = [ranking.progress_key(*r) for r in rows]
    for key in keys:
        assert 0 <= key < 2**53 and int(float(key)) == key
    by_key = sorted(range(len(rows)), key=lambda i: keys[i])
    by_rule = sorted(range(len(rows)), key=lambda i: (-rows[i][0], rows[i][1], rows[i][2]))
    assert [rows[i] for i in by_key] == [rows[i] for i in by_rule]


def test_adjacent_values_differ_in_redis(redis_url) -> None:
    r = redis.Redis.from_url(redis_url)
    top = ranking.progress_key(0, ranking.MOVES_CAP, ranking.MS_CAP)
    r.zadd(
        "t",
        {
            "a": top,
            "b": top - 1,
            "c": ranking.progress_key(0, ranking.MOVES_CAP, ranking.MS_CAP - 2),
        },
    )
    assert [m.decode() for m in r.zrange("t", 0, -1)] == ["c", "b", "a"]
    assert int(r.zscore("t", "a")) == top


def test_score_key_higher_score_first_then_time() -> None:
    assert ranking.score_key(100, 5000) < ranking.score_key(99, 0)
    assert ranking.score_key(100, 10) < ranking.score_key(100, 11)
    assert ranking.score_key(-52, 0) > ranking.score_key(0, 0)
    assert ranking.score_key(2**30, 0) >= 0 and ranking.score_key(-(2**30), ranking.MS_CAP) < 2**53


def test_ties_share_a_rank() -> None:
    keys = [("p1", 5), ("p2", 3), ("p3", 5), ("p4", 9)]
    assert ranking.ranks(keys) == [("p2", 1, 3), ("p1", 2, 5), ("p3", 2, 5), ("p4", 4, 9)]


def test_caps_are_enforced() -> None:
    with pytest.raises(ValueError):
        ranking.progress_key(53, 0, 0)
    assert ranking.progress_key(10, 10**9, 10**12) == ranking.progress_key(
        10, ranking.MOVES_CAP, ranking.MS_CAP
    )
