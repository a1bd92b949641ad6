"""Cards as small integers.

A card is ``suit * 13 + rank - 1`` with suits in the order ``c d h s`` and ranks 1 (Ace)
to 13 (King), so ``0`` is ``Ac`` and ``51`` is ``Ks``. Clubs and spades are black,
diamonds and hearts red. The tables below are indexed by card.
"""

from __future__ import annotations

from .errors import NotationError

SUITS = "cdhs"
SUIT_WORDS = ("clubs", "diamonds", "hearts", "spades")  # as messages name them
RANKS = "A23456789TJQK"

NAMES: tuple[str, ...] = tuple(r + s for s in SUITS for r in RANKS)
RANK: tuple[int, ...] = tuple(i % 13 + 1 for i in range(52))
SUIT: tuple[int, ...] = tuple(i // 13 for i in range(52))
RED: tuple[bool, ...] = tuple(SUIT[i] in (1, 2) for i in range(52))
KING = 13
_BY_NAME = {name: i for i, name in enumerate(NAMES)}

# FITS_ON[c]: the two cards that ``c`` may be placed on in a column
# (one rank higher, other colour). Empty for Kings.
FITS_ON: tuple[frozenset[int], ...] = tuple(
    frozenset(t for t in range(52) if RANK[t] == RANK[c] + 1 and RED[t] != RED[c])
    for c in range(52)
)

# HOLDS[t]: the two cards that may be placed on ``t`` in a column (none on an Ace).
HOLDS: tuple[tuple[int, ...], ...] = tuple(
    tuple(c for c in range(52) if t in FITS_ON[c]) for t in range(52)
)


def parse_card(text: object) -> int:
    """``'Ah'`` -> 13 * 2 + 0. Raises NotationError(``bad_card``)."""
    if isinstance(text, str):
        found = _BY_NAME.get(text)
        if found is not None:
            return found
        if len(text) == 2:  # be kind to 'ah', 'AH', '10h' is not accepted
            found = _BY_NAME.get(text[0].upper() + text[1].lower())
            if found is not None:
                return found
    raise NotationError("bad_card", f"not a card: {text!r} (rank A23456789TJQK, suit cdhs)")
