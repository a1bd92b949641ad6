// The race screen: the player's moves, sent to the server one at a time (a queue; the
// next goes when the previous is answered), each with the next sequence number; the
// board changes only when the server answers. Also the refusal notice, auto-complete,
// the solver's line shown move by move, and the race's buttons.

import { moveWords, pickWords, reasonText } from './cards.js';
import { Input } from './input.js';
import { chime, sound } from './prefs.js';
import { describeHint } from './render.js';
import { $, confirmed, net, renderer, state, storage, store, toast } from './shared.js';
import {
  attemptOf, finishOffered, gameOver, hintOffered, roomPhase, sprintOffered, viewOf,
} from './state.js';

let pumpTimer = null; // the next move waits for the client's own send rate
let refusalTimer = null; // the refusal notice goes after 3 s
let auto = false; // auto-complete is playing
let autoTimer = null; // its next step
let playTimer = null; // the solver's line: the next move shown
let hintTimer = null; // the hint goes after HINT_MS, or at once with the next move
const HINT_MS = 10000;

// A line for screen readers: the live region (polite), each pick, move and hint said.
export function announce(words) {
  $('#announce').textContent = words;
}

// Play is possible only on the race screen itself: not while a page (a replay, a profile,
// a challenge) is shown over it, whose keys are its own.
export function canPlay() {
  return state.role === 'player' && viewOf(state) === 'race' && roomPhase(state) === 'racing'
    && Boolean(state.board) && !gameOver(state) && !state.finishing && !state.playback
    && !state.replay && !state.profile && !state.daily;
}

export function intent(what, drag) {
  if (!canPlay() || !net.open) {
    if (drag) settleDrag(drag, false);
    if (!net.open) notSent(1);
    return;
  }
  store.update((s) => { s.queue.push({ what, drag }); });
  pump();
}

// Input while the connection is being restored is refused, and said: nothing is played
// on a board the server cannot answer (the moves already sent are sent again after the
// resume).
function notSent(n) {
  toast(`Not connected: ${n === 1 ? 'the move was' : `${n} moves were`} not sent`, 'error');
}

function pump() {
  if (state.inflight || !state.queue.length) return;
  const wait = net.wait(); // within the client's own rate (net.js)
  if (wait > 0) {
    clearTimeout(pumpTimer);
    pumpTimer = setTimeout(pump, wait);
    return;
  }
  const { what, drag } = state.queue[0];
  const seq = state.seq + 1;
  const msg = what.resign ? { type: 'resign', seq }
    : what.action ? { type: 'move', seq, action: what.action }
      : { type: 'move', seq, from: what.from, to: what.to, count: what.count };
  if (!net.send(msg)) {
    if (drag) settleDrag(drag, false);
    store.update((s) => { s.queue = []; });
    return;
  }
  net.probe(); // a move that goes nowhere is noticed from the missing answer
  store.update((s) => {
    s.queue.shift();
    s.inflight = { seq, what, drag, at: Date.now() };
  });
}

export function settleDrag(drag, accepted) {
  if (accepted) {
    input.land(drag);
    store.update((s) => { s.inflightDrag = null; });
  } else {
    input.snapBack(drag, () => store.update((s) => { s.inflightDrag = null; }));
  }
}

// A move of the player's own taken (its board is the state's now): said in the live
// region and heard (a draw or a card put down; not the solver's playback), the win
// chimed, the next move sent.
export function acked(msg, inflight, boardBefore) {
  if (inflight && inflight.drag) settleDrag(inflight.drag, true);
  hideRefusal();
  if (!msg.duplicate && !state.finishing && !state.playback) {
    announce(moveWords(msg.move, boardBefore, state.board));
    if (msg.move !== 'resign') sound(msg.move === 'd' || msg.move === 'r' ? 'draw' : 'move');
  }
  if (state.winMoment && !(boardBefore && boardBefore.status === 'won') && state.board.status === 'won') chime();
  pump();
  autoNext();
}

// A move refused: it snaps back, its reason is shown (and heard), and the moves queued
// behind it are not played (and said so).
export function refused(msg, inflight, unanswered) {
  if (inflight && inflight.drag) settleDrag(inflight.drag, false);
  showRefusal(msg);
  sound('refusal');
  if (unanswered.moves.length > 1) {
    const n = unanswered.moves.length - 1;
    toast(`${n} move${n === 1 ? '' : 's'} after it ${n === 1 ? 'was' : 'were'} not played`, 'error');
  }
  stopAuto();
  if (msg.reason === 'bad_seq' || msg.reason === 'not_your_game') resume();
}

function resume() {
  const session = storage.get('kr.session');
  if (session && session.token) net.send({ type: 'resume', token: session.token });
}

// After a reconnection's snapshot (welcome, resumed, resync): the moves that were still
// waiting for an answer. A move whose number the server has stored (seq <= the
// snapshot's seq) was played; the others are sent again, in order, numbered from the
// snapshot's seq (the server answers a number it already stored as a duplicate, so
// nothing is played twice). When play cannot go on, the player is told they were not.
export function resend(before) {
  if (!before.moves.length) return;
  const same = state.role === 'player' && state.room && state.room.code === before.room
    && state.player === before.player;
  const left = before.moves.filter((m) => !(m.seq && m.seq <= state.seq));
  if (!left.length) return;
  if (!same || !canPlay()) {
    const n = left.length;
    toast(`${n} move${n === 1 ? ' was' : 's were'} not played: the connection was lost before the server had ${n === 1 ? 'it' : 'them'}`, 'error');
    return;
  }
  store.update((s) => { s.queue = left.map((m) => ({ what: m.what, drag: null })); });
  pump();
}

function showRefusal(msg) {
  const box = $('#refusal');
  box.textContent = reasonText(msg.reason, msg.message, attemptOf(state.room) ? 'attempt' : 'race');
  box.dataset.reason = msg.reason;
  box.hidden = false;
  clearTimeout(refusalTimer);
  refusalTimer = setTimeout(hideRefusal, 3000);
}
// the notice goes after 3 s, or at once when the server takes the next move
function hideRefusal() {
  clearTimeout(refusalTimer);
  $('#refusal').hidden = true;
}

// The server's hint: said in the live region, shown on the cards (render.js) until the
// next move is taken (the ack clears it: state.js) or HINT_MS have passed.
export function hinted() {
  const shown = state.hint;
  announce(describeHint(shown, state.board));
  clearTimeout(hintTimer);
  hintTimer = setTimeout(() => {
    if (state.hint === shown) store.update((s) => { s.hint = null; });
  }, HINT_MS);
}

// Auto-complete: offered only when the server's board says so (`autocomplete`); each
// step plays the board's `autocomplete_next`, the server's own choice, as an ordinary
// move, until the server's board offers none (or refuses one).
function autoMove() {
  const board = state.board;
  return canPlay() && board.autocomplete && board.autocomplete_next ? board.autocomplete_next : null;
}
function startAuto() {
  if (!state.board || !state.board.autocomplete || auto) return;
  auto = true;
  autoNext();
}
function stopAuto() { auto = false; }
function autoNext() {
  if (!auto || autoTimer) return;
  if (!autoMove()) {
    auto = false;
    return;
  }
  if (state.inflight || state.queue.length) return; // the next ack calls again
  autoTimer = setTimeout(() => {
    autoTimer = null;
    if (!auto || state.inflight || state.queue.length) return;
    const next = autoMove(); // the latest board's, when it fires
    if (!next) {
      auto = false;
      return;
    }
    intent(next.action ? { action: next.action } : { from: next.from, to: next.to, count: next.count }, null);
  }, 70);
}

// "Finish it for me": the server plays the solver's whole line at once; the client shows
// it one move after another at a watchable pace (about 30 s at most for a long line),
// every board the server's, until it has shown them all or the player skips.
export function playback() {
  clearTimeout(playTimer);
  const p = state.playback;
  if (!p) return;
  if (p.steps.length) {
    store.update((s) => {
      const step = s.playback.steps.shift();
      s.playback.shown = step.board;
      if (step.leaderboard) s.playback.leaderboard = step.leaderboard; // the standings follow
      s.playback.done += 1;
    });
  } else if (!state.finishing) { // every answer shown, and no more coming
    store.update((s) => { s.playback = null; });
    return;
  }
  playTimer = setTimeout(playback, Math.max(80, Math.min(250, 30000 / Math.max(1, p.total))));
}
$('#btn-skip-finish').addEventListener('click', () => {
  clearTimeout(playTimer);
  store.update((s) => { s.playback = null; });
});

// The solver's help: finish it for me (practice games, or once the player's own race is
// over: the server then continues in a practice room of its own); the results offer it
// too.
export function finishForMe() {
  if (!finishOffered(state) || state.inflight || state.queue.length) return;
  stopAuto();
  net.send({ type: 'finish' });
}

const input = new Input($('#my-board'), {
  board: () => state.board,
  selection: () => state.selection,
  // a pick said (and a pick put back: Escape, or the picked card pressed again)
  select: (sel, putBack = false) => {
    const was = state.selection;
    store.update((s) => { s.selection = sel; });
    if (sel) announce(pickWords(sel, state.board));
    else if (putBack && was) announce(pickWords(was, state.board, 'Unpicked'));
  },
  lift: (cards) => store.update((s) => { s.inflightDrag = cards; }),
  intent,
  enabled: canPlay,
  // no move waiting for its answer, and the board on screen is the latest one
  settled: () => !state.inflight && !state.queue.length && renderer.myBoard.board === state.board,
  connected: () => net.open,
  notSent,
  action: (name) => {
    if (name === 'autocomplete') startAuto();
    if (name === 'undo' && state.room.settings.undo) intent({ action: 'undo' }, null);
  },
});

$('#btn-auto').addEventListener('click', startAuto);
$('#btn-undo').addEventListener('click', () => intent({ action: 'undo' }, null));
$('#btn-hint').addEventListener('click', () => {
  if (hintOffered(state)) net.send({ type: 'hint' });
});
$('#btn-finish').addEventListener('click', finishForMe);
$('#btn-help').addEventListener('click', () => {
  const help = $('#help');
  help.hidden = !help.hidden;
  $('#btn-help').setAttribute('aria-expanded', String(!help.hidden));
});
// An arena race's sprint: one click, before the first move; the room event shows it.
$('#btn-sprint').addEventListener('click', () => {
  if (!sprintOffered(state) || !net.send({ type: 'sprint' })) return;
  store.update((s) => { s.sprintAsked = s.room.code; });
});
$('#btn-resign').addEventListener('click', () => {
  if (confirmed($('#btn-resign'), 'Really resign?')) intent({ resign: true }, null);
});
