"""Deals: a permutation of the 52 cards, from a seed or given explicitly.

The shuffle (version ``v1``; it never changes, a new one would be ``v2``):

1. The seed's text is ``str(seed)`` for an integer and the string itself otherwise, so
   ``42`` and ``"42"`` are the same deal. It is encoded as UTF-8.
2. A stream of 64-bit words comes from SHA-256 in counter mode: block ``i`` (0, 1, ...)
   is ``SHA-256(b"klondike-race/deal/v1\\x00" + seed_bytes + b"\\x00" + i as 8 bytes
   big-endian)``, read as four big-endian 64-bit words.
3. Fisher-Yates over the deck ``Ac..Kc, Ad..Kd, Ah..Kh, As..Ks``: for ``i`` from 51 down
   to 1, take the next word ``w``; if ``w >= 2**64 - 2**64 % (i + 1)`` skip it and take
   another (no modulo bias); swap positions ``i`` and ``w % (i + 1)``.

The resulting list is laid out exactly like an explicit deal (tests/data/README.md):
row by row across the columns, so column ``c`` row ``r`` (1-based) is
``cards[(r-1)*(16-r)/2 + (c-r)]``, and ``cards[28:]`` is the stock, ``cards[28]`` turned
first. docs/deal.md has the test vectors.
"""

from __future__ import annotations

import functools
import hashlib
from collections.abc import Iterator
from dataclasses import dataclass
from typing import Any

from .cards import NAMES, parse_card
from .errors import NotationError

SHUFFLE_VERSION = "v1"
_PREFIX = b"klondike-race/deal/v1\x00"
_TWO64 = 1 << 64


def seed_text(seed: object) -> str:
    """The canonical text of a seed: any str, or an int written in decimal."""
    if isinstance(seed, bool) or not isinstance(seed, (str, int)):
        raise NotationError("bad_deal", f"a seed is a string or an integer, not {seed!r}")
    if isinstance(seed, int) and not -(10**200) < seed < 10**200:
        raise NotationError("bad_deal", "a seed is 1 to 200 characters")
    text = str(seed)
    if not text or len(text) > 200:
        raise NotationError("bad_deal", "a seed is 1 to 200 characters")
    return text


def _words(seed: str) -> Iterator[int]:
    base = _PREFIX + seed.encode() + b"\x00"
    block = 0
    while True:
        digest = hashlib.sha256(base + block.to_bytes(8, "big")).digest()
        for k in range(0, 32, 8):
            yield int.from_bytes(digest[k : k + 8], "big")
        block += 1


def shuffle(seed: object) -> tuple[int, ...]:
    """The v1 shuffle of ``seed``: a tuple of 52 cards in deal order."""
    deck = list(range(52))
    words = _words(seed_text(seed))
    for i in range(51, 0, -1):
        n = i + 1
        limit = _TWO64 - _TWO64 % n
        w = next(words)
        while w >= limit:
            w = next(words)
        j = w % n
        deck[i], deck[j] = deck[j], deck[i]
    return tuple(deck)


# a room's deal is made again from its seed each time a game of it is replayed (a dozen
# times a race: entries, results, analysis, replays): the last 2,048 seeds are kept
_shuffled = functools.lru_cache(maxsize=2048)(shuffle)


def column_index(col: int, row: int) -> int:
    """Index into the 52-card list of column ``col``, row ``row`` (both 0-based)."""
    return row * (15 - row) // 2 + (col - row)


@dataclass(frozen=True, slots=True)
class Deal:
    """52 distinct cards in deal order, and the seed they came from (None if explicit)."""

    cards: tuple[int, ...]
    seed: str | None = None

    @classmethod
    def from_seed(cls, seed: object) -> Deal:
        text = seed_text(seed)
        return cls(_shuffled(text), text)

    @classmethod
    def from_cards(cls, names: object) -> Deal:
        """An explicit deal: a list of 52 card names, laid out as in tests/data/README.md."""
        if not isinstance(names, (list, tuple)) or len(names) != 52:
            raise NotationError("bad_deal", "an explicit deal is a list of 52 cards")
        cards = tuple(parse_card(n) for n in names)
        if len(set(cards)) != 52:
            dup = next(NAMES[c] for c in cards if cards.count(c) > 1)
            raise NotationError("bad_deal", f"card {dup} appears twice in the deal")
        return cls(cards, None)

    @property
    def id(self) -> str:
        """``v1:SEED`` for a seeded deal, ``cards:`` and the 104-character list otherwise."""
        if self.seed is not None:
            return f"{SHUFFLE_VERSION}:{self.seed}"
        return "cards:" + "".join(NAMES[c] for c in self.cards)

    def columns(self) -> list[list[int]]:
        """The seven columns, bottom card first; column c holds c+1 cards."""
        return [[self.cards[column_index(c, r)] for r in range(c + 1)] for c in range(7)]

    def stock(self) -> list[int]:
        """The stock with the first card to turn at the end (the top)."""
        return list(reversed(self.cards[28:]))

    def names(self) -> list[str]:
        return [NAMES[c] for c in self.cards]

    def to_json(self) -> dict[str, Any]:
        return {"seed": self.seed} if self.seed is not None else {"cards": self.names()}

    @classmethod
    def from_json(cls, data: object) -> Deal:
        if isinstance(data, dict) and set(data) == {"seed"}:
            return cls.from_seed(data["seed"])
        if isinstance(data, dict) and set(data) == {"cards"}:
            return cls.from_cards(data["cards"])
        raise NotationError("bad_deal", 'a deal is {"seed": S} or {"cards": [52 cards]}')

    def __repr__(self) -> str:
        if self.seed is not None:
            return f"Deal.from_seed({self.seed!r})"
        return f"Deal.from_cards({self.names()!r})"
