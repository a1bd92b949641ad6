"""Room settings: every option of the rules as this project plays them (docs/rules.md),
with its defaults.

Text form (round-trips through ``Settings.parse``)::

    draw=1,passes=unlimited,empty=kings,foundation_to_column=allowed,scoring=none,undo=off

``timed=on`` is added only for timed standard scoring. ``Settings.from_dict`` takes the
same keys as JSON values (``{"draw": 3, "passes": 3, ...}``) and is the entry for
untrusted input: anything unknown or out of range raises NotationError(``bad_setting``).
"""

from __future__ import annotations

import json
from dataclasses import asdict, dataclass
from typing import Any

from .errors import NotationError

UNLIMITED = 0  # ``passes`` value meaning no limit

_DRAWS = (1, 3)
_PASSES = (UNLIMITED, 3, 1)
_EMPTY = ("kings", "any")
_SCORING = ("none", "standard", "vegas")
_KEYS = ("draw", "passes", "empty", "foundation_to_column", "scoring", "timed", "undo")


def _bad(message: str) -> NotationError:
    return NotationError("bad_setting", message)


@dataclass(frozen=True, slots=True)
class Settings:
    """One game's rules. ``passes`` is 0 for unlimited, else 3 or 1 passes through the stock."""

    draw: int = 1
    passes: int = UNLIMITED
    empty: str = "kings"
    foundation_to_column: bool = True
    scoring: str = "none"
    timed: bool = False
    undo: bool = False

    def __post_init__(self) -> None:
        if type(self.draw) is not int or self.draw not in _DRAWS:
            raise _bad(f"draw must be 1 or 3, not {self.draw!r}")
        if type(self.passes) is not int or self.passes not in _PASSES:
            raise _bad(f"passes must be unlimited, 3 or 1, not {self.passes!r}")
        if self.empty not in _EMPTY:
            raise _bad(f"empty must be kings or any, not {self.empty!r}")
        if self.scoring not in _SCORING:
            raise _bad(f"scoring must be none, standard or vegas, not {self.scoring!r}")
        for name in ("foundation_to_column", "timed", "undo"):
            if not isinstance(getattr(self, name), bool):
                raise _bad(f"{name} must be a boolean")
        if self.timed and self.scoring != "standard":
            raise _bad("timed scoring exists only with standard scoring")

    @property
    def recycles_allowed(self) -> int | None:
        """How many times the waste may be turned over; None when unlimited."""
        return None if self.passes == UNLIMITED else self.passes - 1

    # ---- text form -------------------------------------------------------------------
    def __str__(self) -> str:
        parts = [
            f"draw={self.draw}",
            f"passes={'unlimited' if self.passes == UNLIMITED else self.passes}",
            f"empty={self.empty}",
            f"foundation_to_column={'allowed' if self.foundation_to_column else 'forbidden'}",
            f"scoring={self.scoring}",
        ]
        if self.timed:
            parts.append("timed=on")
        parts.append(f"undo={'on' if self.undo else 'off'}")
        return ",".join(parts)

    def __repr__(self) -> str:
        return f"Settings.parse({str(self)!r})"

    @classmethod
    def parse(cls, text: str) -> Settings:
        """Parse the text form; missing keys take their defaults (see ``from_dict``)."""
        if not isinstance(text, str):
            raise _bad("settings text must be a string")
        values: dict[str, Any] = {}
        for part in filter(None, (p.strip() for p in text.split(","))):
            key, sep, value = part.partition("=")
            if not sep:
                raise _bad(f"expected key=value, got {part!r}")
            values[key.strip()] = value.strip()
        return cls.from_dict(values)

    def to_dict(self) -> dict[str, Any]:
        out = asdict(self)
        out["passes"] = "unlimited" if self.passes == UNLIMITED else self.passes
        return out

    @classmethod
    def from_dict(cls, values: object) -> Settings:
        """Build from JSON-like values, checking every one.

        Accepts ints or strings for numbers, booleans or ``on/off/allowed/forbidden`` for
        switches. Vegas scoring without an explicit ``passes`` takes one pass in Draw 1 and
        three in Draw 3, as docs/rules.md says.
        """
        if not isinstance(values, dict):
            raise _bad("settings must be an object")
        unknown = sorted(set(values) - set(_KEYS))
        if unknown:
            raise _bad(f"unknown setting {unknown[0]!r}")
        draw = _number(values.get("draw", 1), "draw")
        scoring = values.get("scoring", "none")
        if "passes" in values:
            passes = values["passes"]
            passes = UNLIMITED if passes in ("unlimited", None) else _number(passes, "passes")
            if passes == UNLIMITED and values["passes"] not in ("unlimited", None):
                raise _bad("passes must be unlimited, 3 or 1")
        else:
            passes = (1 if draw == 1 else 3) if scoring == "vegas" else UNLIMITED
        return cls(
            draw=draw,
            passes=passes,
            empty=values.get("empty", "kings"),
            foundation_to_column=_switch(
                values.get("foundation_to_column", True), "foundation_to_column"
            ),
            scoring=scoring,
            timed=_switch(values.get("timed", False), "timed"),
            undo=_switch(values.get("undo", False), "undo"),
        )

    @classmethod
    def from_wire(cls, values: object) -> Settings:
        """``from_dict``, with each value written as the protocol writes it (the JSON of
        ``to_dict``: ``3``, not ``"3"``; ``false``, not ``"forbidden"``): what a client
        sends (``create``, ``create_arena``)."""
        settings = cls.from_dict(values)
        assert isinstance(values, dict)  # (from_dict refuses anything else)
        canonical = settings.to_dict()
        for key, value in values.items():
            if type(value) is not type(canonical[key]) or value != canonical[key]:
                raise _bad(f"{key!r} is written {json.dumps(canonical[key])} here")
        return settings


def _number(value: object, name: str) -> int:
    if isinstance(value, bool):
        raise _bad(f"{name} must be a number")
    if isinstance(value, int):
        return value
    if isinstance(value, str) and value.isascii() and value.isdigit() and len(value) < 3:
        return int(value)
    raise _bad(f"{name} must be a number, not {value!r}")


_ON = {
    True: True,
    False: False,
    "on": True,
    "off": False,
    "allowed": True,
    "forbidden": False,
    "true": True,
    "false": False,
}


def _switch(value: object, name: str) -> bool:
    if isinstance(value, (bool, str)) and value in _ON:
        return _ON[value]
    raise _bad(f"{name} must be on/off (or allowed/forbidden), not {value!r}")


DEFAULT = Settings()
