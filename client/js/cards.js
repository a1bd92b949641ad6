// Card names as the server writes them ("Qh", "Td"): how to show them. No rules here.

const RANKS = { A: 'A', T: '10', J: 'J', Q: 'Q', K: 'K' };
const RANK_WORDS = {
  A: 'Ace', 2: 'Two', 3: 'Three', 4: 'Four', 5: 'Five', 6: 'Six', 7: 'Seven',
  8: 'Eight', 9: 'Nine', T: 'Ten', J: 'Jack', Q: 'Queen', K: 'King',
};
export const SUIT_SYMBOLS = { c: '\u2663', d: '\u2666', h: '\u2665', s: '\u2660' };
export const SUIT_WORDS = { c: 'clubs', d: 'diamonds', h: 'hearts', s: 'spades' };
export const SUITS = ['c', 'd', 'h', 's'];

export function cardFace(name) {
  const r = name[0];
  const s = name[1];
  return {
    name,
    rank: RANKS[r] || r,
    suit: s,
    symbol: SUIT_SYMBOLS[s],
    red: s === 'h' || s === 'd',
    label: `${RANK_WORDS[r]} of ${SUIT_WORDS[s]}`,
  };
}

// Wire pile names (docs/notation.md) and how to say them.
export const COLUMNS = ['col1', 'col2', 'col3', 'col4', 'col5', 'col6', 'col7'];
export const FOUNDATIONS = SUITS.map((s) => `found-${s}`);

export function pileLabel(pile) {
  if (pile.startsWith('col')) return `column ${pile.slice(3)}`;
  if (pile.startsWith('found-')) return `${SUIT_WORDS[pile.slice(6)]} foundation`;
  if (pile === 'foundation') return 'its foundation';
  return pile;
}

// The server's refusal reasons in words a player reads (docs/protocol.md, engine errors).
const REASONS = {
  illegal_target: "That card doesn't go there",
  kings_only: 'Only a King can go on an empty column',
  card_not_available: "Those cards can't be moved together",
  not_a_run: "Those cards don't form a run",
  foundation_to_column_forbidden: 'This room forbids moves off a foundation',
  stock_empty: 'The stock is empty',
  stock_not_empty: 'Draw the stock first',
  waste_empty: 'The waste is empty',
  passes_exhausted: 'No passes left through the stock',
  undo_disabled: 'Undo is off in this room',
  nothing_to_undo: 'Nothing to undo',
  empty_source: 'Nothing to move there',
  same_pile: 'Same pile',
  game_over: 'Your game is over',
  not_started: 'The race has not started yet',
  race_over: 'The race is over',
  bad_seq: 'Out of step with the server; resynchronising',
  bad_count: "That many cards can't move there",
  not_supported: "That move doesn't exist",
};

// Card names in a server message ("2d does not fit on 6d") shown as cards are ("2♦").
export function cardsInText(text) {
  return String(text).replace(/\b([A2-9TJQK])([cdhs])\b/g, (_, r, s) => `${RANKS[r] || r}${SUIT_SYMBOLS[s]}`);
}

// A refusal in words: the server's own message, which says what exactly was wrong
// ("2♦ does not fit on 6♦ (one rank lower and the other colour)"), after the reason's
// short wording; either alone when the other is missing.
export function reasonText(reason, message) {
  const words = REASONS[reason];
  if (!message) return words || reason;
  const specific = cardsInText(message);
  return words ? `${words}: ${specific}` : specific;
}
