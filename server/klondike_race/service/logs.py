"""structlog setup: JSON lines when not on a terminal (or KR_LOG_JSON=1), readable otherwise."""

from __future__ import annotations

import logging
import sys

import structlog


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
        logger_factory=structlog.PrintLoggerFactory(sys.stderr),
        cache_logger_on_first_use=True,
    )
