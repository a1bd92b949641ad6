"""Who a player is across races: a guest (a device identity the browser keeps) or an
account (a claimed name with a password). Pure: the keys, the name rules, the checks.

A player's key names them in storage and on the wire (``who`` on a seat):
``g-`` + 32 hex digits (the first 128 bits of SHA-256 of the device identity) for a
guest, ``a-`` + 32 hex digits for an account. Both are longer than any name, so a
profile path ``/api/players/X`` names a key or a name, never both.
"""

from __future__ import annotations

import hashlib
import re
import unicodedata
from dataclasses import dataclass

from .errors import ServiceError

GUEST, ACCOUNT = "g-", "a-"
NAME_MIN, NAME_MAX = 3, 24
PASSWORD_MIN, PASSWORD_MAX = 8, 256
DEVICE = re.compile(r"[A-Za-z0-9_-]{32,64}")  # at least 128 bits, base64url or hex
KEY = re.compile(r"[ga]-[0-9a-f]{32}")
# characters a name may not hold: control, format (zero-width, bidi), separators other
# than the plain space, private use, unassigned
_REFUSED = {"Cc", "Cf", "Cs", "Co", "Cn", "Zl", "Zp"}


@dataclass(frozen=True, slots=True)
class Identity:
    key: str  # g-... or a-...
    name: str | None  # an account's name; a guest's is the one typed for each seat
    guest: bool

    def public(self) -> dict[str, object]:
        return {"id": self.key, "name": self.name, "guest": self.guest}


def guest(device: str) -> Identity:
    """The guest identity of a device identity (which stays the client's secret)."""
    if not DEVICE.fullmatch(device):
        raise ServiceError(
            "bad_device", "device: 32 to 64 characters of A-Z, a-z, 0-9, '-' and '_'"
        )
    return Identity(GUEST + hashlib.sha256(device.encode()).hexdigest()[:32], None, True)


def display_name(name: str) -> str:
    """A name as it is shown: NFKC-normalised; or ``bad_name`` saying what is wrong."""
    shown = unicodedata.normalize("NFKC", name)
    if shown != shown.strip() or "  " in shown:
        raise ServiceError("bad_name", "a name has no leading, trailing or double spaces")
    if not NAME_MIN <= len(shown) <= NAME_MAX:
        raise ServiceError("bad_name", f"a name has {NAME_MIN} to {NAME_MAX} characters")
    for ch in shown:
        if unicodedata.category(ch) in _REFUSED or (ch.isspace() and ch != " "):
            raise ServiceError("bad_name", f"a name cannot hold the character U+{ord(ch):04X}")
    return shown


def canonical(name: str) -> str:
    """The form names are unique in: NFKC, case-folded, NFKC again ("Ann", "ann" and
    full-width "\uff21\uff4e\uff4e" are one name)."""
    return unicodedata.normalize("NFKC", unicodedata.normalize("NFKC", name).casefold())


def check_password(password: str) -> None:
    if not PASSWORD_MIN <= len(password) <= PASSWORD_MAX:
        raise ServiceError(
            "bad_password", f"a password has {PASSWORD_MIN} to {PASSWORD_MAX} characters"
        )
