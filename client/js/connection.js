// The connection's life: what is said on each (re)connection (`hello` first, then a
// resume, a watch, what the page's link asks, or the lobby), and what each message of
// the server's does once `receive` (state.js) has folded it into the state: each effect
// goes to the screen or concern it is about.

import { Account } from './account.js';
import {
  arenaAgain, arenaError, arenaFinal, watchTable,
} from './arena.js';
import { arenaMadeError } from './arenamake.js';
import {
  challengeError, enteredRoom, watchBoardAgain,
} from './challenges.js';
import { forgetIntent, pendingIntent } from './invite.js';
import { nameField } from './lobby.js';
import { sound } from './prefs.js';
import {
  acked, hinted, playback, refused, resend, settleDrag,
} from './race.js';
import { checkCommitment } from './results.js';
import {
  $, address, forgetSession, net, state, storage, store, toast,
} from './shared.js';
import {
  attemptOf, leaveRoom, playName, receive, roomPhase,
} from './state.js';

let replayAsked = null; // {code, resolve}: a `replay` sent, its answer awaited

const account = new Account({ store, storage, send: (msg) => net.send(msg), toast });

function onOpen() {
  net.send(account.hello()); // who this is, before anything else (a resume included)
  net.send({ type: 'challenges' });
  watchBoardAgain();
  if (state.role === 'spectator' && state.room) {
    // watching: watch again (not the race another tab of this browser plays in)
    net.send({ type: 'watch', code: state.room.code });
    return;
  }
  const session = storage.get('kr.session');
  const wanted = pendingIntent;
  if (session && session.token && (!wanted || wanted.code === session.code)) {
    net.send({ type: 'resume', token: session.token });
    if (wanted && wanted.type === 'join') forgetIntent();
    return;
  }
  if (wanted) {
    if (wanted.type === 'watch') {
      net.send({ type: 'watch', code: wanted.code });
      return;
    }
    if (wanted.type === 'join' && playName(state)) {
      net.send({ type: 'join', code: wanted.code, name: playName(state) });
      forgetIntent();
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
    replayAnswered(msg);
    return;
  }
  let effect = null;
  const hadRoom = Boolean(state.room); // none: a fresh page (a reload, the site reopened)
  const boardBefore = state.board; // the player's own board, for the move's words
  const inflight = state.inflight;
  // the moves sent or queued and not yet answered, in order (a snapshot forgets them)
  const unanswered = { room: state.room && state.room.code, player: state.player,
    moves: [...(inflight ? [inflight] : []), ...state.queue] };
  store.update((s) => { effect = receive(s, msg); });
  if ((effect === 'token' || effect === 'welcome') && !hadRoom && endedPractice()) {
    toLobby();
    return;
  }
  switch (effect) {
    case 'token':
      keepSession();
      afterEntry();
      break;
    case 'welcome':
      if (inflight && inflight.drag) settleDrag(inflight.drag, false);
      afterEntry();
      resend(unanswered);
      break;
    case 'leaderboard_stale': // changes to rows this client does not hold: the whole board
      watchBoardAgain();
      break;
    case 'arena_stale': // the same of an arena's table
      watchTable();
      break;
    case 'arena':
      arenaFinal();
      break;
    case 'start': // the player's race starts (a spectator's is not theirs)
      if (state.role === 'player') sound('start');
      break;
    case 'ack':
      acked(msg, inflight, boardBefore);
      break;
    case 'refused':
      refused(msg, inflight, unanswered);
      break;
    case 'room':
      checkCommitment();
      if (roomPhase(state) === 'finished') forgetRoom(state.room.code);
      // an arena's race over: a reload comes back into the arena, not this race's results
      if (roomPhase(state) === 'finished' && state.room.arena) forgetSession(state.room.code);
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
    case 'hint':
      hinted();
      break;
    case 'finishing':
      storage.set('kr.solved', state.solved);
      playback();
      break;
    default:
      break;
  }
}

// A practice game over (won, resigned, finished by the solver), found by a fresh page's
// resume: its results are old news, so the page opens in the lobby. A race the player
// is still in comes back as ever, and so does a practice continuation of a race (its
// results offer Back to the race).
function endedPractice() {
  const room = state.room;
  return Boolean(state.role === 'player' && room && room.practice && !room.parent
    && (roomPhase(state) === 'finished' || (state.board && state.board.over)));
}

// The lobby, as Back to lobby goes there: the session forgotten, the room left.
function toLobby() {
  forgetSession(state.room.code);
  net.send({ type: 'leave' });
  store.update(leaveRoom);
  history.replaceState(null, '', address());
  net.send({ type: 'rooms' });
}

// A token (create, join, a quick match) kept as this browser's session. Entering a
// practice continuation ("finish it for me" after one's race) keeps the race's session
// too, so "Back to the race" can resume it.
function keepSession() {
  const previous = storage.get('kr.session');
  const parent = state.room && state.room.parent;
  if (parent && previous && previous.code === parent) storage.set('kr.race', previous);
  // a token is CODE.SEAT.SECRET (docs/protocol.md): the only place its parts are read
  storage.set('kr.session', { token: state.token, code: state.token.split('.')[0] });
}

function afterEntry() {
  forgetIntent();
  if (state.invite) store.update((s) => { s.invite = null; });
  const room = state.room;
  if (!room) return;
  enteredRoom(room);
  if (state.role === 'spectator') {
    history.replaceState(null, '', address(`?watch=${room.code}`));
  } else {
    history.replaceState(null, '', address());
  }
  checkCommitment();
}

function onError(msg) {
  if (msg.reason === 'not_queued') return; // Cancel crossed a match: its race shows
  if (account.onError(msg)) return; // shown in the account area
  if (arenaError(msg)) return;
  if (arenaMadeError(msg)) return; // shown under the form
  toast(challengeError(msg) || msg.message || msg.reason, 'error');
  if (msg.about === 'join' && (msg.reason === 'room_finished' || msg.reason === 'no_room')) {
    forgetRoom(msg.message && (msg.message.match(/[A-Z0-9]{6}/) || [])[0]);
  }
  if (msg.reason === 'bad_token' || (msg.about === 'resume' && msg.reason === 'no_room')) {
    storage.set('kr.session', null);
    store.update(leaveRoom);
    if (pendingIntent) onOpen();
    else net.send({ type: 'rooms' });
  } else if ((msg.about === 'watch' || msg.about === 'join') && !state.room) {
    forgetIntent();
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

// A replay asked over the connection (the viewer's, replay.js): its answer, or why not.
export function askReplay(code) {
  if (replayAsked) replayAsked.resolve({ status: 0, error: 'superseded' });
  return new Promise((resolve) => {
    replayAsked = { code, resolve };
    if (!net.send({ type: 'replay', code })) {
      replayAsked = null;
      resolve({ status: 0, error: 'offline' });
    }
  });
}

function replayAnswered(msg) {
  const { resolve } = replayAsked;
  replayAsked = null;
  resolve(msg.type === 'replay' ? { status: 200, data: msg.replay }
    : { status: 403, error: msg.reason, message: msg.message, opens_at: msg.opens_at });
}

net.onOpen = () => {
  onOpen();
  arenaAgain(); // after a resume: its welcome comes before the next race's
};
net.onMessage = onMessage;
