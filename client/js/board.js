// One board on screen, drawn from a board_view the server sent (engine/views.py):
// {columns: [{down, up: [names]}], stock, waste: {count, fan}, foundations: {c,d,h,s}},
// or an outline of one (spectators of rated play while the race runs, docs/protocol.md):
// {outline: true, columns: [{down}], stock, waste: {count}, foundation}, drawn as backs
// and counts, no face-up card.
// It knows how to lay cards out at any size; it knows nothing of the rules.

import {
  COLUMNS, FOUNDATIONS, SUITS, SUIT_SYMBOLS, cardFace, pileLabel, pileName,
} from './cards.js';

const CARD_RATIO = 1.4;
const REDUCED_MOTION = window.matchMedia('(prefers-reduced-motion: reduce)');

function el(tag, cls, attrs) {
  const node = document.createElement(tag);
  if (cls) node.className = cls;
  if (attrs) for (const [k, v] of Object.entries(attrs)) node.setAttribute(k, v);
  return node;
}

export function cardElement(name, extra = {}) {
  const face = cardFace(name);
  const node = el('div', `card face ${face.red ? 'red' : 'black'} suit-${face.suit}`);
  node.dataset.card = name;
  node.setAttribute('aria-label', face.label);
  const corner = el('span', 'corner', { 'aria-hidden': 'true' });
  corner.append(el('span', 'rank'), el('span', 'suit'));
  corner.firstChild.textContent = face.rank;
  corner.lastChild.textContent = face.symbol;
  const pip = el('span', 'pip', { 'aria-hidden': 'true' });
  pip.textContent = face.symbol;
  const foot = el('span', 'corner foot', { 'aria-hidden': 'true' });
  foot.append(el('span', 'rank'), el('span', 'suit'));
  foot.firstChild.textContent = face.rank;
  foot.lastChild.textContent = face.symbol;
  node.append(corner, pip, foot);
  Object.assign(node.dataset, extra);
  return node;
}

// a face-up card of an outline: its place and no more (the server sent no card)
function blankElement() {
  return el('div', 'card blank', { 'aria-hidden': 'true' });
}

function countBadge(n) {
  const badge = el('span', 'count', { 'aria-hidden': 'true' });
  badge.textContent = n;
  return badge;
}

// a column's face-up count: its cards' (an outline's columns have none to show)
export function upCount(column) {
  return column.up ? column.up.length : 0;
}

// The stock's top card, face down (stacked when more lie under it).
function stockBack(count) {
  const back = backElement();
  back.classList.add('stock-card');
  if (count > 1) back.classList.add('stacked');
  return back;
}

// A face-down card: hidden from assistive technology one by one (column 7 was read as
// "face-down card" six times); its pile's name counts them.
function backElement() {
  return el('div', 'card back', { 'aria-hidden': 'true' });
}

const plural = (n, what) => `${n} ${what}${n === 1 ? '' : 's'}`;

// The waste as a whole: its count and the card on top ("empty", "Queen of hearts", "5
// cards, Queen of hearts on top").
function wasteWords(count, fan) {
  if (!count) return 'empty';
  const top = fan.length ? cardFace(fan[fan.length - 1]).label : null;
  if (!top) return plural(count, 'card');
  return count === 1 ? top : `${plural(count, 'card')}, ${top} on top`;
}

export class BoardView {
  // options: interactive (cards focusable, input attaches), maxCard (px), fitHeight
  // (a function giving the height the board may use, to squeeze long columns)
  constructor(root, options = {}) {
    this.root = root;
    this.options = options;
    this.board = null;
    this.ui = {};
    root.classList.add('board');
    if (options.interactive) root.classList.add('interactive');
    root.replaceChildren();
    const top = el('div', 'row top');
    this.piles = {};
    const stock = el('div', 'pile slot stock', { 'data-pile': 'stock' });
    const waste = el('div', 'pile slot waste', { 'data-pile': 'waste' });
    const gap = el('div', 'slot spacer');
    top.append(stock, waste, gap);
    this.piles.stock = stock;
    this.piles.waste = waste;
    for (const s of SUITS) {
      const f = el('div', 'pile slot found', { 'data-pile': `found-${s}` });
      const mark = el('span', 'mark', { 'aria-hidden': 'true' });
      mark.textContent = SUIT_SYMBOLS[s];
      f.dataset.mark = s;
      top.append(f);
      this.piles[`found-${s}`] = f;
    }
    const tableau = el('div', 'row tableau');
    for (const c of COLUMNS) {
      const col = el('div', 'pile col', { 'data-pile': c });
      tableau.append(col);
      this.piles[c] = col;
    }
    root.append(top, tableau);
    this.tableau = tableau;
    this.observer = new ResizeObserver(() => this.layout());
    this.observer.observe(root);
  }

  destroy() {
    this.observer.disconnect();
  }

  update(board, ui = {}) {
    const same = board === this.board && Object.keys({ ...ui, ...this.ui })
      .every((k) => ui[k] === this.ui[k]);
    if (same) return;
    const grown = this.options.markLast && this.board && board ? grownPiles(this.board, board) : null;
    const moved = board !== this.board;
    this.board = board;
    this.ui = ui;
    this.paint(moved);
    if (grown) { // the last move, as spectators see it: where cards arrived
      for (const [name, pile] of Object.entries(this.piles)) {
        pile.classList.toggle('last-move', grown.has(name));
      }
    }
  }

  focusKey() {
    const active = document.activeElement;
    if (!active || !this.root.contains(active)) return null;
    return active.dataset.key || null;
  }

  // Where each face-up card is now, by name: the start of a move's animation. These
  // cards are about to be replaced: a selected one is measured unselected, without its
  // lift (css: .selected), which is not a place.
  positions() {
    const out = new Map();
    if (!this.options.animate || REDUCED_MOTION.matches || !this.root.isConnected) return out;
    for (const card of this.root.querySelectorAll('.card.face.selected')) {
      card.classList.remove('selected');
    }
    for (const card of this.root.querySelectorAll('.card.face:not(.lifted)')) {
      out.set(card.dataset.card, card.getBoundingClientRect());
    }
    return out;
  }

  // Where the painted cards are, by node, a selected one without its lift.
  places() {
    const selected = [...this.root.querySelectorAll('.card.face.selected')];
    for (const card of selected) card.classList.remove('selected');
    const out = new Map();
    for (const card of this.root.querySelectorAll('.card.face')) {
      out.set(card, card.getBoundingClientRect());
    }
    for (const card of selected) card.classList.add('selected');
    return out;
  }

  // Slide cards that changed place from where they were (FLIP); skipped for reduced motion.
  // Only a new board moves cards: a selection's lift is no move (a sliding card lets
  // presses through, so a slide there lost a double click's second click).
  animate(before) {
    if (!before.size) return;
    for (const [card, now] of this.places()) {
      const was = before.get(card.dataset.card);
      if (!was || card.classList.contains('lifted')) continue;
      const dx = was.left - now.left;
      const dy = was.top - now.top;
      if (Math.abs(dx) < 1 && Math.abs(dy) < 1) continue;
      // a sliding card is only a picture of the move: input goes through it to the
      // board as it is now (css: .sliding has no pointer events)
      card.classList.add('sliding');
      const slide = card.animate([{ transform: `translate(${dx}px, ${dy}px)`, zIndex: 50 },
        { transform: 'translate(0, 0)', zIndex: 50 }], { duration: 160, easing: 'ease-out' });
      const done = () => card.classList.remove('sliding');
      slide.finished.then(done, done);
    }
  }

  // moved: a new board (its cards slide from where they were), not only a new selection
  // or a new pending mark
  paint(moved) {
    const board = this.board;
    const keep = this.focusKey();
    const before = moved ? this.positions() : new Map();
    const interactive = Boolean(this.options.interactive);
    const tab = interactive ? '0' : null;
    const sel = this.ui.selection;
    const hidden = this.ui.inflight; // {pile, index}: cards lifted by a drag in flight
    this.root.classList.toggle('empty-board', !board);
    this.root.classList.toggle('outline', Boolean(board && board.outline));
    for (const pile of Object.values(this.piles)) {
      pile.replaceChildren();
      pile.classList.remove('hint-from', 'hint-to');
      if (pile !== this.piles.stock) {
        delete pile.dataset.key;
        pile.removeAttribute('tabindex');
        // a group, so that assistive technology reads the pile's label (its counts):
        // a label on a plain div is not exposed; an empty pile to move to is a button
        pile.setAttribute('role', 'group');
      }
    }
    if (!board) return;
    if (board.outline) {
      this.paintOutline(board);
      this.layout();
      return;
    }

    // stock
    const stock = this.piles.stock;
    // (the board's passes_left, the server's: a ✕ when the waste cannot go back)
    const canRecycle = board.waste.count > 0 && board.passes_left !== 0 && board.passes_left !== 1;
    if (board.stock > 0) {
      stock.append(stockBack(board.stock));
    } else {
      const mark = el('span', 'mark recycle', { 'aria-hidden': 'true' });
      mark.textContent = canRecycle ? '\u21bb' : '\u2715';
      stock.append(mark);
    }
    stock.append(countBadge(board.stock)); // (said in the stock's name)
    // the pile as a whole, and what a press of it does
    const stockAction = board.stock > 0 ? ', draw' : canRecycle ? ', turn the waste over' : '';
    stock.setAttribute('aria-label',
      `Stock: ${board.stock ? plural(board.stock, 'card') : 'empty'}${stockAction}`);
    stock.dataset.key = 'stock';
    stock.setAttribute('role', 'button');
    if (tab) stock.tabIndex = 0;

    // waste: the fan, top card last
    const waste = this.piles.waste;
    const fan = board.waste.fan || [];
    waste.dataset.count = board.waste.count;
    waste.setAttribute('aria-label', `Waste: ${wasteWords(board.waste.count, fan)}`);
    fan.forEach((name, i) => {
      const top = i === fan.length - 1;
      const card = cardElement(name, { pile: 'waste', index: String(i) });
      card.dataset.fan = String(i);
      if (top && board.waste.count > fan.length) card.classList.add('stacked');
      if (top) this.playable(card, 'waste', i, tab);
      if (top && sel && sel.pile === 'waste') card.classList.add('selected');
      if (top && hidden && hidden.pile === 'waste') card.classList.add('lifted');
      waste.append(card);
    });
    if (!fan.length) this.emptyTarget(waste, 'waste', tab);

    // foundations
    for (const s of SUITS) {
      const pile = this.piles[`found-${s}`];
      const mark = el('span', 'mark', { 'aria-hidden': 'true' });
      mark.textContent = SUIT_SYMBOLS[s];
      pile.append(mark);
      const top = board.foundations[s];
      pile.setAttribute('aria-label', `${pileName(`found-${s}`)}: ${top ? cardFace(top).label : 'empty'}`);
      if (top) {
        const card = cardElement(top, { pile: `found-${s}`, index: '0' });
        if (top[0] !== 'A') card.classList.add('stacked');
        this.playable(card, `found-${s}`, 0, tab);
        if (sel && sel.pile === `found-${s}`) card.classList.add('selected');
        if (hidden && hidden.pile === `found-${s}`) card.classList.add('lifted');
        pile.append(card);
      } else {
        this.emptyTarget(pile, `found-${s}`, tab);
      }
    }

    // columns
    board.columns.forEach((column, c) => {
      const name = COLUMNS[c];
      const pile = this.piles[name];
      // the column as a whole: how many face down, then its face-up cards by name
      const words = [...(column.down ? [`${column.down} face down`] : []),
        ...column.up.map((card) => cardFace(card).label)];
      pile.setAttribute('aria-label', `${pileName(name)}: ${words.length ? words.join(', ') : 'empty'}`);
      for (let i = 0; i < column.down; i += 1) pile.append(backElement());
      column.up.forEach((cardName, i) => {
        const card = cardElement(cardName, { pile: name, index: String(i) });
        this.playable(card, name, i, tab);
        if (sel && sel.pile === name && i >= sel.index) card.classList.add('selected');
        if (hidden && hidden.pile === name && i >= hidden.index) card.classList.add('lifted');
        pile.append(card);
      });
      if (!column.down && !column.up.length) this.emptyTarget(pile, name, tab);
    });

    // the picked card: a pressed button for assistive technology (the gold is for the eye)
    if (sel && interactive) {
      const picked = this.root.querySelector(`[data-key="${CSS.escape(`${sel.pile}:${sel.index}`)}"]`);
      if (picked) picked.setAttribute('aria-pressed', 'true');
    }
    this.markPending(board);
    this.markHint(board);
    this.layout();
    this.animate(before);
    if (keep) this.refocus(keep);
  }

  // An outline: the stock and the face-down cards as backs, the waste and the foundations
  // as blank cards, each pile with its count; no card is named, no face-up card drawn.
  paintOutline(board) {
    const stock = this.piles.stock;
    if (board.stock > 0) stock.append(stockBack(board.stock));
    stock.append(countBadge(board.stock));
    stock.setAttribute('aria-label', `Stock: ${plural(board.stock, 'card')}`);
    stock.removeAttribute('role');
    const waste = this.piles.waste;
    waste.dataset.count = board.waste.count;
    waste.setAttribute('aria-label', `Waste: ${plural(board.waste.count, 'card')}`);
    if (board.waste.count > 0) {
      const blank = blankElement();
      if (board.waste.count > 1) blank.classList.add('stacked');
      waste.append(blank, countBadge(board.waste.count));
    }
    // the foundations as one count: which cards are home is shown at the end
    SUITS.forEach((s, i) => {
      const pile = this.piles[`found-${s}`];
      if (i > 0) {
        pile.setAttribute('aria-hidden', 'true');
        return;
      }
      pile.removeAttribute('aria-hidden');
      pile.setAttribute('aria-label', `Foundations: ${plural(board.foundation, 'card')} home`);
      if (board.foundation > 0) {
        const blank = blankElement();
        blank.classList.add('home');
        if (board.foundation > 1) blank.classList.add('stacked');
        pile.append(blank);
      }
      pile.append(countBadge(`${board.foundation}/52`));
    });
    board.columns.forEach((column, c) => {
      const name = COLUMNS[c];
      const pile = this.piles[name];
      pile.setAttribute('aria-label', `${pileName(name)}: ${column.down} face down`);
      for (let i = 0; i < column.down; i += 1) pile.append(backElement());
    });
  }

  // Moves sent (or queued) and not yet answered, as the app says (ui.pending, a JSON
  // list of intents): the cards they move are marked pending until the server answers.
  markPending(board) {
    const pending = this.ui.pending ? JSON.parse(this.ui.pending) : [];
    this.root.classList.toggle('has-pending', pending.length > 0);
    this.piles.stock.classList.remove('pending');
    for (const what of pending) {
      if (what.action === 'draw' || what.action === 'recycle') {
        this.piles.stock.classList.add('pending');
        continue;
      }
      if (!what.from) continue;
      const pile = this.piles[what.from];
      if (!pile) continue;
      const cards = [...pile.querySelectorAll('.card.face')];
      const count = what.from.startsWith('col') ? Math.max(1, what.count || 1) : 1;
      for (const card of cards.slice(-count)) card.classList.add('pending');
    }
  }

  // The solver's hint, as the app says (ui.hint, the server's `hint` as JSON): the
  // card(s) it moves marked hint-from, the pile they go to hint-to; a draw or a turn of
  // the waste marks the stock. Only what the server named: no rule is looked up here.
  markHint(board) {
    const hint = this.ui.hint ? JSON.parse(this.ui.hint) : null;
    this.root.classList.toggle('has-hint', Boolean(hint));
    if (!hint) return;
    if (hint.action) {
      this.piles.stock.classList.add('hint-from');
      return;
    }
    const from = this.piles[hint.from];
    if (!from) return;
    const cards = [...from.querySelectorAll('.card.face')];
    const moved = cards.slice(-Math.max(1, hint.count || 1));
    for (const card of moved) card.classList.add('hint-from');
    // "foundation" (no suit named): the foundation of the moved card's suit
    const top = moved.length ? moved[0].dataset.card : null;
    const to = hint.to === 'foundation' && top ? `found-${top[1]}` : hint.to;
    if (this.piles[to]) this.piles[to].classList.add('hint-to');
  }

  playable(card, pile, index, tab) {
    card.dataset.key = `${pile}:${index}`;
    if (tab) {
      card.tabIndex = 0;
      card.setAttribute('role', 'button');
    } else {
      card.setAttribute('role', 'img');
    }
    const label = card.getAttribute('aria-label');
    card.setAttribute('aria-label', `${label}, ${pileLabel(pile)}`);
  }

  emptyTarget(pile, name, tab) {
    pile.dataset.key = `${name}:empty`;
    if (tab) {
      pile.tabIndex = 0;
      pile.setAttribute('role', 'button');
    }
  }

  refocus(key) {
    const [pile] = key.split(':');
    const exact = this.root.querySelector(`[data-key="${CSS.escape(key)}"]`);
    if (exact) { exact.focus({ preventScroll: true }); return; }
    const p = this.piles[pile];
    if (!p) return;
    const cards = p.querySelectorAll('[data-key]');
    const target = cards.length ? cards[cards.length - 1] : (p.dataset.key ? p : null);
    if (target) target.focus({ preventScroll: true });
  }

  layout() {
    const width = this.root.clientWidth;
    if (!width) return;
    const narrow = width < 560;
    const gap = narrow ? Math.max(3, Math.round(width * 0.011)) : Math.round(Math.min(16, width * 0.016));
    const cw = Math.max(20, Math.min(this.options.maxCard || 120, Math.floor((width - 6 * gap) / 7)));
    const ch = Math.round(cw * CARD_RATIO);
    const style = this.root.style;
    style.setProperty('--cw', `${cw}px`);
    style.setProperty('--ch', `${ch}px`);
    style.setProperty('--gap', `${gap}px`);
    if (!this.board) return;

    // waste fan, left to right
    const fanStep = Math.round(cw * 0.38);
    this.piles.waste.querySelectorAll('.card').forEach((card, i) => {
      card.style.left = `${i * fanStep}px`;
      card.style.top = '0px';
    });

    // columns: face-down cards close, face-up cards far enough to read their corner,
    // squeezed when a long column would not fit the height the board may use
    let downStep = Math.max(4, Math.round(ch * 0.1));
    let upStep = Math.max(14, Math.round(ch * 0.27));
    const minUp = Math.max(12, Math.round(ch * 0.17));
    const room = this.options.fitHeight ? this.options.fitHeight(this.tableau) : Infinity;
    if (narrow && Number.isFinite(room)) {
      // a phone upright: the cards are as wide as 7 columns allow, so the strips grow
      // into the height instead (up to 1.8x), the tallest column filling what it may use
      const need = Math.max(...this.board.columns.map((c) => c.down * downStep
        + Math.max(0, upCount(c) - 1) * upStep + ch));
      const grow = Math.min(1.8, Math.max(1, room / need));
      downStep = Math.round(downStep * grow);
      upStep = Math.round(upStep * grow);
    }
    let tallest = ch;
    this.board.columns.forEach((column, c) => {
      const pile = this.piles[COLUMNS[c]];
      const ups = upCount(column);
      let step = upStep;
      if (ups > 1 && Number.isFinite(room)) {
        const fit = Math.floor((room - ch - column.down * downStep) / (ups - 1));
        step = Math.max(minUp, Math.min(upStep, fit));
      }
      let y = 0;
      const cards = pile.querySelectorAll('.card');
      cards.forEach((card, i) => {
        card.style.top = `${y}px`;
        card.style.left = '0px';
        y += i < column.down ? downStep : step;
      });
      const height = cards.length ? y - (cards.length <= column.down ? downStep : step) + ch : ch;
      tallest = Math.max(tallest, height);
    });
    // a phone upright: the tableau reaches the bottom of the screen, so each column is a
    // lane to drop on or tap all the way down, as in phone Klondike apps
    if (narrow && Number.isFinite(room)) tallest = Math.max(tallest, Math.floor(room));
    this.tableau.style.minHeight = `${tallest}px`;
    for (const c of COLUMNS) this.piles[c].style.height = `${tallest}px`;
  }

  // Where each card of a pile is on screen (for snapping a refused drag back).
  rectOf(pile, index) {
    const p = this.piles[pile];
    if (!p) return null;
    const card = p.querySelector(`[data-index="${index}"]`);
    return card ? card.getBoundingClientRect() : p.getBoundingClientRect();
  }
}

// The piles a board change put cards on (a column or foundation that grew, the waste
// after a draw): no rules, only the two boards compared.
export function grownPiles(before, after) {
  const out = new Set();
  after.columns.forEach((c, i) => {
    const was = before.columns[i];
    if (c.down + upCount(c) > was.down + upCount(was)) out.add(COLUMNS[i]);
  });
  if (after.foundations && before.foundations) {
    for (const [suit, top] of Object.entries(after.foundations)) {
      if (top && top !== before.foundations[suit]) out.add(`found-${suit}`);
    }
  } else if (after.foundation > before.foundation) {
    out.add('found-c'); // an outline's foundations: one count, in the first place
  }
  if (after.waste.count > before.waste.count) out.add('waste');
  return out;
}
