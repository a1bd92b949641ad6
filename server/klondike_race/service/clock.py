"""The server's clock, read by the shell only (the domain takes the time as an argument)."""

from __future__ import annotations

import time


def now_ms() -> int:
    return time.time_ns() // 1_000_000
