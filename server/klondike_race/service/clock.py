"""The server's clock, read by the shell only (the domain takes the time as an argument).

``shift`` moves it (tests, and dev servers with ``KR_CLOCK_OFFSET_MS``: day boundaries of
the daily challenges without waiting for midnight). Every node of a deployment must
agree on the time (NTP), so production servers never shift it.
"""

from __future__ import annotations

import time

_offset_ms = 0
_frozen_ms: int | None = None


def now_ms() -> int:
    if _frozen_ms is not None:
        return _frozen_ms
    return time.time_ns() // 1_000_000 + _offset_ms


def shift(ms: int) -> None:
    """From now on the clock reads ``ms`` later than the machine's (0: the machine's)."""
    global _offset_ms
    _offset_ms = ms


def freeze(at_ms: int | None) -> None:
    """Tests only: the clock reads exactly ``at_ms`` until ``freeze(None)`` (an instant
    such as 00:00 UTC, to the millisecond)."""
    global _frozen_ms
    _frozen_ms = at_ms
