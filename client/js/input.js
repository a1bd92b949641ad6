// Input: pointer drag and drop (mouse and touch), click-to-select then click-a-target,
// double-click to send a card home, one tap (touch) to send a card or run where it goes
// best (the server chooses: docs/rules.md), and the keyboard. It turns gestures into
// intents ({from, to, count} or {action}) and hands them to the app; whether an intent is
// legal is for the server to say.

import { COLUMNS } from './cards.js';

const DRAG_START = 6; // px of movement before a press becomes a drag
// A double click or tap: two presses within this, timed by when each press happened (its
// event's timeStamp), not by when a busy page got to it.
const DOUBLE_MS = 400;
const SAME_SPOT = 24; // px: a second tap this close, this soon, is the first one's double

function isFoundation(pile) {
  return pile === 'foundation' || pile.startsWith('found-');
}

export class Input {
  // hooks: board() -> the board_view; selection() -> {pile,index,count}|null;
  // select(sel|null, putBack): putBack, a pick put back with no move (said so); lift({pile,index}|null): cards being dragged; intent(intent,
  // drag|null); action(name) for buttons' keys; enabled() -> whether play is possible;
  // settled() -> whether the board on screen is the one the moves sent lead to;
  // connected() -> whether moves can reach the server; notSent(n): n presses refused
  constructor(root, hooks) {
    this.root = root;
    this.hooks = hooks;
    this.press = null;
    this.drag = null;
    this.lastTap = null;
    this.held = []; // presses and keys waiting for the board to settle, in order (playHeld)
    this.lastBest = null; // {x, y, at} of the last one-tap move
    root.addEventListener('pointerdown', (e) => this.down(e));
    root.addEventListener('pointermove', (e) => this.move(e));
    root.addEventListener('pointerup', (e) => this.up(e));
    root.addEventListener('pointercancel', () => this.cancel());
    root.addEventListener('lostpointercapture', () => {
      if (this.press && !this.drag) this.press = null;
    });
    root.addEventListener('contextmenu', (e) => { if (this.drag) e.preventDefault(); });
    document.addEventListener('keydown', (e) => this.key(e));
  }

  // ---- what is under a point or an element -----------------------------------------
  targetOf(node) {
    const card = node.closest('.card.face[data-key]');
    if (card && this.root.contains(card)) {
      return { pile: card.dataset.pile, index: Number(card.dataset.index), node: card };
    }
    const pile = node.closest('[data-pile]');
    if (pile && this.root.contains(pile)) return { pile: pile.dataset.pile, index: null, node: pile };
    return null;
  }

  countFrom(pile, index) {
    if (!pile.startsWith('col')) return 1;
    const column = this.hooks.board().columns[COLUMNS.indexOf(pile)];
    return column.up.length - index;
  }

  isTop(pile, index) {
    const board = this.hooks.board();
    if (pile.startsWith('col')) return index === board.columns[COLUMNS.indexOf(pile)].up.length - 1;
    return true;
  }

  // ---- pointer ------------------------------------------------------------------------
  // The target under a point of the board as it is now: sliding cards are skipped
  // (they show where a card came from, not where it is).
  targetAt(x, y) {
    for (const node of document.elementsFromPoint(x, y)) {
      if (!this.root.contains(node) || node.closest('.sliding')) continue;
      return this.targetOf(node);
    }
    return null;
  }

  // A press or key while a move waits for its answer (or the answer is not drawn yet)
  // is held: its target is read once the board on screen is the one the move leads to.
  settled() {
    return this.hooks.settled ? this.hooks.settled() : true;
  }

  hold(play) {
    this.held.push(play);
    if (this.held.length === 1) this.playHeld();
  }

  // The held presses and keys, played one at a time, each once the board on screen is
  // the one the moves before it lead to. The connection lost meanwhile (a move with no
  // answer: the link is stalled) refuses them all, and says how many (notSent): none is
  // played on a board the server has not answered, none is lost unsaid.
  playHeld() {
    while (this.held.length && this.hooks.enabled() && this.hooks.connected() && this.settled()) {
      this.held.shift()();
    }
    if (!this.held.length) return;
    if (!this.hooks.enabled() || !this.hooks.connected()) { // (a game over: nothing to say)
      const n = this.held.length;
      this.held = [];
      if (!this.hooks.connected()) this.hooks.notSent(n);
      return;
    }
    requestAnimationFrame(() => this.playHeld());
  }

  down(e) {
    if (e.button !== 0 || !this.hooks.enabled()) return;
    if (!this.hooks.connected()) { // the board is marked not connected: refused, and said
      if (this.root.contains(e.target) && e.target.closest('[data-pile]')) this.hooks.notSent(1);
      return;
    }
    if (!this.settled()) {
      if (!this.root.contains(e.target) || !e.target.closest('[data-pile]')) return;
      this.press = { x: e.clientX, y: e.clientY, target: null, id: e.pointerId, type: e.pointerType, at: e.timeStamp };
      this.root.setPointerCapture(e.pointerId);
      e.preventDefault();
      return;
    }
    const target = this.targetAt(e.clientX, e.clientY) || this.targetOf(e.target);
    if (!target) return;
    this.press = { x: e.clientX, y: e.clientY, target, id: e.pointerId, type: e.pointerType, at: e.timeStamp };
    if (target.index !== null) {
      this.root.setPointerCapture(e.pointerId);
      e.preventDefault(); // no text selection, no native drag
    }
  }

  move(e) {
    const press = this.press;
    if (!press || e.pointerId !== press.id) return;
    if (!press.target) { // held: read it once the board is the move's
      if (!this.settled()) return;
      press.target = this.targetAt(press.x, press.y);
      if (!press.target) { this.press = null; return; }
    }
    if (!this.drag) {
      if (press.target.index === null) return;
      if (Math.hypot(e.clientX - press.x, e.clientY - press.y) < DRAG_START) return;
      this.startDrag(press);
    }
    const d = this.drag;
    d.dx = e.clientX - press.x;
    d.dy = e.clientY - press.y;
    d.ghost.style.transform = `translate(${d.dx}px, ${d.dy}px)`;
    this.hover(this.dropTarget(e.clientX, e.clientY));
  }

  up(e) {
    const press = this.press;
    if (!press || e.pointerId !== press.id) return;
    this.press = null;
    if (this.drag) {
      const d = this.drag;
      this.drag = null;
      this.hover(null);
      const to = this.dropTarget(e.clientX, e.clientY);
      if (!to || to === d.from) {
        this.snapBack(d, () => this.hooks.lift(null));
        return;
      }
      this.hooks.intent({ from: d.from, to: isFoundation(to) ? 'foundation' : to, count: d.count }, d);
      return;
    }
    if (!press.target) { // a held tap: once the board is the move's
      this.hold(() => {
        const target = this.targetAt(press.x, press.y);
        if (target) this.tap(target, press);
      });
      return;
    }
    this.tap(press.target, press);
  }

  cancel() {
    if (this.drag) this.snapBack(this.drag, () => this.hooks.lift(null));
    this.drag = null;
    this.press = null;
    this.hover(null);
  }

  startDrag(press) {
    const { pile, index } = press.target;
    this.hooks.select(null);
    const count = this.countFrom(pile, index);
    const cards = [...this.root.querySelectorAll(`.card.face[data-pile="${pile}"]`)]
      .filter((c) => Number(c.dataset.index) >= index);
    const first = cards[0].getBoundingClientRect();
    const ghost = document.createElement('div');
    ghost.className = 'drag-ghost';
    ghost.setAttribute('aria-hidden', 'true');
    ghost.style.left = `${first.left}px`;
    ghost.style.top = `${first.top}px`;
    ghost.style.setProperty('--cw', getComputedStyle(this.root).getPropertyValue('--cw'));
    ghost.style.setProperty('--ch', getComputedStyle(this.root).getPropertyValue('--ch'));
    for (const card of cards) {
      const r = card.getBoundingClientRect();
      const copy = card.cloneNode(true);
      copy.removeAttribute('tabindex');
      copy.removeAttribute('data-key');
      copy.classList.remove('selected');
      copy.style.left = `${r.left - first.left}px`;
      copy.style.top = `${r.top - first.top}px`;
      ghost.append(copy);
    }
    document.body.append(ghost);
    for (const card of cards) card.classList.add('lifted');
    this.hooks.lift({ pile, index }); // so a repaint keeps them lifted
    this.drag = { from: pile, index, count, ghost, cards, home: first, dx: 0, dy: 0 };
  }

  // The pile under the pointer, or else the one the dragged card overlaps most.
  dropTarget(x, y) {
    for (const node of document.elementsFromPoint(x, y)) {
      if (!this.root.contains(node)) continue;
      const pile = node.closest('[data-pile]');
      if (pile) return pile.dataset.pile;
    }
    if (!this.drag) return null;
    const g = this.drag.ghost.firstChild.getBoundingClientRect();
    let best = null;
    let bestArea = 0;
    for (const pile of this.root.querySelectorAll('.pile[data-pile]')) {
      const r = pile.getBoundingClientRect();
      const w = Math.min(r.right, g.right) - Math.max(r.left, g.left);
      const h = Math.min(Math.max(r.bottom, r.top + g.height), g.bottom) - Math.max(r.top, g.top);
      const area = w > 0 && h > 0 ? w * h : 0;
      if (area > bestArea) {
        bestArea = area;
        best = pile.dataset.pile;
      }
    }
    return best;
  }

  hover(pile) {
    for (const node of this.root.querySelectorAll('.drop-hover')) node.classList.remove('drop-hover');
    if (pile && pile !== 'stock') {
      const node = this.root.querySelector(`.pile[data-pile="${pile}"]`);
      if (node) node.classList.add('drop-hover');
    }
  }

  // Animate a drag's cards back where they came from, then show the originals again.
  snapBack(drag, onDone) {
    const ghost = drag.ghost;
    let finished = false;
    const done = () => {
      if (finished) return;
      finished = true;
      ghost.remove();
      for (const card of drag.cards) card.classList.remove('lifted');
      if (onDone) onDone();
    };
    if (!ghost.isConnected) { done(); return; }
    ghost.classList.add('snapping');
    ghost.style.transform = 'translate(0px, 0px)';
    ghost.addEventListener('transitionend', done, { once: true });
    setTimeout(done, 400);
  }

  // The move a drag asked for was accepted: the new board replaces the ghost.
  land(drag) {
    drag.ghost.remove();
  }

  // ---- clicks, taps and their keyboard twin ---------------------------------------------
  tap(target, press = null) {
    if (press && press.type === 'touch' && target.index !== null && !this.hooks.selection()) {
      // a foundation's card comes back down only by a drag, never by a stray tap
      if (!isFoundation(target.pile)) this.touchTap(target, press);
      return;
    }
    const now = press ? press.at : performance.now();
    const key = `${target.pile}:${target.index}`;
    const last = this.lastTap;
    this.lastTap = { key, at: now };
    if (last && last.key === key && now - last.at < DOUBLE_MS && target.index !== null) {
      this.lastTap = null;
      this.home(target.pile, target.index);
      return;
    }
    this.activate(target);
  }

  // One tap on a touch screen: the card (and the run on it) to where it goes best. A
  // second tap on the same spot right after it is a double tap's second half (a habit
  // from double-tap-to-foundation), not a tap on the card the first one uncovered.
  touchTap(target, press) {
    const last = this.lastBest;
    if (last && press.at - last.at < DOUBLE_MS
        && Math.hypot(press.x - last.x, press.y - last.y) < SAME_SPOT) {
      this.lastBest = null;
      return;
    }
    this.lastBest = { x: press.x, y: press.y, at: press.at };
    this.lastTap = null;
    this.hooks.select(null);
    const { pile, index } = target;
    this.hooks.intent({ from: pile, to: 'best', count: this.countFrom(pile, index) }, null);
  }

  home(pile, index) {
    this.hooks.select(null);
    if (isFoundation(pile) || !this.isTop(pile, index)) return;
    this.hooks.intent({ from: pile, to: 'foundation', count: 1 }, null);
  }

  activate(target) {
    const { pile, index } = target;
    if (pile === 'stock') {
      this.hooks.select(null);
      this.stock();
      return;
    }
    const sel = this.hooks.selection();
    if (sel) {
      if (sel.pile === pile) {
        if (index !== null && index !== sel.index) {
          this.hooks.select({ pile, index, count: this.countFrom(pile, index) });
        } else {
          this.hooks.select(null, true);
        }
        return;
      }
      this.hooks.select(null);
      this.hooks.intent({ from: sel.pile, to: isFoundation(pile) ? 'foundation' : pile, count: sel.count }, null);
      return;
    }
    if (index !== null) this.hooks.select({ pile, index, count: this.countFrom(pile, index) });
  }

  stock() {
    const board = this.hooks.board();
    this.hooks.intent({ action: board.stock > 0 ? 'draw' : 'recycle' }, null);
  }

  // ---- keyboard ----------------------------------------------------------------------
  key(e) {
    if (!this.hooks.enabled() || e.ctrlKey || e.metaKey || e.altKey) return;
    const t = e.target;
    if (t && (t.tagName === 'INPUT' || t.tagName === 'SELECT' || t.tagName === 'TEXTAREA')) return;
    if (t && t.tagName === 'BUTTON' && !this.root.contains(t) && (e.key === 'Enter' || e.key === ' ')) return;
    const k = e.key;
    if (k === 'Escape' && document.querySelector(':popover-open')) return; // it closes that
    if (k === 'Escape') {
      this.hooks.select(null, true);
    } else if (k.startsWith('Arrow')) {
      this.arrow(k, t);
    } else {
      const play = this.keyPlay(k, this.root.contains(t) ? this.targetOf(t) : null);
      if (!play) return;
      // like a held press: each key reads the board its earlier moves lead to
      this.hold(play);
    }
    e.preventDefault();
  }

  // What a key plays (read when it runs, on the board as it is then), or null.
  keyPlay(k, focused) {
    if ((k === 'Enter' || k === ' ') && focused) return () => this.activate(focused);
    if (k === 'd' || k === 'D') return () => this.stock();
    if (k >= '1' && k <= '7') return () => this.pileKey(COLUMNS[Number(k) - 1]);
    if (k === 'w' || k === 'W') return () => this.pileKey('waste');
    if (k === 'a' || k === 'A') return () => this.hooks.action('autocomplete');
    if (k === 'u' || k === 'U') return () => this.hooks.action('undo');
    if (k === 'f' || k === 'F') {
      if (!this.hooks.selection() && !(focused && focused.index !== null)) return null;
      return () => {
        const sel = this.hooks.selection();
        if (sel) {
          this.hooks.select(null);
          this.hooks.intent({ from: sel.pile, to: 'foundation', count: sel.count }, null);
        } else if (focused && focused.index !== null) {
          this.home(focused.pile, focused.index);
        }
      };
    }
    return null;
  }

  // A pile's key: select its top card (again: one more card of the run), or, with a
  // selection elsewhere, move the selection there.
  pileKey(pile) {
    const board = this.hooks.board();
    const sel = this.hooks.selection();
    if (sel && sel.pile !== pile && pile !== 'waste') { // (nothing moves to the waste)
      this.hooks.select(null);
      this.hooks.intent({ from: sel.pile, to: pile, count: sel.count }, null);
      return;
    }
    if (pile === 'waste') { // picked again: put down; a pick elsewhere gives way to it
      if (sel && sel.pile === 'waste') this.hooks.select(null, true);
      else if (board.waste.count) this.hooks.select({ pile, index: board.waste.fan.length - 1, count: 1 });
      return;
    }
    const ups = board.columns[COLUMNS.indexOf(pile)].up.length;
    if (!ups) return;
    let index = ups - 1;
    if (sel) index = sel.index > 0 ? sel.index - 1 : ups - 1;
    this.hooks.select({ pile, index, count: ups - index });
    this.focus(`${pile}:${index}`);
  }

  focus(key) {
    const node = this.root.querySelector(`[data-key="${CSS.escape(key)}"]`);
    if (node) node.focus();
  }

  // Arrow keys move the focus: left/right between piles, up/down along a column.
  arrow(k, t) {
    const top = ['stock', 'waste', 'found-c', 'found-d', 'found-h', 'found-s'];
    const here = this.root.contains(t) ? this.targetOf(t) : null;
    const pileTarget = (pile, wantIndex) => {
      const nodes = [...this.root.querySelectorAll(`.pile[data-pile="${pile}"] [data-key], .pile[data-pile="${pile}"][data-key]`)];
      if (!nodes.length) return null;
      if (wantIndex == null) return nodes[nodes.length - 1];
      return nodes.find((n) => Number(n.dataset.index) === wantIndex) || nodes[nodes.length - 1];
    };
    let next = null;
    if (!here) {
      next = pileTarget('col1');
    } else if (COLUMNS.includes(here.pile)) {
      const c = COLUMNS.indexOf(here.pile);
      if (k === 'ArrowLeft' || k === 'ArrowRight') {
        const step = k === 'ArrowLeft' ? -1 : 1;
        next = pileTarget(COLUMNS[(c + step + 7) % 7]);
      } else if (k === 'ArrowUp') {
        if (here.index > 0) next = pileTarget(here.pile, here.index - 1);
        else next = pileTarget(top[Math.min(c < 3 ? Math.min(c, 1) : c - 1, 5)]) || pileTarget('stock');
      } else if (k === 'ArrowDown') {
        next = pileTarget(here.pile, here.index == null ? null : here.index + 1);
      }
    } else {
      const i = top.indexOf(here.pile);
      if (k === 'ArrowLeft' || k === 'ArrowRight') {
        const step = k === 'ArrowLeft' ? -1 : 1;
        next = pileTarget(top[(i + step + top.length) % top.length]);
      } else if (k === 'ArrowDown') {
        next = pileTarget(COLUMNS[i < 2 ? i : i + 1]);
      }
    }
    if (!next && here && here.pile === 'stock') next = this.root.querySelector('[data-pile="stock"]');
    if (next) next.focus();
  }
}
