"""``klondike-race serve --workers N``: one server process per core on one machine.

The supervisor (this module, no event loop of its own) starts the embedded Redis when no
Redis is configured, picks the port when it is 0, then starts N ordinary ``serve``
processes, the workers. Each is a node of its own (its own id, Redis connections, solver
pool and fan-out) listening on the same port with SO_REUSEPORT, so the kernel spreads new
connections over them; nodes already share everything through Redis (any node serves any
connection), so nothing else changes. With ``KR_WORKER_PORTS=B`` worker i also listens on
port B + i of its own (every route: its ``/metrics`` and ``/readyz``, for a scraper or a
load balancer that wants each worker).

It prints the "running" line once every worker is listening; a worker that exits while
the supervisor is not stopping is started again (after 1 s, doubling up to 30 s while it
keeps failing within a minute). SIGTERM or SIGINT to the supervisor stops every worker
gracefully (each closes its connections with 1001 and writes its pending moves), then the
embedded Redis. Workers die with the supervisor, even when it is SIGKILLed (Linux).
"""

from __future__ import annotations

import os
import signal
import subprocess
import sys
import time
from dataclasses import dataclass, field

import structlog

from .config import Config, url_host
from .embedded import EmbeddedRedis, die_with_parent, free_port

log = structlog.get_logger("klondike_race.workers")

READY = "Klondike Race is running"


@dataclass
class _Worker:
    index: int
    process: subprocess.Popen[str] | None = None
    due: float = 0.0  # when to start it again after it exited
    failures: list[float] = field(default_factory=list)


def _environment(config: Config, url: str, port: int, index: int) -> dict[str, str]:
    """Worker ``index``'s environment: the supervisor's, with what ``serve``'s flags set
    (they override the environment) and the shared Redis, port and worker settings."""
    env = dict(os.environ)
    env.update(
        KR_WORKERS="1",
        KR_REUSE_PORT="1",
        KR_PORT=str(port),
        KR_HOST=config.host,
        REDIS_URL=url,
        KR_WORKER_PORT=str(config.worker_ports + index) if config.worker_ports else "0",
    )
    if config.sentinels or config.redis_cluster:
        env.pop("REDIS_URL")  # the workers follow the Sentinels or the cluster themselves
    for name in ("dev", "uvloop"):
        if getattr(config, name):
            env["KR_" + name.upper()] = "1"
    env["KR_COUNTDOWN_MS"] = str(config.countdown_ms)
    if config.log_json is not None:
        env["KR_LOG_JSON"] = "1" if config.log_json else "0"
    return env


def _start(worker: _Worker, env: dict[str, str], first: bool) -> None:
    """Start a worker; at first its "running" line is read (``_wait_ready``)."""
    worker.process = subprocess.Popen(
        [sys.executable, "-m", "klondike_race.cli", "serve"],
        env=env,
        stdout=subprocess.PIPE if first else subprocess.DEVNULL,
        text=True,
        preexec_fn=die_with_parent,
    )


def _wait_ready(worker: _Worker) -> bool:
    """Read the worker's "running" line (its only output on stdout)."""
    assert worker.process is not None and worker.process.stdout is not None
    line = worker.process.stdout.readline()
    worker.process.stdout.close()
    return line.startswith(READY)


def supervise(config: Config) -> int:
    """Run ``config.workers`` workers until SIGTERM or SIGINT; the exit status."""
    embedded = None
    url = config.redis_url or ""
    if not url and not config.sentinels and not config.redis_cluster:
        embedded = EmbeddedRedis(config.data_dir, appendfsync=config.appendfsync).start()
        url = embedded.url
    port = config.port or free_port()
    workers = [_Worker(i) for i in range(config.workers)]
    envs = [_environment(config, url, port, w.index) for w in workers]
    stopping = False

    def stop(_sig: int, _frame: object) -> None:
        nonlocal stopping
        stopping = True

    signal.signal(signal.SIGTERM, stop)
    signal.signal(signal.SIGINT, stop)
    try:
        for w in workers:
            _start(w, envs[w.index], first=True)
        if not all(_wait_ready(w) for w in workers):
            log.error("a worker did not start; see its log above")
            return 1
        host = url_host(config.host)
        print(f"{READY}: open http://{host}:{port}/ ({len(workers)} workers)", flush=True)
        while not stopping:
            time.sleep(0.2)
            for w in workers:
                if not stopping:  # a group's SIGTERM reaches the workers too
                    _keep(w, envs[w.index], time.monotonic())
        return 0
    finally:
        for w in workers:
            if w.process is not None and w.process.poll() is None:
                w.process.send_signal(signal.SIGTERM)
        for w in workers:
            if w.process is not None:
                try:
                    w.process.wait(30)
                except subprocess.TimeoutExpired:
                    w.process.kill()
        if embedded is not None:
            embedded.stop()


def _keep(worker: _Worker, env: dict[str, str], now: float) -> None:
    """Start a worker again that exited (later and later while it keeps failing)."""
    process = worker.process
    if process is not None:
        code = process.poll()
        if code is None:
            return
        log.warning("worker exited; starting it again", worker=worker.index, code=code)
        worker.process = None
        worker.failures = [t for t in worker.failures if now - t < 60] + [now]
        worker.due = now + min(30.0, 2 ** (len(worker.failures) - 1))
        return
    if now >= worker.due:
        _start(worker, env, first=False)
