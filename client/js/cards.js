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

// A pile's name at the start of a sentence ("Column 7", "Clubs foundation", "Waste").
export function pileName(pile) {
  const words = pileLabel(pile);
  return `${words[0].toUpperCase()}${words.slice(1)}`;
}

// The server's refusal reasons in words a player reads (docs/protocol.md, engine errors).
const REASONS = {
  illegal_target: "That card doesn't go there",
  kings_only: 'Only a King can go on an empty column',
  no_target: 'No move for that card',
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

// Pile names in a server message ("col3 is empty", "only one card moves from waste")
// said as the game says them ("column 3", "the waste", "the hearts foundation", "the
// stock"); a "the" the message already has is kept, not doubled.
export function pilesInText(text) {
  return String(text).replace(/\b(?:the )?(col[1-7]|found-[cdhs]|waste|stock)\b/g,
    (_, pile) => (pile.startsWith('col') ? pileLabel(pile) : `the ${pileLabel(pile)}`));
}

// A refusal in words: the server's own message, which says what exactly was wrong
// ("2♦ does not fit on 6♦ (one rank lower and the other colour)", "column 3 is empty"),
// after the reason's short wording; either alone when the other is missing. `game` is
// what the room is called ("race", or "attempt" in a challenge's attempt).
export function reasonText(reason, message, game = 'race') {
  const known = REASONS[reason];
  const words = known && game !== 'race' ? known.replace(/\brace\b/, game) : known;
  if (!message) return words || reason;
  const specific = pilesInText(cardsInText(message));
  return words ? `${words}: ${specific}` : specific;
}

// A pick (a card selected before its target) in words: "Picked Ten of diamonds from
// column 7", "Picked Nine of clubs and 2 more cards from column 4". sel: {pile, index,
// count}, on the board the server sent; verb: "Unpicked" for a pick put back.
export function pickWords(sel, board, verb = 'Picked') {
  let card = null;
  if (sel.pile.startsWith('col')) card = board.columns[COLUMNS.indexOf(sel.pile)].up[sel.index];
  else if (sel.pile === 'waste') card = board.waste.fan[board.waste.fan.length - 1];
  else if (sel.pile.startsWith('found-')) card = board.foundations[sel.pile.slice(6)];
  const more = sel.count > 1 ? ` and ${sel.count - 1} more card${sel.count > 2 ? 's' : ''}` : '';
  const where = sel.pile.startsWith('col') ? pileLabel(sel.pile) : `the ${pileLabel(sel.pile)}`;
  return `${verb} ${card ? cardFace(card).label : 'a card'}${more} from ${where}`;
}

// A move of the player's own in words, for screen readers (the live region): the card,
// where it went and what it turned up, from the boards before and after it (the
// server's) and the move's compact notation (docs/notation.md).
export function moveWords(move, before, after) {
  const say = (name) => (name ? cardFace(name).label : 'a card');
  if (move === 'd') {
    // the fan after a draw holds the cards it turned: one (Draw 1), up to three (Draw 3)
    const fan = ((after && after.waste && after.waste.fan) || []).map((c) => `the ${say(c)}`);
    if (fan.length < 2) return fan.length ? `Drew ${fan[0]}` : 'Drew';
    const top = fan.pop();
    return `Drew ${fan.length === 1 ? 'two' : 'three'} cards: ${fan.join(', ')} and ${top} on top`;
  }
  if (move === 'r') return 'Turned the waste back into the stock';
  if (move === 'u') return 'Undid the last move';
  if (move === 'resign') return 'Resigned';
  const m = /^([1-7wcdhs])>([1-7cdhsf])(?:x(\d+))?$/.exec(move || '');
  if (!m || !before) return '';
  const [, src, dst, n] = m;
  const count = Number(n || 1);
  let card = null;
  if (src === 'w') card = before.waste.fan[before.waste.fan.length - 1];
  else if (/[1-7]/.test(src)) {
    const up = before.columns[Number(src) - 1].up;
    card = up[up.length - count];
  } else card = before.foundations[src];
  const where = /[1-7]/.test(dst) ? `column ${dst}` : `the ${SUIT_WORDS[card ? card[1] : dst] || ''} foundation`;
  let out = `${say(card)}${count > 1 ? ` and ${count - 1} more card${count > 2 ? 's' : ''}` : ''} to ${where}`;
  if (/[1-7]/.test(src) && after) {
    const i = Number(src) - 1;
    if (after.columns[i].down < before.columns[i].down && after.columns[i].up.length) {
      out += `, turning up the ${say(after.columns[i].up[0])}`;
    }
  }
  return out;
}
