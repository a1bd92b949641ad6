"""Server configuration: environment variables, overridden by ``serve`` flags.

docs/operations.md lists every setting.
"""

from __future__ import annotations

import math
import os
from dataclasses import dataclass, fields

from .domain.options import MAX_SPECTATOR_DELAY


class ConfigError(ValueError):
    """A setting that cannot be used; the message names its variable."""


_TRUE, _FALSE = ("1", "true", "yes", "on"), ("0", "false", "no", "off")


def _env_bool(value: str) -> bool:
    word = value.strip().lower()
    if word not in _TRUE + _FALSE:
        raise ValueError(f"not one of {', '.join(_TRUE + _FALSE)}")
    return word in _TRUE


# each number's least value, and greatest where there is one (docs/operations.md)
_RANGES: dict[str, tuple[float, float | None]] = {
    "port": (0, 65535), "worker_ports": (0, 65535), "worker_port": (0, 65535),
    "replica_acks": (0, None), "replica_wait_ms": (1, None), "redis_connections": (1, None),
    "countdown_ms": (0, None), "max_message": (256, None), "rate": (0.1, None),
    "burst": (1, None), "workers": (1, None), "spectator_batch_ms": (0, None),
    "delay_hold_kb": (1, None),
    "keep_finished_s": (1, None), "keep_daily_s": (1, None), "sweep_interval_s": (0.1, None),
    "abandoned_s": (1, None), "away_s": (1, None), "waiting_abandoned_s": (1, None),
    "solver_workers": (1, None),
    "solver_queue": (1, None), "solver_hint_s": (0.01, None), "solver_finish_s": (0.01, None),
    "solver_seed_s": (0.01, None), "solver_seed_tries": (1, None),
    "challenge_time_limit_s": (10, 4 * 3600), "solver_challenge_s": (0.01, None),
    "solver_challenge_tries": (1, None), "board_interval_ms": (10, None),
    "arena_table_rows": (1, 1000),
    "solver_analysis_s": (0.01, None), "attempts_per_address": (1, None),
    "solver_par_work": (0, 100_000),
    "arena_deals": (0, None), "solver_arena_s": (0.01, None),
}  # fmt: skip
_CHOICES = {
    "log_level": ("debug", "info", "warning", "error"),
    "appendfsync": ("always", "everysec", "no"),
    "password_profile": ("RFC_9106_LOW_MEMORY", "RFC_9106_HIGH_MEMORY", "CHEAPEST"),
    "challenge_ranking": ("everyone", "accounts"),
}


def env_name(field: str) -> str:
    return "REDIS_URL" if field == "redis_url" else "KR_" + field.upper()


@dataclass(slots=True)
class Config:
    host: str = "127.0.0.1"  # KR_HOST
    port: int = 8765  # KR_PORT (0: any free port)
    redis_url: str | None = None  # REDIS_URL; None starts an embedded redis-server
    sentinels: str | None = None  # KR_SENTINELS: "host:port,host:port": follow failovers
    sentinel_master: str = "kr"  # KR_SENTINEL_MASTER: the primary's name in Sentinel
    redis_cluster: str | None = None  # KR_REDIS_CLUSTER: "host:port,...": Redis Cluster nodes
    replica_acks: int = 0  # KR_REPLICA_ACKS: replicas that must hold a move before its ack
    commit_connection: bool = True  # KR_COMMIT_CONNECTION: the group commit's own connection
    # KR_COMMAND_CONNECTION: the node's other commands on one connection of its own
    command_connection: bool = True
    replica_wait_ms: int = 500  # KR_REPLICA_WAIT_MS: how long a move waits for them
    redis_connections: int = 64  # KR_REDIS_CONNECTIONS: commands in flight to Redis at once
    data_dir: str = "data"  # KR_DATA_DIR: the embedded redis-server's folder
    appendfsync: str = "everysec"  # KR_APPENDFSYNC: embedded redis: always/everysec/no
    countdown_ms: int = 3000  # KR_COUNTDOWN_MS
    max_message: int = 4096  # KR_MAX_MESSAGE: bytes per frame; larger closes with 1009
    rate: float = 20.0  # KR_RATE: messages per second a connection may sustain
    burst: float = 40.0  # KR_BURST: ... and in a burst; beyond closes with 1008
    trust_forwarded: bool = False  # KR_TRUST_FORWARDED: client address from X-Forwarded-For
    clock_offset_ms: int = 0  # KR_CLOCK_OFFSET_MS: dev servers only: the clock runs this far ahead
    dev: bool = False  # KR_DEV: allow explicit deals in create (tests, development)
    log_json: bool | None = None  # KR_LOG_JSON: JSON lines; default: when not a terminal
    log_level: str = "info"  # KR_LOG_LEVEL
    # KR_PASSWORD_PROFILE: argon2-cffi's parameters for new password hashes (a hash keeps
    # its own, so any profile verifies any hash); CHEAPEST is for tests only
    password_profile: str = "RFC_9106_LOW_MEMORY"
    client_dir: str | None = None  # KR_CLIENT_DIR: static files served at /
    uvloop: bool = False  # KR_UVLOOP: run on uvloop when it is installed
    workers: int = 1  # KR_WORKERS: server processes on this machine sharing the port
    worker_ports: int = 0  # KR_WORKER_PORTS: worker i also listens on this + i (0: not)
    reuse_port: bool = False  # KR_REUSE_PORT: listen with SO_REUSEPORT (set for workers)
    worker_port: int = 0  # KR_WORKER_PORT: a port of this process's own as well (0: none)
    spectator_batch_ms: int = 50  # KR_SPECTATOR_BATCH_MS: others' updates of a move leave together
    delay_hold_kb: int = 16384  # KR_DELAY_HOLD_KB: a room's updates held for a spectator_delay
    keep_finished_s: int = 7 * 86400  # KR_KEEP_FINISHED_S: a finished room's keys expire
    keep_daily_s: int = 90 * 86400  # KR_KEEP_DAILY_S: ... a challenge attempt's (its replay)
    sweep_interval_s: float = 30.0  # KR_SWEEP_INTERVAL_S: how often rooms are swept
    abandoned_s: int = 900  # KR_ABANDONED_S: a started room with no player connected ends
    away_s: int = 120  # KR_AWAY_S: the games of players away resigned once the others' ended
    waiting_abandoned_s: int = 1800  # KR_WAITING_ABANDONED_S: same for a waiting room
    solver_workers: int = 1  # KR_SOLVER_WORKERS: solver processes (created on first use)
    solver_queue: int = 16  # KR_SOLVER_QUEUE: hint/finish/seed searches waiting or running
    solver_hint_s: float = 3.0  # KR_SOLVER_HINT_S: budget of a hint (its searches share it)
    solver_finish_s: float = 5.0  # KR_SOLVER_FINISH_S: budget of a finish-it-for-me search
    solver_seed_s: float = 1.0  # KR_SOLVER_SEED_S: budget per seed tried (winnable-only)
    solver_seed_tries: int = 30  # KR_SOLVER_SEED_TRIES: seeds tried before giving up
    daily_draws: str = "1,3"  # KR_DAILY_DRAWS: the daily challenges' variants (draw counts)
    challenge_time_limit_s: int = 1800  # KR_CHALLENGE_TIME_LIMIT_S: a daily attempt's time
    # KR_ATTEMPTS_PER_ADDRESS: ranked attempts at one challenge deal from one client address
    attempts_per_address: int = 3
    # KR_CHALLENGE_RANKING: who a challenge's leaderboards rank: everyone, or accounts
    # (guests' attempts listed apart)
    challenge_ranking: str = "everyone"
    challenge_secret: str | None = None  # KR_CHALLENGE_SECRET: challenge seeds derive from it
    challenges_file: str | None = None  # KR_CHALLENGES_FILE: the operator's challenges (JSON)
    arenas_file: str | None = None  # KR_ARENAS_FILE: the operator's arena schedule (text)
    # KR_ARENA_DEALS: the most certified deals pooled for one arena (0: none, every race
    # on a random deal); KR_SOLVER_ARENA_S: budget per candidate seed pooled
    arena_deals: int = 100
    solver_arena_s: float = 0.25
    arena_table_rows: int = 100  # KR_ARENA_TABLE_ROWS: an arena table's rows sent
    solver_challenge_s: float = 10.0  # KR_SOLVER_CHALLENGE_S: budget per challenge candidate
    solver_challenge_tries: int = 20  # KR_SOLVER_CHALLENGE_TRIES: candidates tried at most
    board_interval_ms: int = 500  # KR_BOARD_INTERVAL_MS: leaderboard pushes at most this often
    solver_analysis_s: float = 5.0  # KR_SOLVER_ANALYSIS_S: budget per position analysed
    # KR_SOLVER_PAR_WORK: engine moves spent shortening a par's line (a race's analysis, a
    # challenge deal, a winnable-only deal; 0: the solver's first line)
    solver_par_work: int = 2_000  # (solver.PAR_WORK)
    # KR_RATED_SPECTATORS: what spectators of rated play see while the race runs: outline
    # (pile sizes, no card) or delayed:SECONDS (every board, that far behind)
    rated_spectators: str = "outline"

    @property
    def rated_view(self) -> tuple[str, int]:
        """``rated_spectators`` read: ("outline", 0) or ("delayed", seconds)."""
        read = rated_view(self.rated_spectators)
        if read is None:
            raise ConfigError(self._rated_problem())
        return read

    @property
    def daily_variants(self) -> tuple[int, ...]:
        """``daily_draws`` read: the draw counts of the dailies (none for ``none``)."""
        read = daily_variants(self.daily_draws)
        if read is None:
            raise ConfigError(self._daily_problem())
        return read

    def _daily_problem(self) -> str:
        return f"KR_DAILY_DRAWS={self.daily_draws!r}: 1, 3, 1,3 or none"

    def _rated_problem(self) -> str:
        return (
            f"KR_RATED_SPECTATORS={self.rated_spectators!r}: outline, or delayed:SECONDS "
            f"(SECONDS a whole number 1 to {MAX_SPECTATOR_DELAY})"
        )

    @classmethod
    def from_env(cls, env: dict[str, str] | None = None) -> Config:
        """The settings of ``env`` (default: the environment); values that are not of
        their setting's kind raise ConfigError, one line each (ranges: ``problems``)."""
        env = dict(os.environ if env is None else env)
        config = cls()
        unreadable = []
        for f in fields(cls):
            key = env_name(f.name)
            if key not in env or env[key] == "":
                continue
            raw = env[key]
            current = getattr(config, f.name)
            try:
                if f.name == "log_json" or isinstance(current, bool):  # (log_json: None)
                    value: object = _env_bool(raw)
                elif isinstance(current, int):
                    value = int(raw)
                elif isinstance(current, float):
                    value = float(raw)
                    if not math.isfinite(value):  # nan would pass every range check
                        unreadable.append(f"{key}={raw!r}: not a finite number")
                        continue
                else:
                    value = raw
            except ValueError as err:
                why = str(err)  # a switch's words
                if isinstance(current, float):
                    why = "not a number"
                elif isinstance(current, int) and not isinstance(current, bool):
                    why = "not a whole number"
                unreadable.append(f"{key}={raw!r}: {why}")
                continue
            setattr(config, f.name, value)
        if unreadable:
            raise ConfigError("\n".join(unreadable))
        return config

    def problems(self) -> list[str]:
        """What is wrong with these settings, one line each naming its variable."""
        out = []
        for name, (low, high) in _RANGES.items():
            value = getattr(self, name)
            if value < low or (high is not None and value > high):
                bound = f"{low:g} or more" if high is None else f"{low:g} to {high:g}"
                out.append(f"{env_name(name)}={_number(value)}: must be {bound}")
        for name, choices in _CHOICES.items():
            if getattr(self, name) not in choices:
                out.append(f"{env_name(name)}={getattr(self, name)!r}: one of {', '.join(choices)}")
        if daily_variants(self.daily_draws) is None:
            out.append(self._daily_problem())
        first = self.worker_ports
        if 0 < first <= 65535 and self.workers > 1:
            last = first + self.workers - 1
            if last > 65535:
                out.append(f"KR_WORKER_PORTS={first}: the last worker's port is over 65535")
            elif first <= self.port <= last:
                out.append(
                    f"KR_WORKER_PORTS={first}: the workers' own ports ({first}-{last}) "
                    f"take in KR_PORT={self.port}"
                )
        if self.away_s < 2 * self.sweep_interval_s:  # else connected players look away
            out.append(
                f"KR_AWAY_S={self.away_s}: at least twice KR_SWEEP_INTERVAL_S "
                f"({_number(self.sweep_interval_s)})"
            )
        for name in ("sentinels", "redis_cluster"):
            value = getattr(self, name)
            if value is not None and not all(_address(a) for a in value.split(",")):
                out.append(f"{env_name(name)}={value!r}: host:port,host:port,…")
        if self.redis_url is not None and not self.redis_url.startswith(URL_SCHEMES):
            out.append(f"REDIS_URL={self.redis_url!r}: a redis://, rediss:// or unix:// URL")
        if rated_view(self.rated_spectators) is None:
            out.append(self._rated_problem())
        return out


def daily_variants(text: str) -> tuple[int, ...] | None:
    """``KR_DAILY_DRAWS`` read: ``1,3`` is (1, 3) (either order, spaces allowed, each
    once), ``none`` is (); None for anything else."""
    draws = [d.strip() for d in text.split(",")]
    if draws == ["none"]:
        return ()
    if not all(d in ("1", "3") for d in draws) or len(set(draws)) != len(draws):
        return None
    return tuple(int(d) for d in draws)


def rated_view(text: str) -> tuple[str, int] | None:
    """``KR_RATED_SPECTATORS`` read: ``outline`` is ("outline", 0), ``delayed:30`` is
    ("delayed", 30) (1 to 300 seconds, as a room's own ``spectator_delay``); None for
    anything else."""
    if text == "outline":
        return "outline", 0
    kind, colon, seconds = text.partition(":")
    if kind != "delayed" or not colon or not seconds.isascii() or not seconds.isdigit():
        return None
    if not 1 <= int(seconds) <= MAX_SPECTATOR_DELAY:
        return None
    return "delayed", int(seconds)


URL_SCHEMES = ("redis://", "rediss://", "unix://")


def url_host(host: str) -> str:
    """``host`` as a URL names it: localhost for the loopback and any address, an IPv6
    address in brackets."""
    if host in ("127.0.0.1", "0.0.0.0", "::"):
        return "localhost"
    return f"[{host}]" if ":" in host else host


def _number(value: float) -> str:
    """A setting's number as given: 0 for 0.0, 0.05 for 0.05."""
    return str(int(value)) if float(value).is_integer() else str(value)


def _address(text: str) -> bool:
    """Whether ``text`` reads as host:port (a port 1-65535)."""
    host, _, port = text.strip().rpartition(":")
    return bool(host) and port.isdigit() and 1 <= int(port) <= 65535
