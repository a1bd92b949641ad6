// The daily challenges, the app's side of them (daily.js has the routes, the server's
// JSON and its HTML): the home screen's entries (Play, Continue, Practice), the
// attempt's live leaderboard (`watch_board`) and its results' share line, the
// challenge page and the archive (`#/challenges/ID`, `#/archive/DAY`).

import { addDays, challengeHref, dayOf, loadChallenge, loadDay, opensText } from './daily.js';
import { nameOrDefault, needName } from './lobby.js';
import {
  $, nativeShare, net, sha256Hex, state, store, toast,
} from './shared.js';
import { attemptOf, serverNow, viewOf } from './state.js';

let boardWanted = null; // the challenge leaderboard this connection watches: {id, deal}
let attemptAsked = null; // the last `attempt` sent (not practice): "ID/N"
let leaveRouteOnEntry = false; // a watch asked from the challenge page

export function wantBoard(id, deal) {
  if (boardWanted && boardWanted.id === id && boardWanted.deal === deal) return;
  boardWanted = { id, deal };
  net.send({ type: 'watch_board', challenge: id, deal });
}

// The watched leaderboard asked whole again: on a new connection, or after changes to
// rows this client does not hold.
export function watchBoardAgain() {
  if (boardWanted) net.send({ type: 'watch_board', challenge: boardWanted.id, deal: boardWanted.deal });
}

// A room entered: an attempt watched from the challenge page shows (the page goes), and
// an attempt of the player's own watches its challenge's leaderboard.
export function enteredRoom(room) {
  if (leaveRouteOnEntry) {
    leaveRouteOnEntry = false;
    history.replaceState(null, '', location.pathname);
    store.update((s) => { s.daily = null; s.profile = null; });
  }
  const attempt = attemptOf(room);
  if (attempt && state.role === 'player') wantBoard(attempt.id, attempt.deal);
}

const CHALLENGE_ERRORS = {
  // the server's message names the time (UTC); the page says it in the player's words
  not_yet: 'Others are still playing this deal: watching their attempts, replays, ghosts and practice of the deal open once the challenge is final.',
  challenge_not_open: 'This challenge is not open: no attempt can start now.',
  attempt_made: 'You already played this deal as a guest before claiming your name.',
  hello_first: 'Not connected yet: try again in a moment.',
};

// An error of the server's (not the account's): a watch asked from the challenge page is
// over, the challenge page says a challenge's refusal too, and an attempt refused for
// the address's attempts at the deal is kept for its entry. Returns the refusal in the
// player's words when it is a challenge's, else null.
export function challengeError(msg) {
  leaveRouteOnEntry = false;
  let words = CHALLENGE_ERRORS[msg.reason];
  if (words && typeof msg.opens_at === 'number') words += ` They open at ${opensText(msg.opens_at)}.`;
  if (words && state.daily) store.update((s) => { s.daily = { ...s.daily, notice: words }; });
  if (msg.about === 'attempt' && msg.reason === 'rate_limited' && attemptAsked) {
    // the address has made its attempts at the deal: the entry says so, in the server's words
    const ref = attemptAsked;
    store.update((s) => { s.attemptRefused = { ...s.attemptRefused, [ref]: msg.message || msg.reason }; });
  }
  return words || null;
}

// An attempt asks for a name (it is ranked under it); practice of the deal does not.
function attempt(ref, practice = false) {
  const m = /^(.+)\/(\d+)$/.exec(ref || '');
  if (!m) return;
  const name = practice ? nameOrDefault() : needName();
  if (!name) return;
  store.update((s) => { s.confirm = null; });
  const msg = { type: 'attempt', challenge: m[1], deal: Number(m[2]), name };
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

// ---- after the attempt (the results' attempt box) ---------------------------------------
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
$('#btn-share-result').addEventListener('click', () => {
  const line = $('#share-line').value;
  if (line) nativeShare({ title: 'Klondike Race', text: line });
});
$('#btn-attempt-board').addEventListener('click', () => {
  const a = attemptOf(state.room);
  if (a) location.hash = challengeHref(a.id);
});
$('#btn-attempt-practice').addEventListener('click', () => {
  const a = attemptOf(state.room);
  if (a) attempt(`${a.id}/${a.deal}`, true);
});

// ---- the challenge page and the archive -------------------------------------------------
$('#daily-body').addEventListener('click', (e) => {
  const watch = e.target.closest('[data-watch-attempt]');
  if (watch) {
    store.update((s) => { if (s.daily) s.daily = { ...s.daily, notice: null }; });
    leaveRouteOnEntry = true;
    net.send({ type: 'watch', code: watch.dataset.watchAttempt });
  }
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

// The page of a route (dailyRoute in daily.js): a challenge or a day of the archive.
export async function dailyPage(r) {
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
