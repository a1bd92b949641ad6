"""The server's clock: one per node, passed to every part of the shell that reads the
time (the domain takes the time as an argument).

A node's clock reads Redis's time, not its machine's: each readiness probe asks Redis
for its time (``TIME``) and ``agree`` keeps the clock's correction within what that
round trip allows. So every node of a deployment reads one time (to within a round trip),
whatever their machines' clocks say: a race's time limit, its start and each move's time
mean the same on every node.

``shift`` moves it on from there (tests, and dev servers with ``KR_CLOCK_OFFSET_MS``: day
boundaries of the daily challenges without waiting for midnight); production servers
never shift it.
"""

from __future__ import annotations

import time
from collections.abc import Callable


def machine_ms() -> int:
    """This machine's clock, in epoch milliseconds."""
    return time.time_ns() // 1_000_000


class Clock:
    def __init__(self, offset_ms: int = 0, machine: Callable[[], int] = machine_ms) -> None:
        self._offset_ms = offset_ms
        self._frozen_ms: int | None = None
        self._machine = machine
        # Redis's time minus the machine's, as the last round trips bound it (``agree``)
        self.correction_ms = 0

    def now_ms(self) -> int:
        """Epoch milliseconds, as this clock reads them."""
        if self._frozen_ms is not None:
            return self._frozen_ms
        return self._machine() + self.correction_ms + self._offset_ms

    def machine_ms(self) -> int:
        """The machine's clock, uncorrected: what ``agree``'s round trips are timed by."""
        return self._machine()

    def agree(self, redis_ms: int, sent_ms: int, answered_ms: int) -> bool:
        """Redis said ``redis_ms`` between ``sent_ms`` and ``answered_ms`` (the machine's
        clock): the correction is moved only as far as it must to lie within what that
        round trip allows, so that a slower round trip never moves it. True when it
        moved."""
        low, high = redis_ms - answered_ms, redis_ms - sent_ms
        kept = min(max(self.correction_ms, low), high)
        moved = kept != self.correction_ms
        self.correction_ms = kept
        return moved

    def shift(self, ms: int) -> None:
        """From now on the clock reads ``ms`` later than Redis's time (0: Redis's)."""
        self._offset_ms = ms

    def shift_to(self, at_ms: int) -> None:
        """From now on the clock reads ``at_ms`` now, and runs on from there."""
        self._offset_ms = at_ms - self._machine() - self.correction_ms

    def freeze(self, at_ms: int | None) -> None:
        """Tests only: the clock reads exactly ``at_ms`` until ``freeze(None)`` (an instant
        such as 00:00 UTC, to the millisecond)."""
        self._frozen_ms = at_ms
