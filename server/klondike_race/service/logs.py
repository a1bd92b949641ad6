"""structlog setup: JSON lines when not on a terminal (or KR_LOG_JSON=1), readable otherwise."""

from __future__ import annotations

import contextlib
import logging
import sys

import structlog


class StderrLogger:
    """Prints each line to ``sys.stderr`` as it is when the line is written. A line that
    cannot be written (the stream closed, a broken pipe) is dropped: a log never stops the
    work it describes (a connection's next message, a shutdown)."""

    def msg(self, message: str) -> None:
        with contextlib.suppress(OSError, ValueError):  # ValueError: a closed file
            print(message, file=sys.stderr, flush=True)

    log = debug = info = warn = warning = msg
    fatal = failure = err = error = critical = exception = msg


STDERR = StderrLogger()


def configure(json: bool | None = None, level: str = "info") -> None:
    if json is None:
        json = not sys.stderr.isatty()
    renderer = (
        structlog.processors.JSONRenderer() if json else structlog.dev.ConsoleRenderer(colors=False)
    )
    structlog.configure(
        processors=[
            structlog.contextvars.merge_contextvars,
            structlog.processors.add_log_level,
            structlog.processors.TimeStamper(fmt="iso", utc=True),
            structlog.processors.format_exc_info,
            renderer,
        ],
        wrapper_class=structlog.make_filtering_bound_logger(logging.getLevelName(level.upper())),
        logger_factory=lambda *_: STDERR,
        cache_logger_on_first_use=True,
    )
