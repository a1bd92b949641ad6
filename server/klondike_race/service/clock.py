"""The server's clock: one per node, passed to every part of the shell that reads the
time (the domain takes the time as an argument).

``shift`` moves it (tests, and dev servers with ``KR_CLOCK_OFFSET_MS``: day boundaries of
the daily challenges without waiting for midnight). Every node of a deployment must
agree on the time (NTP), so production servers never shift it.
"""

from __future__ import annotations

import time


class Clock:
    def __init__(self, offset_ms: int = 0) -> None:
        self._offset_ms = offset_ms
        self._frozen_ms: int | None = None

    def now_ms(self) -> int:
        """Epoch milliseconds, as this clock reads them."""
        if self._frozen_ms is not None:
            return self._frozen_ms
        return time.time_ns() // 1_000_000 + self._offset_ms

    def shift(self, ms: int) -> None:
        """From now on the clock reads ``ms`` later than the machine's (0: the machine's)."""
        self._offset_ms = ms

    def shift_to(self, at_ms: int) -> None:
        """From now on the clock reads ``at_ms`` now, and runs on from there."""
        self._offset_ms = at_ms - time.time_ns() // 1_000_000

    def freeze(self, at_ms: int | None) -> None:
        """Tests only: the clock reads exactly ``at_ms`` until ``freeze(None)`` (an instant
        such as 00:00 UTC, to the millisecond)."""
        self._frozen_ms = at_ms
