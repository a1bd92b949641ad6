"""The service's errors: one base, ``ServiceError``, carrying a machine-readable reason.

Every error a client can cause is a ``ServiceError``; the connection loop answers it with
an ``error`` message (``reason``, ``message``, ``about``) and changes nothing.

- ``ProtocolError``: the frame is not a message this server accepts (wire/decode.py):
  ``bad_json``, ``unknown_type``, ``missing_field``, ``bad_field``.
- ``RoomError``: a room transition refused (domain/room.py): ``room_full``,
  ``not_waiting``, ``not_host``, ``not_in_room``, ``no_players``, ``room_finished``,
  ``race_not_over``.
- ``ServiceError`` itself: the node refused a request (docs/protocol.md lists the
  reasons: ``not_in_room``, ``no_room``, ``bad_token``, ``busy``, the solver's...).
"""

from __future__ import annotations

from datetime import UTC, datetime
from typing import TypedDict


class ErrorFields(TypedDict, total=False):
    """An error's machine-readable fields besides ``reason`` and ``message``."""

    retry_after: int | None  # rate_limited: seconds (None: it does not open again)
    opens_at: int  # not_yet: epoch ms


class ServiceError(Exception):
    """A request refused with ``reason``; nothing was changed."""

    def __init__(self, reason: str, message: str, about: str | None = None) -> None:
        super().__init__(message)
        self.reason = reason
        self.about = about  # the client message type, when it is known

    def __repr__(self) -> str:
        return f"{type(self).__name__}({self.reason!r}, {str(self)!r})"

    def fields(self) -> ErrorFields:
        """The error's machine-readable fields besides ``reason`` and ``message``, as an
        ``error`` message (or an HTTP error's body) carries them."""
        return {}


class RateLimited(ServiceError):
    """Too many attempts: refused until ``retry_after`` seconds have passed (None: for
    good, the message says why)."""

    def __init__(self, message: str, retry_after: int | None, about: str | None = None) -> None:
        if retry_after is not None:
            message = f"{message}; try again in {retry_after} s"
        super().__init__("rate_limited", message, about)
        self.retry_after = retry_after

    def fields(self) -> ErrorFields:
        return {"retry_after": self.retry_after}


class NotYet(ServiceError):
    """Something of a challenge's deal asked for before the challenge is final: refused
    until ``opens_at`` (epoch ms), which the message names in UTC."""

    def __init__(self, what: str, opens_at: int, about: str | None = None) -> None:
        when = datetime.fromtimestamp(opens_at / 1000, UTC).strftime("%Y-%m-%d %H:%M:%S UTC")
        super().__init__("not_yet", f"{what} opens once the challenge is final, at {when}", about)
        self.opens_at = opens_at

    def fields(self) -> ErrorFields:
        return {"opens_at": self.opens_at}


class ProtocolError(ServiceError):
    """A client frame that cannot be accepted as it stands."""


class RoomError(ServiceError):
    """A room transition that does not apply to the room as it is."""
