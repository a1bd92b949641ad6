// The app's wiring: the page's modules, each a screen or a concern (shared.js holds what
// they share: the store, the connection, the renderer), the router of the pages shown
// over the screens (a replay, a profile, a challenge, the archive, an arena), and the start.

import { joinArena } from './arena.js';
import { arenaPageRoute, showArenaPage } from './arenapage.js';
import { askReplay } from './connection.js';
import { dailyPage, wantBoard } from './challenges.js';
import { dailyRoute } from './daily.js';
import { nameField, nameOrDefault, needName } from './lobby.js';
import { chimes, sounds } from './prefs.js';
import { loadProfile, profileRoute } from './profile.js';
import { intent } from './race.js';
import { ReplayViewer, replayRoute } from './replay.js';
import { statsRoute } from './stats.js';
import './results.js';
import './room.js';
import {
  $, confirmed, net, state, store,
} from './shared.js';
import {
  attemptOf, myKey, roomPhase, stillRacing, viewOf,
} from './state.js';
import './watch.js';

// ---- the router: #/replay/CODE, #/players/WHO, #/stats[/WHO], #/challenges/ID, #/archive/DAY, #/arena/ID,
// #/arenas --------------------------------------------------------------------------------
let routedHere = false; // a page opened from this page: Back goes back
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
  const arenaPage = arenaPageRoute(location.hash);
  if (arenaPage) {
    store.update((s) => { s.profile = null; s.daily = null; });
    await showArenaPage(arenaPage);
    return;
  }
  if (state.arenaPage) store.update((s) => { s.arenaPage = null; });
  // #/stats: one's own statistics (once the server has said who one is), #/stats/WHO
  const own = statsRoute(location.hash);
  const page = own == null ? 'profile' : 'stats';
  const who = own == null ? profileRoute(location.hash) : own || myKey(state) || '';
  const daily = who || own != null ? null : dailyRoute(location.hash);
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
    if (own === '') store.update((s) => { s.profile = { who, page, status: 'loading' }; });
    else if (state.profile) store.update((s) => { s.profile = null; });
    return;
  }
  store.update((s) => { s.profile = { who, page, status: 'loading' }; });
  const got = await loadProfile(who);
  if (!state.profile || state.profile.who !== who || state.profile.page !== page) return; // navigated on
  store.update((s) => {
    s.profile = got.status === 200 ? { who, page, status: 'ok', data: got.data }
      : got.status === 404 ? { who, page, status: 'missing' } : { who, page, status: 'failed', error: got.error };
  });
}

// #/stats opened before the server said who this is: drawn once it has
store.subscribe((s) => {
  if (s.profile && s.profile.page === 'stats' && !s.profile.who && myKey(s)) route();
});

// Back: where the page was opened from, else (the page was loaded at its address) the
// screen under it.
function back() {
  if (routedHere) history.back();
  else {
    history.replaceState(null, '', `${location.pathname}${location.search}`);
    route();
  }
}

window.addEventListener('hashchange', () => {
  routedHere = true;
  route();
});
$('#profile-back').addEventListener('click', back);
$('#replay-back').addEventListener('click', back);
$('#daily-back').addEventListener('click', back);
$('#arena-page-back').addEventListener('click', back);
document.addEventListener('click', (e) => { // a page that failed to load: Try again
  if (e.target.closest('#profile-retry, #daily-retry, #arena-page-retry')) route();
});

// An arena's page: Join (under the name typed there, or the account's), or back to the
// arena this page plays in; either closes the page for the arena's screen.
function toArena() {
  history.replaceState(null, '', `${location.pathname}${location.search}`);
  route();
}
$('#arena-page-body').addEventListener('submit', (e) => {
  e.preventDefault();
  const page = state.arenaPage;
  const typed = $('#arena-page-name');
  if (!page || !page.id) return;
  if (typed) $('#name').value = typed.value; // the lobby's name field takes it
  if (!needName()) {
    if (typed) typed.focus();
    return;
  }
  joinArena(page.id);
  toArena();
});
$('#arena-page-body').addEventListener('click', (e) => {
  if (e.target.closest('[data-arena-page-back]')) toArena();
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
  net.send({ type: 'ghost', code, player, name: nameOrDefault() });
});

// ---- the start ----------------------------------------------------------------------------
route();
nameField();

window.kr = { store, net, intent, replays, chimes: () => chimes, sounds: () => ({ ...sounds }) }; // for the console and the tests
net.connect();

// The service worker (sw.js: docs/client.md, "Installable, and the service worker"): the
// client's shell kept for the installed app, and an offline page. When a new deploy's
// worker takes over a page it already controlled, a page in the lobby reloads into the
// new version; a game, a room or a page over the lobby goes on, the next visit has it.
if ('serviceWorker' in navigator) {
  const had = Boolean(navigator.serviceWorker.controller);
  navigator.serviceWorker.addEventListener('controllerchange', () => {
    if (had && !state.room && !state.replay && !state.profile && !state.daily
      && !state.arenaPage && viewOf(state) === 'lobby') location.reload();
  });
  navigator.serviceWorker.register('sw.js').catch(() => { /* none here: the page as ever */ });
}
