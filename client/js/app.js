// The app: wires network, state, rendering and input together, and handles the buttons
// and forms of the screens. Intents go to the server one at a time, each with the next
// sequence number; the board changes only when the server answers.

import { Account } from './account.js';
import { Input } from './input.js';
import { Net, defaultUrl } from './net.js';
import { moveWords, reasonText } from './cards.js';
import {
  addDays, challengeHref, dailyRoute, dayOf, loadChallenge, loadDay, opensText,
} from './daily.js';
import { loadProfile, profileRoute } from './profile.js';
import { Renderer } from './render.js';
import { ReplayViewer, replayRoute } from './replay.js';
import {
  Store, attemptOf, finishOffered, gameOver, hintOffered, initialState, leaveRoom, playName, receive,
  roomPhase, serverNow, signedIn, stillRacing, viewOf,
} from './state.js';

const $ = (sel) => document.querySelector(sel);
const params = new URLSearchParams(location.search);

const storage = {
  get(key) {
    try { return JSON.parse(localStorage.getItem(key)); } catch { return null; }
  },
  set(key, value) {
    try {
      if (value == null) localStorage.removeItem(key);
      else localStorage.setItem(key, JSON.stringify(value));
    } catch { /* private mode: nothing kept */ }
  },
};

const store = new Store(initialState());
const state = store.state;
state.name = storage.get('kr.name') || '';
// the four-colour deck: a choice of this browser's, shown by CSS (body[data-deck])
function showDeck(four) {
  document.body.dataset.deck = four ? 'four' : 'two';
  $('#btn-deck').setAttribute('aria-pressed', four ? 'true' : 'false');
}
showDeck(storage.get('kr.deck') === 'four');
// the win chime: off until the player turns it on (kept by the browser)
let chimes = 0;
$('#btn-sound').setAttribute('aria-pressed', storage.get('kr.sound') === true ? 'true' : 'false');
$('#btn-sound').addEventListener('click', () => {
  const on = storage.get('kr.sound') !== true;
  storage.set('kr.sound', on);
  $('#btn-sound').setAttribute('aria-pressed', on ? 'true' : 'false');
});
function chime() {
  if (storage.get('kr.sound') !== true) return;
  chimes += 1;
  try {
    const audio = new AudioContext();
    [523.25, 659.25, 783.99, 1046.5].forEach((hz, i) => { // C E G C, rising
      const tone = audio.createOscillator();
      const gain = audio.createGain();
      tone.frequency.value = hz;
      const at = audio.currentTime + i * 0.12;
      gain.gain.setValueAtTime(0.0001, at);
      gain.gain.exponentialRampToValueAtTime(0.2, at + 0.02);
      gain.gain.exponentialRampToValueAtTime(0.0001, at + 0.4);
      tone.connect(gain).connect(audio.destination);
      tone.start(at);
      tone.stop(at + 0.45);
    });
    setTimeout(() => audio.close(), 1200);
  } catch { /* no audio here */ }
}
$('#btn-deck').addEventListener('click', () => {
  const four = document.body.dataset.deck !== 'four';
  storage.set('kr.deck', four ? 'four' : 'two');
  showDeck(four);
});
state.solved = storage.get('kr.solved');
let pendingIntent = null; // what to do once connected: {type, ...}
if (params.get('watch')) pendingIntent = { type: 'watch', code: params.get('watch').toUpperCase() };
else if (params.get('join')) pendingIntent = { type: 'join', code: params.get('join').toUpperCase() };
// A shared challenge link (?challenge=ID) opens the challenge's page.
if (params.get('challenge')) {
  history.replaceState(null, '', `${location.pathname}${challengeHref(params.get('challenge'))}`);
}

// The page's address without its query (the hash route, e.g. a profile, is kept).
function address(query = '') {
  return `${location.pathname}${query}${location.hash}`;
}

const renderer = new Renderer(store);
const net = new Net(defaultUrl(), {
  onMessage: (msg) => onMessage(msg),
  onOpen: () => onOpen(),
  onStatus: (status) => store.update((s) => {
    // a stalled connection (no pong in time) is dropped and made again: reconnecting
    s.conn = status === 'stalled' ? 'connecting' : status;
    if (status === 'open') s.everConnected = true;
  }),
  onPong: (ms) => store.update((s) => { s.lag = ms; }),
});

const account = new Account({
  store, storage, send: (msg) => net.send(msg), toast: (text, kind) => toast(text, kind),
});

// ---- connection ------------------------------------------------------------------------
function onOpen() {
  net.send(account.hello()); // who this is, before anything else (a resume included)
  net.send({ type: 'challenges' });
  if (boardWanted) net.send({ type: 'watch_board', challenge: boardWanted.id, deal: boardWanted.deal });
  if (state.role === 'spectator' && state.room) {
    // watching: watch again (not the race another tab of this browser plays in)
    net.send({ type: 'watch', code: state.room.code });
    return;
  }
  const session = storage.get('kr.session');
  const wanted = pendingIntent;
  if (session && session.token && (!wanted || wanted.code === session.code)) {
    net.send({ type: 'resume', token: session.token });
    if (wanted && wanted.type === 'join') pendingIntent = null;
    return;
  }
  if (wanted) {
    if (wanted.type === 'watch') {
      net.send({ type: 'watch', code: wanted.code });
      return;
    }
    if (wanted.type === 'join' && playName(state)) {
      net.send({ type: 'join', code: wanted.code, name: playName(state) });
      pendingIntent = null;
      return;
    }
    $('#join-code').value = wanted.code;
    if (wanted.type === 'join') { // invited, with no name yet: say so, and ask for one
      store.update((s) => { s.invite = wanted.code; });
      requestAnimationFrame(() => $('#name').focus());
    }
  }
  if (state.view === 'queue' && !state.room && playName(state)) {
    // the queue ticket died with the socket
    net.send({ type: 'quick', name: playName(state), draw: state.quickDraw || 1 });
    return;
  }
  store.update(leaveRoom);
  net.send({ type: 'rooms' });
}

function onMessage(msg) {
  if (replayAsked && (msg.type === 'replay' || (msg.type === 'error' && msg.about === 'replay'))) {
    const { resolve } = replayAsked;
    replayAsked = null;
    resolve(msg.type === 'replay' ? { status: 200, data: msg.replay }
      : { status: 403, error: msg.reason, message: msg.message, opens_at: msg.opens_at });
    return;
  }
  let effect = null;
  const boardBefore = state.board; // the player's own board, for the move's words
  const inflight = state.inflight;
  // the moves sent or queued and not yet answered, in order (a snapshot forgets them)
  const unanswered = { room: state.room && state.room.code, player: state.player,
    moves: [...(inflight ? [inflight] : []), ...state.queue] };
  store.update((s) => { effect = receive(s, msg); });
  switch (effect) {
    case 'token': {
      // Entering a practice continuation ("finish it for me" after one's race) keeps the
      // race's session, so "Back to the race" can resume it.
      const previous = storage.get('kr.session');
      const parent = state.room && state.room.parent;
      if (parent && previous && previous.code === parent) storage.set('kr.race', previous);
      storage.set('kr.session', { token: state.token, code: state.token.split('.')[0] });
      afterEntry();
      break;
    }
    case 'welcome':
      if (inflight && inflight.drag) settleDrag(inflight.drag, false);
      afterEntry();
      resend(unanswered);
      break;
    case 'leaderboard_stale': // changes to rows this client does not hold: the whole board
      if (boardWanted) net.send({ type: 'watch_board', challenge: boardWanted.id, deal: boardWanted.deal });
      break;
    case 'ack':
      if (inflight && inflight.drag) settleDrag(inflight.drag, true);
      hideRefusal();
      // every move of one's own, said in the live region (not the solver's playback)
      if (!msg.duplicate && !state.finishing && !state.playback) {
        $('#announce').textContent = moveWords(msg.move, boardBefore, state.board);
      }
      if (state.winMoment && !(boardBefore && boardBefore.status === 'won') && state.board.status === 'won') chime();
      pump();
      autoNext();
      break;
    case 'refused':
      if (inflight && inflight.drag) settleDrag(inflight.drag, false);
      showRefusal(msg);
      if (unanswered.moves.length > 1) {
        const n = unanswered.moves.length - 1;
        toast(`${n} move${n === 1 ? '' : 's'} after it ${n === 1 ? 'was' : 'were'} not played`, 'error');
      }
      stopAuto();
      if (msg.reason === 'bad_seq' || msg.reason === 'not_your_game') resume();
      break;
    case 'room':
      checkCommitment();
      if (roomPhase(state) === 'finished') forgetRoom(state.room.code);
      if (attemptOf(state.room) && roomPhase(state) === 'finished') net.send({ type: 'challenges' });
      break;
    case 'left':
      forgetSession(msg.code);
      forgetRoom(msg.code);
      history.replaceState(null, '', address());
      net.send({ type: 'rooms' });
      break;
    case 'identity':
      account.onIdentity(msg);
      nameField();
      break;
    case 'error':
      onError(msg);
      break;
    case 'finishing':
      storage.set('kr.solved', state.solved);
      playback();
      break;
    default:
      break;
  }
}

function afterEntry() {
  pendingIntent = null;
  if (state.invite) store.update((s) => { s.invite = null; });
  const room = state.room;
  if (!room) return;
  if (leaveRouteOnEntry) { // watching an attempt from the challenge page: show it
    leaveRouteOnEntry = false;
    history.replaceState(null, '', location.pathname);
    store.update((s) => { s.daily = null; s.profile = null; });
  }
  const attempt = attemptOf(room);
  if (attempt && state.role === 'player') wantBoard(attempt.id, attempt.deal);
  if (state.role === 'spectator') {
    history.replaceState(null, '', address(`?watch=${room.code}`));
  } else {
    history.replaceState(null, '', address());
  }
  checkCommitment();
}

const CHALLENGE_ERRORS = {
  // the server's message names the time (UTC); the page says it in the player's words
  not_yet: 'Others are still playing this deal: watching their attempts, replays, ghosts and practice of the deal open once the challenge is final.',
  challenge_not_open: 'This challenge is not open: no attempt can start now.',
  attempt_made: 'You already played this deal as a guest before claiming your name.',
  hello_first: 'Not connected yet: try again in a moment.',
};

function onError(msg) {
  if (account.onError(msg)) return; // shown in the account area
  leaveRouteOnEntry = false;
  let words = CHALLENGE_ERRORS[msg.reason];
  if (words && typeof msg.opens_at === 'number') words += ` They open at ${opensText(msg.opens_at)}.`;
  toast(words || msg.message || msg.reason, 'error');
  if (words && state.daily) store.update((s) => { s.daily = { ...s.daily, notice: words }; });
  if (msg.about === 'attempt' && msg.reason === 'rate_limited' && attemptAsked) {
    // the address has made its attempts at the deal: the entry says so, in the server's words
    const ref = attemptAsked;
    store.update((s) => { s.attemptRefused = { ...s.attemptRefused, [ref]: msg.message || msg.reason }; });
  }
  if (msg.about === 'join' && (msg.reason === 'room_finished' || msg.reason === 'no_room')) {
    forgetRoom(msg.message && (msg.message.match(/[A-Z0-9]{6}/) || [])[0]);
  }
  if (msg.reason === 'bad_token' || (msg.about === 'resume' && msg.reason === 'no_room')) {
    storage.set('kr.session', null);
    store.update(leaveRoom);
    if (pendingIntent) onOpen();
    else net.send({ type: 'rooms' });
  } else if ((msg.about === 'watch' || msg.about === 'join') && !state.room) {
    pendingIntent = null;
    if (state.invite) store.update((s) => { s.invite = null; });
    history.replaceState(null, '', address());
    store.update(leaveRoom);
  }
}

// A room the player no longer sits in (left, finished, gone) leaves "Your races".
function forgetRoom(code) {
  if (!code || !state.identity) return;
  if (!state.identity.rooms.some((r) => r.code === code)) return;
  store.update((s) => { s.identity.rooms = s.identity.rooms.filter((r) => r.code !== code); });
}

// The stored session (a player's token, shared by this browser's tabs) is forgotten only
// when it is the session of the room this tab leaves: another tab may be racing on it.
function forgetSession(code) {
  const session = storage.get('kr.session');
  if (session && session.code === code) storage.set('kr.session', null);
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
function resend(before) {
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

// ---- moves ----------------------------------------------------------------------------
// Play is possible only on the race screen itself: not while a page (a replay, a profile,
// a challenge) is shown over it, whose keys are its own.
function canPlay() {
  return state.role === 'player' && viewOf(state) === 'race' && roomPhase(state) === 'racing'
    && Boolean(state.board) && !gameOver(state) && !state.finishing && !state.playback
    && !state.replay && !state.profile && !state.daily;
}

// "Finish it for me": the server plays the solver's whole line at once; the client shows
// it one move after another at a watchable pace (about 30 s at most for a long line),
// every board the server's, until it has shown them all or the player skips.
let playTimer = null;
function playback() {
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

function intent(what, drag) {
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

let pumpTimer = null;
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

function settleDrag(drag, accepted) {
  if (accepted) {
    input.land(drag);
    store.update((s) => { s.inflightDrag = null; });
  } else {
    input.snapBack(drag, () => store.update((s) => { s.inflightDrag = null; }));
  }
}

let refusalTimer = null;
function showRefusal(msg) {
  const box = $('#refusal');
  box.textContent = reasonText(msg.reason, msg.message);
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

// Auto-complete: offered only when the server's board says so (`autocomplete`); each
// step plays the board's `autocomplete_next`, the server's own choice, as an ordinary
// move, until the server's board offers none (or refuses one).
let auto = false;
let autoTimer = null;
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

const input = new Input($('#my-board'), {
  board: () => state.board,
  selection: () => state.selection,
  select: (sel) => store.update((s) => { s.selection = sel; }),
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

// ---- commitment check (Web Crypto) ----------------------------------------------------
async function sha256Hex(text) {
  const digest = await crypto.subtle.digest('SHA-256', new TextEncoder().encode(text));
  return [...new Uint8Array(digest)].map((b) => b.toString(16).padStart(2, '0')).join('');
}

async function checkCommitment() {
  const reveal = state.room && state.room.reveal;
  if (!reveal || (state.commitmentCheck && state.commitmentCheck.commitment === reveal.commitment)) return;
  if (!(window.crypto && crypto.subtle)) {
    store.update((s) => { s.commitmentCheck = { commitment: reveal.commitment, ok: false, unavailable: true }; });
    return;
  }
  const hex = await sha256Hex(`${reveal.salt}:${reveal.deal}`);
  store.update((s) => { s.commitmentCheck = { commitment: reveal.commitment, ok: hex === reveal.commitment, computed: hex }; });
}

// ---- lobby and rooms ----------------------------------------------------------------------
// The name field: what the player types as a guest; an account's own name, not
// editable, while signed in. A guest's field is only written back when it showed an
// account's name: an identity that arrives while the player types (before the field's
// change stores the name) must not wipe what they typed.
function nameField() {
  const field = $('#name');
  const account = signedIn(state);
  if (account && field.value !== playName(state)) field.value = playName(state);
  else if (!account && field.readOnly) field.value = state.name;
  field.readOnly = account;
  $('#name-note').textContent = account ? 'your account\u2019s name' : '';
}

function needName() {
  if (signedIn(state)) return playName(state);
  const field = $('#name');
  const name = field.value.trim();
  if (!name) {
    field.focus();
    field.setCustomValidity('Choose a display name first');
    field.reportValidity();
    return null;
  }
  takeName(name);
  return name;
}

function takeName(name) {
  $('#name').setCustomValidity('');
  store.update((s) => { s.name = name; });
  storage.set('kr.name', name);
}

function settingsFromForm(form) {
  const f = new FormData(form);
  const passes = f.get('passes');
  return {
    draw: Number(f.get('draw')),
    passes: passes === 'unlimited' ? 'unlimited' : Number(passes),
    empty: f.get('empty'),
    foundation_to_column: f.get('foundation_to_column') === 'on',
    scoring: f.get('scoring'),
    timed: f.get('timed') === 'on' && f.get('scoring') === 'standard',
    undo: f.get('undo') === 'on',
  };
}

function create(settings, extra) {
  const msg = { type: 'create', name: playName(state), settings, ...extra };
  // dev servers only (--dev): a named deal, for tests and development
  if (params.get('seed')) msg.deal = { seed: params.get('seed') };
  else if (params.get('cards')) msg.deal = { cards: params.get('cards').split(',') };
  net.send(msg);
}

$('#name').value = state.name;
$('#name').addEventListener('change', () => { if (!signedIn(state)) needName(); });
// the name is taken as it is typed: taken only when the field lets go (the first tap
// elsewhere), the header grew under that tap on a phone and moved the button it aimed at
$('#name').addEventListener('input', () => {
  const name = $('#name').value.trim();
  if (!signedIn(state) && name) takeName(name);
});
$('#create-form').addEventListener('submit', (e) => {
  e.preventDefault();
  if (!needName()) return;
  const form = e.target;
  const f = new FormData(form);
  const limit = f.get('time_limit');
  const rankBy = f.get('rank_by');
  const settings = settingsFromForm(form);
  create(settings, {
    capacity: Number(f.get('capacity')),
    private: f.get('private') === 'on',
    winnable_only: f.get('winnable_only') === 'on',
    time_limit: limit ? Number(limit) : null,
    rank_by: rankBy === 'score' && settings.scoring !== 'none' ? 'score' : 'progress',
    spectator_delay: Number(f.get('spectator_delay') || 0),
  });
});
$('#btn-practice').addEventListener('click', () => {
  if (!needName()) return;
  const form = $('#create-form');
  const f = new FormData(form);
  const limit = f.get('time_limit');
  create(settingsFromForm(form), {
    practice: true,
    time_limit: limit ? Number(limit) : null,
    winnable_only: f.get('winnable_only') === 'on',
  });
});
$('#join-form').addEventListener('submit', (e) => {
  e.preventDefault();
  const code = $('#join-code').value.trim().toUpperCase();
  if (!needName() || !code) return;
  net.send({ type: 'join', code, name: playName(state) });
});
$('#btn-invite-join').addEventListener('click', () => {
  const code = state.invite;
  if (!code || !needName()) return;
  net.send({ type: 'join', code, name: playName(state) });
});
$('#btn-invite-no').addEventListener('click', () => {
  pendingIntent = null; // declined: no later (re)connection joins it
  store.update((s) => { s.invite = null; });
  history.replaceState(null, '', address());
});
$('#btn-watch-code').addEventListener('click', () => {
  const code = $('#join-code').value.trim().toUpperCase();
  if (code) net.send({ type: 'watch', code });
});
$('#btn-quick').addEventListener('click', () => {
  if (needName()) net.send({ type: 'quick', name: playName(state), draw: 1 });
});
$('#btn-quick3').addEventListener('click', () => {
  if (needName()) net.send({ type: 'quick', name: playName(state), draw: 3 });
});
$('#btn-cancel-quick').addEventListener('click', () => {
  store.update((s) => { s.view = 'lobby'; });
  net.drop(); // the server drops the queue ticket with the connection; we reconnect
});
$('#btn-refresh').addEventListener('click', () => net.send({ type: 'rooms' }));
$('#count-racing').addEventListener('click', (e) => { // down to the live races (no route)
  e.preventDefault();
  $('#live-races').scrollIntoView({ block: 'start' });
});
$('#live-rooms').addEventListener('click', (e) => {
  const watch = e.target.closest('[data-watch]');
  const join = e.target.closest('[data-join]');
  if (watch) net.send({ type: 'watch', code: watch.dataset.watch });
  if (join && needName()) net.send({ type: 'join', code: join.dataset.join, name: playName(state) });
});
// "Your races": rejoin a room this player sits in (from another device): the server
// gives the same seat back, with a token of this device's.
$('#your-rooms').addEventListener('click', (e) => {
  const rejoin = e.target.closest('[data-rejoin]');
  if (rejoin) net.send({ type: 'join', code: rejoin.dataset.rejoin, name: playName(state) || 'Player' });
});
setInterval(() => {
  if (viewOf(state) === 'lobby' && net.open) net.send({ type: 'rooms' });
}, 5000);

// ---- challenges -------------------------------------------------------------------------
let boardWanted = null; // the challenge leaderboard this connection watches: {id, deal}
let attemptAsked = null; // the last `attempt` sent (not practice): "ID/N"
let leaveRouteOnEntry = false; // a watch asked from the challenge page
function wantBoard(id, deal) {
  if (boardWanted && boardWanted.id === id && boardWanted.deal === deal) return;
  boardWanted = { id, deal };
  net.send({ type: 'watch_board', challenge: id, deal });
}
function attempt(ref, practice = false) {
  const m = /^(.+)\/(\d+)$/.exec(ref || '');
  if (!m || !needName()) return;
  store.update((s) => { s.confirm = null; });
  const msg = { type: 'attempt', challenge: m[1], deal: Number(m[2]), name: playName(state) };
  if (practice) msg.practice = true;
  attemptAsked = practice ? null : ref;
  net.send(msg);
}
$('#daily-list').addEventListener('click', (e) => {
  const play = e.target.closest('[data-attempt]');
  const go = e.target.closest('[data-attempt-go]');
  const more = e.target.closest('[data-continue]');
  const practice = e.target.closest('[data-practice]');
  if (play) {
    // the first Play only explains: one ranked attempt, the clock from the deal's showing
    store.update((s) => { s.confirm = play.dataset.attempt; });
    requestAnimationFrame(() => { const b = $('[data-attempt-go]'); if (b) b.focus(); });
  }
  if (e.target.closest('[data-attempt-cancel]')) store.update((s) => { s.confirm = null; });
  if (go) attempt(go.dataset.attemptGo);
  if (more) attempt(more.dataset.continue);
  if (practice) attempt(practice.dataset.practice, true);
});
setInterval(() => {
  if (viewOf(state) === 'lobby' && net.open) net.send({ type: 'challenges' });
}, 15000);
$('#btn-share').addEventListener('click', async () => {
  const line = $('#share-line').value;
  if (!line) return;
  try {
    await navigator.clipboard.writeText(line);
    toast('Copied');
  } catch {
    $('#share-line').select();
    toast('Selected: copy it with Ctrl+C');
  }
});
$('#btn-attempt-board').addEventListener('click', () => {
  const a = attemptOf(state.room);
  if (a) location.hash = challengeHref(a.id);
});
$('#btn-attempt-practice').addEventListener('click', () => {
  const a = attemptOf(state.room);
  if (a) attempt(`${a.id}/${a.deal}`, true);
});
$('#daily-body').addEventListener('click', (e) => {
  const watch = e.target.closest('[data-watch-attempt]');
  if (watch) {
    store.update((s) => { if (s.daily) s.daily = { ...s.daily, notice: null }; });
    leaveRouteOnEntry = true;
    net.send({ type: 'watch', code: watch.dataset.watchAttempt });
  }
  if (e.target.closest('#daily-retry')) route();
});

// The browser's own SHA-256 of each revealed deal, compared with its commitment.
async function checkDeals(data) {
  if (!(window.crypto && crypto.subtle)) return;
  for (const d of (data && data.deals) || []) {
    if (!d.reveal || !d.commitment) continue;
    const hex = await sha256Hex(`${d.reveal.salt}:${d.reveal.deal}`);
    store.update((s) => {
      if (s.daily && s.daily.data === data) {
        s.daily = { ...s.daily, checks: { ...(s.daily.checks || {}), [d.commitment]: { ok: hex === d.commitment, computed: hex } } };
      }
    });
  }
}

async function dailyPage(r) {
  const today = dayOf(serverNow(state));
  const day = r.kind === 'archive' ? r.day || addDays(today, -1) : null;
  const same = (s) => s.daily && s.daily.kind === r.kind && s.daily.id === (r.id || null) && s.daily.day === day;
  store.update((s) => { s.daily = { kind: r.kind, id: r.id || null, day, status: 'loading' }; });
  const got = r.kind === 'archive' ? await loadDay(day) : await loadChallenge(r.id);
  if (!same(state)) return; // navigated on meanwhile
  store.update((s) => {
    s.daily = got.status === 200 ? { ...s.daily, status: 'ok', data: got.data, checks: {} }
      : got.status === 404 ? { ...s.daily, status: 'missing' } : { ...s.daily, status: 'failed', error: got.error };
  });
  if (got.status !== 200) return;
  if (typeof got.data.server_time === 'number') {
    store.update((s) => { s.offset = got.data.server_time - Date.now(); });
  }
  if (r.kind === 'challenge') {
    if (got.data.phase === 'closed') checkDeals(got.data);
    else wantBoard(got.data.id, 0);
  }
}
// The challenge page reloads itself when its challenge closes meanwhile.
setInterval(() => {
  const d = state.daily;
  if (d && d.kind === 'challenge' && d.status === 'ok' && d.data.phase !== 'closed'
    && serverNow(state) >= d.data.closes + 1000) {
    dailyPage({ kind: 'challenge', id: d.id });
  }
}, 1000);

// The system's share sheet (phones, some desktops), where the browser has one: the
// buttons show only then. A share the player cancels is no error.
for (const button of document.querySelectorAll('[data-native-share]')) button.hidden = !navigator.share;
async function nativeShare(data) {
  try {
    await navigator.share(data);
  } catch (err) {
    if (err && err.name !== 'AbortError') toast('Could not share: copy the link instead', 'error');
  }
}
$('#btn-share-room').addEventListener('click', () => {
  const code = state.room ? state.room.code : '';
  nativeShare({ title: 'Klondike Race', text: `Race me at Klondike Race: room ${code}`, url: $('#room-link').value });
});
$('#btn-share-result').addEventListener('click', () => {
  const line = $('#share-line').value;
  if (line) nativeShare({ title: 'Klondike Race', text: line });
});
$('#btn-copy').addEventListener('click', async () => {
  const link = $('#room-link').value;
  try {
    await navigator.clipboard.writeText(link);
    toast('Link copied');
  } catch {
    $('#room-link').select();
  }
});
$('#btn-ready').addEventListener('click', () => {
  const me = state.room.players.find((p) => p.id === state.player);
  net.send({ type: 'ready', ready: !(me && me.ready) });
});
$('#btn-start').addEventListener('click', () => net.send({ type: 'start' }));
$('#btn-leave').addEventListener('click', () => net.send({ type: 'leave' }));

// ---- race buttons -----------------------------------------------------------------------
$('#btn-auto').addEventListener('click', startAuto);
$('#btn-undo').addEventListener('click', () => intent({ action: 'undo' }, null));
// The solver's help: a hint (practice games), finish it for me (practice games, or once
// the player's own race is over: the server then continues in a practice room of its own)
$('#btn-hint').addEventListener('click', () => {
  if (hintOffered(state)) net.send({ type: 'hint' });
});
function finishForMe() {
  if (!finishOffered(state) || state.inflight || state.queue.length) return;
  stopAuto();
  net.send({ type: 'finish' });
}
$('#btn-finish').addEventListener('click', finishForMe);
$('#btn-back-race').addEventListener('click', () => {
  const race = storage.get('kr.race');
  const parent = state.room && state.room.parent;
  if (race && race.code === parent) {
    storage.set('kr.session', race); // resume as the race's player, on a fresh page
    storage.set('kr.race', null);
    location.reload();
  } else if (parent) {
    net.send({ type: 'watch', code: parent }); // e.g. another browser: watch it instead
  }
});
$('#btn-finish-results').addEventListener('click', finishForMe);
$('#btn-help').addEventListener('click', () => {
  const help = $('#help');
  help.hidden = !help.hidden;
  $('#btn-help').setAttribute('aria-expanded', String(!help.hidden));
});
// A button whose action cannot be taken back asks first: a press arms it (it says
// `question` for 3 s) and only a second press meanwhile confirms (true).
const armed = new Map(); // button -> {timer, disarm}
function confirmed(button, question) {
  const arm = armed.get(button);
  if (arm) {
    clearTimeout(arm.timer);
    arm.disarm();
    return true;
  }
  const label = button.textContent;
  const aria = button.getAttribute('aria-label');
  const disarm = () => {
    armed.delete(button);
    button.textContent = label;
    if (aria) button.setAttribute('aria-label', aria);
  };
  button.textContent = question;
  if (aria) button.setAttribute('aria-label', question);
  armed.set(button, { timer: setTimeout(disarm, 3000), disarm });
  return false;
}
$('#btn-resign').addEventListener('click', () => {
  if (confirmed($('#btn-resign'), 'Really resign?')) intent({ resign: true }, null);
});

// ---- results and watching ------------------------------------------------------------------
// Rematch: the server makes one new room on the same settings and tells everyone in
// this one its code (room.rematch); a player asking later is seated in that same room.
$('#btn-rematch').addEventListener('click', () => {
  if (state.room && state.role === 'player') net.send({ type: 'rematch' });
});
$('#btn-rematch-join').addEventListener('click', () => {
  const room = state.room;
  if (!room || !room.rematch) return;
  if (state.role === 'player') net.send({ type: 'rematch' });
  else if (playName(state)) net.send({ type: 'join', code: room.rematch, name: playName(state) });
  else { // a spectator with no name yet: the lobby asks for one, the rematch as its invitation
    const code = room.rematch;
    net.send({ type: 'leave' });
    store.update((s) => { leaveRoom(s); s.invite = code; });
    history.replaceState(null, '', address(`?join=${code}`));
    requestAnimationFrame(() => $('#name').focus());
  }
});
$('#btn-lobby').addEventListener('click', () => {
  if (state.room) forgetSession(state.room.code);
  net.send({ type: 'leave' });
  store.update(leaveRoom);
  history.replaceState(null, '', address());
  net.send({ type: 'rooms' });
  net.send({ type: 'challenges' });
});
$('#btn-stop-watch').addEventListener('click', () => {
  net.send({ type: 'leave' });
  store.update(leaveRoom);
  history.replaceState(null, '', address());
});
function follow(e) {
  const cell = e.target.closest('.grid-cell');
  if (cell && state.role === 'spectator') store.update((s) => { s.follow = cell.dataset.player; });
}
$('#watch-grid').addEventListener('click', follow);
$('#btn-unfollow').addEventListener('click', () => store.update((s) => { s.follow = null; }));

// ---- notices -----------------------------------------------------------------------------
let toastTimer = null;
function toast(message, kind = 'info') {
  const box = $('#toast');
  box.textContent = message;
  box.dataset.kind = kind;
  box.hidden = false;
  clearTimeout(toastTimer);
  toastTimer = setTimeout(() => { box.hidden = true; }, 3500);
}

// ---- profiles (#/players/WHO) ----------------------------------------------------------
let routedHere = false; // a profile opened from this page: Back goes back
let replayAsked = null; // {code, resolve}: a `replay` sent, its answer awaited
function askReplay(code) {
  if (replayAsked) replayAsked.resolve({ status: 0, error: 'superseded' });
  return new Promise((resolve) => {
    replayAsked = { code, resolve };
    if (!net.send({ type: 'replay', code })) {
      replayAsked = null;
      resolve({ status: 0, error: 'offline' });
    }
  });
}
const replays = new ReplayViewer($('#replay-view'), askReplay);
async function route() {
  const replay = replayRoute(location.hash);
  if (replay) {
    store.update((s) => { s.profile = null; s.daily = null; s.replay = replay.code; });
    await replays.show(replay.code, replay.step);
    return;
  }
  if (state.replay) {
    replays.close();
    store.update((s) => { s.replay = null; });
  }
  const who = profileRoute(location.hash);
  const daily = who ? null : dailyRoute(location.hash);
  if (!daily && state.daily) {
    store.update((s) => { s.daily = null; });
    const a = attemptOf(state.room); // back in an attempt: its own leaderboard again
    if (a && state.role === 'player') wantBoard(a.id, a.deal);
  }
  if (daily) {
    if (state.profile) store.update((s) => { s.profile = null; });
    await dailyPage(daily);
    return;
  }
  if (!who) {
    if (state.profile) store.update((s) => { s.profile = null; });
    return;
  }
  store.update((s) => { s.profile = { who, status: 'loading' }; });
  const got = await loadProfile(who);
  if (!state.profile || state.profile.who !== who) return; // navigated on meanwhile
  store.update((s) => {
    s.profile = got.status === 200 ? { who, status: 'ok', data: got.data }
      : got.status === 404 ? { who, status: 'missing' } : { who, status: 'failed', error: got.error };
  });
}
window.addEventListener('hashchange', () => {
  routedHere = true;
  route();
});
$('#profile-back').addEventListener('click', () => {
  if (routedHere) history.back();
  else {
    history.replaceState(null, '', `${location.pathname}${location.search}`);
    route();
  }
});
document.addEventListener('click', (e) => {
  const retry = e.target.closest('#profile-retry');
  if (retry) route();
});
$('#replay-view').addEventListener('ghost', (e) => {
  const { code, player, button } = e.detail;
  // racing a ghost leaves the room the player is in: a race they are still in, or a seat
  // waiting for its race, is asked about first; the waiting seat is then given up
  // (`leave`), not left taken in the room and in "Your races"
  const seat = state.role === 'player' && roomPhase(state) === 'waiting' ? state.room.code : null;
  if (stillRacing(state) && !confirmed(button, 'Leave your race for this ghost?')) return;
  if (seat && !confirmed(button, `Give up your seat in ${seat} for this ghost?`)) return;
  history.replaceState(null, '', `${location.pathname}${location.search}`);
  route();
  if (seat) net.send({ type: 'leave' });
  net.send({ type: 'ghost', code, player, name: playName(state) || 'Player' });
});
$('#replay-back').addEventListener('click', () => {
  if (routedHere) history.back();
  else {
    history.replaceState(null, '', `${location.pathname}${location.search}`);
    route();
  }
});
$('#daily-back').addEventListener('click', () => {
  if (routedHere) history.back();
  else {
    history.replaceState(null, '', `${location.pathname}${location.search}`);
    route();
  }
});
route();
nameField();

window.kr = { store, net, intent, replays, chimes: () => chimes }; // for the console and the tests
net.connect();
