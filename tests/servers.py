"""The race server as a subprocess, for the tests that need a real process: SIGKILL,
two nodes, and the browser tests."""

from __future__ import annotations

import os
import signal
import subprocess
import sys
import threading
import time
from pathlib import Path

from klondike_race.service.embedded import free_port
from tests.conftest import ROOT


class ServerProcess:
    """``klondike-race serve`` as a subprocess on a free port, with a dev configuration
    (``KR_DEV``, a fast countdown, a generous message rate, no dailies); ``env`` overrides
    any of it. ``output`` collects what the server prints."""

    def __init__(
        self,
        redis_url: str | None,
        port: int | None = None,
        data_dir: Path | None = None,
        **env: str,
    ) -> None:
        self.port = port or free_port()
        self.env = {
            **os.environ,
            "KR_PORT": str(self.port),
            "KR_COUNTDOWN_MS": "150",
            "KR_DEV": "1",
            "KR_RATE": "200",
            "KR_BURST": "400",
            "KR_LOG_LEVEL": "warning",
            "KR_PASSWORD_PROFILE": "CHEAPEST",  # as make_config (tests/service/conftest.py)
            "KR_DAILY_DRAWS": "none",  # as make_config: no daily deals prepared at start
            **env,
        }
        if redis_url:
            self.env["REDIS_URL"] = redis_url
        else:
            self.env.pop("REDIS_URL", None)
        if data_dir is not None:
            self.env["KR_DATA_DIR"] = str(data_dir)
        self.process: subprocess.Popen | None = None
        self.output: list[str] = []

    @property
    def url(self) -> str:
        return f"http://127.0.0.1:{self.port}/"

    def start(self, timeout: float = 15.0) -> ServerProcess:
        self.process = subprocess.Popen(
            [sys.executable, "-m", "klondike_race.cli", "serve"],
            env=self.env,
            cwd=ROOT,
            stdout=subprocess.PIPE,
            stderr=subprocess.STDOUT,
            text=True,
        )
        assert self.process.stdout is not None
        deadline = time.monotonic() + timeout
        while time.monotonic() < deadline:
            line = self.process.stdout.readline()
            self.output.append(line)
            if "is running" in line:
                self._reader = threading.Thread(target=self._drain, daemon=True)
                self._reader.start()
                return self
            if not line and self.process.poll() is not None:
                self.process.stdout.close()
                raise RuntimeError(
                    f"server exited with {self.process.returncode}:\n" + "".join(self.output)
                )
        self.process.kill()
        raise RuntimeError("server did not start:\n" + "".join(self.output))

    def _drain(self) -> None:
        assert self.process is not None and self.process.stdout is not None
        with self.process.stdout:
            for line in self.process.stdout:
                self.output.append(line)

    def kill(self) -> None:
        assert self.process is not None
        self.process.send_signal(signal.SIGKILL)
        self.process.wait(10)
        self._reader.join(10)

    def stop(self) -> int:
        assert self.process is not None
        if self.process.poll() is None:
            self.process.send_signal(signal.SIGTERM)
            try:
                self.process.wait(15)
            except subprocess.TimeoutExpired:
                self.process.kill()
                self.process.wait()
        self._reader.join(10)
        return self.process.returncode
