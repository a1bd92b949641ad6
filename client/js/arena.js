// Arenas, the app's side of them: the lobby's list (`arenas`) and its Join and Watch, the
// arena this page plays in or watches (kept as `kr.arena`: a reload comes back into it),
// Pause / Resume and Leave, watching its top race, and the arena's refusals. Its races are
// entered as a quick match's are: the server's `arena_race` carries the seat's token
// (connection.js keeps it) and the race's `welcome` follows. Its table comes whole
// (`arena`), then as changes (`arena_changes`, state.js). The screens are render.js's.

import { needName } from './lobby.js';
import {
  $, forgetSession, net, state, storage, store, toast,
} from './shared.js';
import { leaveRoom, playName, viewOf } from './state.js';

const kept = storage.get('kr.arena'); // {id, paused (or only watched)}
if (kept && typeof kept.id === 'string') {
  state.arenaId = kept.id;
  state.arenaPaused = Boolean(kept.paused);
}

function keep() {
  storage.set('kr.arena', state.arenaId ? { id: state.arenaId, paused: state.arenaPaused } : null);
}

function join(id) {
  store.update((s) => {
    if (s.arenaId !== id) s.arena = null;
    s.arenaId = id;
    s.arenaPaused = false;
  });
  keep();
  net.send({ type: 'join_arena', arena: id, name: playName(state) || 'Player' });
}

// The table without playing (joining would pair the player): the whole of it now, its
// changes as they come.
export function watchTable() {
  if (state.arenaId) net.send({ type: 'watch_arena', arena: state.arenaId });
}

// An arena watched from the lobby: its screen, not playing (its Join is there).
function watchArena(id) {
  store.update((s) => {
    if (s.arenaId !== id) s.arena = null;
    s.arenaId = id;
    s.arenaPaused = true;
  });
  keep();
  watchTable();
}

// Each (re)connection: the list, and the arena this page plays in joined again (closing
// a connection pauses its player: joining plays on), or, paused or watched, its table.
export function arenaAgain() {
  net.send({ type: 'arenas' });
  if (!state.arenaId) return;
  if (state.arenaPaused) watchTable();
  else net.send({ type: 'join_arena', arena: state.arenaId, name: playName(state) || 'Player' });
}

// Leave: paused (the points stay) and back to the lobby; a race still on for the others
// is left too, so that its end does not bring its results back.
function leave() {
  const id = state.arenaId;
  if (!id) return;
  if (!state.arenaPaused) net.send({ type: 'pause_arena', arena: id });
  if (state.room) {
    forgetSession(state.room.code);
    net.send({ type: 'leave' });
  }
  store.update((s) => {
    leaveRoom(s);
    s.arenaId = null;
    s.arena = null;
    s.arenaPaused = false;
  });
  keep();
  net.send({ type: 'arenas' });
  net.send({ type: 'rooms' });
}

const ERRORS = {
  arena_over: 'This arena is over.',
  no_arena: 'No such arena (or it starts more than 6 hours from now).',
};

// An error of the server's about arenas: true when handled here. Joining the arena this
// connection already plays in (a second press, a reconnection's join crossing the
// player's) changes nothing: the arena shows on.
export function arenaError(msg) {
  if (msg.reason === 'already_in_arena') {
    if (!state.arena) watchTable();
    return true;
  }
  if (msg.reason === 'not_in_arena') return true; // paused already (a reconnection pauses)
  if (msg.about === 'join_arena' && msg.reason === 'arena_over' && state.arenaId) {
    // over (a reload during its last races, a link opened late): its table is watched,
    // the podium once its last race is counted; a race of it still on goes on
    if (!state.room) toast(ERRORS.arena_over, 'error');
    store.update((s) => { s.arenaPaused = true; });
    keep();
    watchTable();
    return true;
  }
  if (msg.about === 'join_arena' && msg.reason === 'rate_limited' && state.arenaId) {
    // the address's players are in already (it does not open again): watched, not played
    toast(msg.message, 'error');
    store.update((s) => { s.arenaPaused = true; });
    keep();
    watchTable();
    return true;
  }
  if ((msg.about === 'join_arena' || msg.about === 'watch_arena') && ERRORS[msg.reason]) {
    toast(ERRORS[msg.reason], 'error');
    if (!state.room) leave();
    else store.update((s) => { s.arenaId = null; s.arena = null; });
    keep();
    return true;
  }
  return false;
}

// A final arena (its table the result): nothing more to play, so a reload or a new
// connection watches its table (the podium) rather than joining it (`arena_over`).
export function arenaFinal() {
  if (!state.arena || !state.arena.arena.final || state.arenaPaused) return;
  store.update((s) => { s.arenaPaused = true; });
  keep();
}

export { join as joinArena };

$('#arena-list').addEventListener('click', (e) => {
  const button = e.target.closest('[data-arena-join]');
  if (button && needName()) join(button.dataset.arenaJoin);
  const watch = e.target.closest('[data-arena-watch]');
  if (watch) watchArena(watch.dataset.arenaWatch);
});
// The arena's top race (its TV), watched as any race: the watch screen, Leave back here.
$('#btn-arena-tv').addEventListener('click', () => {
  const code = state.arena && state.arena.top;
  if (code) net.send({ type: 'watch', code });
});
$('#btn-arena-pause').addEventListener('click', () => {
  if (!state.arenaId) return;
  if (state.arenaPaused) { // Resume, or Join for one who only watched
    join(state.arenaId);
    return;
  }
  store.update((s) => { s.arenaPaused = true; });
  keep();
  net.send({ type: 'pause_arena', arena: state.arenaId });
});
$('#btn-arena-leave').addEventListener('click', leave);
setInterval(() => {
  if (viewOf(state) === 'lobby' && net.open) net.send({ type: 'arenas' });
}, 15000);
