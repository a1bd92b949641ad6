// The arena pages, over the screens (docs/client.md, "Arenas"): `#/arena/ID`, one arena
// as `GET /api/arenas/ID` gives it (where it is at, Join while it is not over, its table,
// its races with their replays, and once final its podium), the page a private arena's
// link opens and a profile's arenas link to; and `#/arenas`, the recent results
// (`GET /api/arenas?final=1`). The HTML comes from pure functions of the server's JSON,
// every value escaped.

import { FLAG_WORDS, flagsOf, getJson, nameCell, playersText } from './daily.js';
import { escapeHtml } from './profile.js';
import {
  arenaPhase, arenaWhat, localTime, ordinal, podiumHtml,
} from './render.js';
import { $, store } from './shared.js';
import {
  myKey, serverNow, sharesPlace, signedIn,
} from './state.js';

const REFRESH_MS = 10_000; // an arena's page not final is asked again this often
const CODE = /^[A-Z0-9]{6}$/;

// {id} of a `#/arena/ID` address, {list: true} of `#/arenas`, else null.
export function arenaPageRoute(hash) {
  if (/^#\/arenas\/?$/.test(hash || '')) return { list: true };
  const m = /^#\/arena\/([^/?#]+)$/.exec(hash || '');
  if (!m) return null;
  try {
    return { id: decodeURIComponent(m[1]) };
  } catch {
    return { id: m[1] };
  }
}

export const arenaHref = (id) => `#/arena/${encodeURIComponent(id)}`;

// The link that opens an arena's page for anyone who has it (a private arena's only way in).
export function arenaLink(id, origin = location.origin, path = location.pathname) {
  return `${origin}${path}${arenaHref(id)}`;
}

function load(page) {
  return getJson(page.list ? '/api/arenas?final=1' : `/api/arenas/${encodeURIComponent(page.id)}`);
}

// Open (or refresh) the page the address names.
export async function showArenaPage(page) {
  const same = (s) => s.arenaPage && s.arenaPage.id === page.id && s.arenaPage.list === page.list;
  if (!same(store.state)) store.update((s) => { s.arenaPage = { ...page, status: 'loading' }; });
  const got = await load(page);
  if (!same(store.state)) return; // navigated on meanwhile
  store.update((s) => {
    s.arenaPage = got.status === 200 ? { ...page, status: 'ok', data: got.data }
      : got.status === 404 ? { ...page, status: 'missing' } : { ...page, status: 'failed', error: got.error };
  });
}

const place = (rows, r) => `${escapeHtml(r.rank)}${sharesPlace(rows, r) ? '=' : ''}`;

function flagNote(rows) {
  const seen = [...new Set(rows.flatMap(flagsOf))];
  if (!seen.length) return '';
  const why = seen.map((f) => `<b>${escapeHtml(FLAG_WORDS[f][0])}</b>: ${escapeHtml(FLAG_WORDS[f][1])}`).join('; ');
  return `<p class="muted flags-note">A flagged row keeps its place. ${why}.</p>`;
}

function tableHtml(rows, me) {
  if (!rows.length) return '<p class="muted">Nobody has joined yet.</p>';
  const body = rows.map((r) => {
    const mine = me && r.player === me;
    return `<tr data-player="${escapeHtml(r.player)}"${mine ? ' class="me" aria-current="true"' : ''}>`
      + `<td>${place(rows, r)}</td><td>${nameCell({ ...r, who: r.player })}${mine ? ' <span class="muted">(you)</span>' : ''}</td>`
      + `<td>${escapeHtml(r.points)}</td><td>${escapeHtml(r.races)}</td><td>${escapeHtml(r.wins)}</td>`
      + `<td>${escapeHtml(r.performance)}</td></tr>`;
  }).join('');
  return '<div class="table-scroll"><table class="leaderboard arena-board arena-final">'
    + '<thead><tr><th>#</th><th>Player</th><th>Points</th><th>Races</th><th>Wins</th>'
    + '<th><abbr title="Performance: the opponents\u2019 average rating, +500 for each beaten, \u2212500 for each lost to">Perf.</abbr></th>'
    + `</tr></thead><tbody>${body}</tbody></table></div>${flagNote(rows)}`;
}

function racesHtml(races, total) {
  if (!total) return '<h3>Races</h3><p class="muted">No race counted yet.</p>';
  const rows = races.map((r) => {
    const who = (r.players || []).map((p) => `${escapeHtml(ordinal(p.place))} ${escapeHtml(p.name)} (${escapeHtml(p.points)})`).join(' \u00b7 ');
    const replay = CODE.test(r.code || '') ? `<a href="#/replay/${r.code}">replay</a>` : '';
    return `<tr data-code="${escapeHtml(r.code)}"><td class="code">${escapeHtml(r.code)}</td>`
      + `<td>${escapeHtml(localTime(r.at))}</td><td>${who}</td><td>${replay}</td></tr>`;
  }).join('');
  const shown = races.length < total ? ` (the last ${races.length} of ${total})` : ` (${total})`;
  return `<h3>Races${escapeHtml(shown)}</h3>`
    + '<div class="table-scroll"><table class="leaderboard arena-races"><thead><tr><th>Room</th><th>At</th>'
    + '<th>Places (points)</th><th><span class="visually-hidden">Replay</span></th></tr></thead>'
    + `<tbody>${rows}</tbody></table></div>`
    + '<p class="muted small">A race\u2019s replay is kept for a week.</p>';
}

// One arena's page, from `GET /api/arenas/ID`: `now` the server's time, `me` this
// player's key, `playing` whether this page plays in it, `name` the name a guest joins
// under (the field's start; null: an account's own name, no field).
export function arenaPageHtml(data, now, me, playing, name) {
  const a = data.arena;
  const over = now >= a.ends;
  const where = a.final ? 'final results' : over ? 'over: its last races still count' : arenaPhase(a, now);
  let join = '';
  if (playing) join = `<p>You ${over ? 'played' : 'play'} in this arena.</p><button type="button" class="btn primary" data-arena-page-back>Back to it</button>`;
  else if (!over) {
    const field = name === null ? ''
      : '<label for="arena-page-name" class="visually-hidden">Your name</label>'
        + `<input id="arena-page-name" name="name" maxlength="24" autocomplete="nickname" placeholder="Your name" required value="${escapeHtml(name)}">`;
    join = `<form class="row-form arena-page-join">${field}`
      + `<button type="submit" class="btn primary" aria-label="Join ${escapeHtml(a.title)}">Join</button></form>`;
  }
  return `<h2 id="arena-page-title">${escapeHtml(a.title)}</h2>`
    + `<p class="muted" data-arena-page-phase>${escapeHtml(arenaWhat(a))} \u00b7 ${escapeHtml(where)} \u00b7 ${escapeHtml(playersText(a.players))}</p>`
    + (a.private ? '<p class="muted small">Private: anyone with its link can join it.</p>' : '')
    + join
    + (data.podium && data.podium.length ? podiumHtml(data.podium) : '')
    + `<h3>${a.final ? 'Final table' : 'Table'}</h3>${tableHtml(data.table || [], me)}`
    + racesHtml(data.races || [], data.races_total || 0);
}

// The recent results, from `GET /api/arenas?final=1`.
export function finalsHtml(data) {
  const arenas = data.arenas || [];
  return '<h2 id="arena-page-title">Recent arenas</h2>'
    + (arenas.length ? `<ul class="live-rooms arena-finals">${arenas.map((a) => `<li data-arena="${escapeHtml(a.id)}">`
      + `<span class="live-label"><a href="${escapeHtml(arenaHref(a.id))}"><strong>${escapeHtml(a.title)}</strong></a>`
      + ` \u00b7 ${escapeHtml(playersText(a.players))}<br><small>${escapeHtml(arenaWhat(a))}</small></span></li>`).join('')}</ul>`
      : '<p class="muted">No arena has finished lately.</p>');
}

function pageHtml(state) {
  const p = state.arenaPage;
  if (p.status === 'loading') return '<h2 id="arena-page-title">Loading\u2026</h2>';
  if (p.status === 'missing') return '<h2 id="arena-page-title">No such arena</h2><p class="muted">Its link may be mistyped, or it is too old to be kept.</p>';
  if (p.status === 'failed') {
    return '<h2 id="arena-page-title">Unavailable</h2>'
      + `<p>It could not be loaded (${escapeHtml(p.error)}).</p><button type="button" class="btn" id="arena-page-retry">Try again</button>`;
  }
  if (p.list) return finalsHtml(p.data);
  const name = signedIn(state) ? null : state.name || '';
  return arenaPageHtml(p.data, serverNow(state), myKey(state), state.arenaId === p.id, name);
}

// Drawn as the state changes (the page shows over every screen while the address names it).
let drawn = null;
store.subscribe((state) => {
  const box = $('#arena-view');
  box.hidden = !state.arenaPage;
  if (!state.arenaPage) {
    drawn = null;
    return;
  }
  const html = pageHtml(state);
  if (html === drawn) return;
  const body = $('#arena-page-body');
  const typed = body.querySelector('#arena-page-name'); // a name being typed stays
  const keep = typed && document.activeElement === typed ? typed.value : null;
  drawn = html;
  body.innerHTML = html;
  if (keep !== null) {
    const field = body.querySelector('#arena-page-name');
    if (field) {
      field.value = keep;
      field.focus();
    }
  }
});

setInterval(() => {
  const p = store.state.arenaPage;
  if (p && p.status === 'ok' && !p.list && !p.data.arena.final) showArenaPage({ id: p.id });
}, REFRESH_MS);
