"""Settings (docs/operations.md, "Configuration"): a value `serve` cannot use stops it at
once, with a line naming the variable, before anything starts."""

from __future__ import annotations

import os
import subprocess
import sys

import pytest

from klondike_race.service.config import Config, ConfigError
from tests.conftest import ROOT


def test_the_defaults_are_sound() -> None:
    assert Config().problems() == []
    assert Config.from_env({}).problems() == []


@pytest.mark.parametrize(
    ("variable", "value", "words"),
    [
        ("KR_PORT", "abc", "not a whole number"),
        ("KR_RATE", "fast", "not a number"),
        ("KR_DEV", "maybe", "not one of 1, true"),
        ("KR_TRUST_FORWARDED", "2", "not one of 1, true"),
    ],
)
def test_a_value_of_the_wrong_kind_is_named(variable, value, words) -> None:
    with pytest.raises(ConfigError) as info:
        Config.from_env({variable: value})
    assert str(info.value).startswith(f"{variable}={value!r}: {words}")


@pytest.mark.parametrize(
    ("variable", "value", "words"),
    [
        ("KR_PORT", "70000", "must be 0 to 65535"),
        ("KR_PORT", "-1", "must be 0 to 65535"),
        ("KR_SWEEP_INTERVAL_S", "0", "must be 0.1 or more"),
        ("KR_SOLVER_WORKERS", "0", "must be 1 or more"),
        ("KR_REDIS_CONNECTIONS", "0", "must be 1 or more"),
        ("KR_COUNTDOWN_MS", "-100", "must be 0 or more"),
        ("KR_CHALLENGE_TIME_LIMIT_S", "5", "must be 10 to 14400"),
        ("KR_LOG_LEVEL", "bogus", "one of debug, info, warning, error"),
        ("KR_APPENDFSYNC", "sometimes", "one of always, everysec, no"),
        ("KR_DAILY_DRAWS", "2", "1, 3 or 1,3"),
        ("KR_DAILY_DRAWS", "1,x", "1, 3 or 1,3"),
        ("KR_DAILY_DRAWS", "3,3", "1, 3 or 1,3"),
    ],
)
def test_a_value_out_of_range_is_named(variable, value, words) -> None:
    problems = Config.from_env({variable: value}).problems()
    assert len(problems) == 1 and problems[0].startswith(f"{variable}=") and words in problems[0]


def test_serve_refuses_to_start_on_a_bad_value(tmp_path) -> None:
    data = tmp_path / "data"
    env = {**os.environ, "KR_DATA_DIR": str(data), "KR_PORT": "0", "KR_LOG_LEVEL": "loud"}
    env.pop("REDIS_URL", None)
    for extra in ({"KR_SWEEP_INTERVAL_S": "0"}, {"KR_PORT": "eighty"}):
        done = subprocess.run(
            [sys.executable, "-m", "klondike_race.cli", "serve"],
            env={**env, **extra}, cwd=ROOT, capture_output=True, text=True, timeout=60,
        )  # fmt: skip
        assert done.returncode == 2, done
        assert "Traceback" not in done.stderr and done.stdout == ""
        assert not data.exists()  # no embedded Redis was started
        variable = next(iter(extra))
        assert f"klondike-race serve: {variable}=" in done.stderr, done.stderr
    # every problem is said, not only the first
    assert "KR_LOG_LEVEL='loud'" in subprocess.run(
        [sys.executable, "-m", "klondike_race.cli", "serve"],
        env={**env, "KR_SWEEP_INTERVAL_S": "0"}, cwd=ROOT, capture_output=True, text=True,
        timeout=60,
    ).stderr  # fmt: skip
