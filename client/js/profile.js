// Player profiles: the hash route `#/players/WHO`, the fetch of `GET /api/players/WHO`,
// and `profileHtml(data)`, a pure function from the server's profile JSON to HTML (every
// value escaped), so it can be tested on its own.

import { challengeHref } from './daily.js';

const KEY = /^[ag]-[0-9a-f]{32}$/;

// The WHO of a `#/PAGE/WHO` address (decoded, or as it is when it is not a valid
// encoding), or null for any other address.
export function whoOf(hash, page) {
  const m = new RegExp(`^#/${page}/([^/?#]+)$`).exec(hash || '');
  if (!m) return null;
  try {
    return decodeURIComponent(m[1]);
  } catch {
    return m[1];
  }
}

// The player key of a `#/players/WHO` address, or null for any other address.
export function profileRoute(hash) {
  return whoOf(hash, 'players');
}

export function profileHref(who) {
  return `#/players/${encodeURIComponent(who)}`;
}

// {status: 200, data} | {status: 404} | {status: other, error}. A key that is not of
// the server's form (a- or g- and 32 hex digits) is no player: nothing is asked.
export async function loadProfile(who, fetcher = fetch) {
  if (!KEY.test(who)) return { status: 404 };
  let response;
  try {
    response = await fetcher(`/api/players/${encodeURIComponent(who)}`, {
      headers: { Accept: 'application/json' },
    });
  } catch (err) {
    return { status: 0, error: String(err && err.message ? err.message : err) };
  }
  if (response.status === 404) return { status: 404 };
  if (response.status !== 200) return { status: response.status, error: `HTTP ${response.status}` };
  try {
    return { status: 200, data: await response.json() };
  } catch {
    return { status: 502, error: 'the answer was not JSON' };
  }
}

const ESCAPES = { '&': '&amp;', '<': '&lt;', '>': '&gt;', '"': '&quot;', "'": '&#39;' };
export function escapeHtml(value) {
  return String(value == null ? '' : value).replace(/[&<>"']/g, (c) => ESCAPES[c]);
}

const VARIANTS = { draw1: 'Draw 1', draw3: 'Draw 3' };
const RESULTS = {
  won: 'won', stuck: 'stuck', resigned: 'resigned', out_of_time: 'out of time', playing: 'playing',
};

function num(v) {
  return typeof v === 'number' && Number.isFinite(v) ? v : null;
}

function duration(ms) {
  const v = num(ms);
  if (v == null) return '\u2013';
  const total = Math.round(v / 1000);
  const m = Math.floor(total / 60);
  return `${m}:${String(total % 60).padStart(2, '0')}`;
}

function date(at) {
  const v = num(at);
  if (v == null) return '';
  const d = new Date(v);
  return Number.isNaN(d.getTime()) ? '' : d.toISOString().slice(0, 10);
}

function or(v, text = '\u2013') {
  return v == null ? text : v;
}

function percent(rate) {
  const v = num(rate);
  return v == null ? '\u2013' : `${Math.round(v * 1000) / 10}%`;
}

// A small line of the rating over time (SVG), or '' with fewer than two points.
export function sparkline(history, width = 160, height = 36) {
  const pts = (Array.isArray(history) ? history : []).map((h) => num(h && h.rating)).filter((r) => r != null);
  if (pts.length < 2) return '';
  const lo = Math.min(...pts);
  const hi = Math.max(...pts);
  const span = hi - lo || 1;
  const xy = pts.map((r, i) => `${((i / (pts.length - 1)) * (width - 4) + 2).toFixed(1)},`
    + `${(height - 2 - ((r - lo) / span) * (height - 4)).toFixed(1)}`);
  return `<svg class="spark" viewBox="0 0 ${width} ${height}" width="${width}" height="${height}"`
    + ` role="img" aria-label="Rating from ${escapeHtml(pts[0])} to ${escapeHtml(pts[pts.length - 1])}">`
    + `<polyline fill="none" stroke="currentColor" stroke-width="2" points="${xy.join(' ')}"/></svg>`;
}

function variantHtml(key, v) {
  const rating = num(v.rating);
  const stats = [
    ['Rating', rating == null ? '\u2013' : `${rating}${v.provisional ? ' (provisional)' : ''}`],
    ['Races', or(num(v.races))],
    ['Wins', `${or(num(v.wins))} (${percent(v.win_rate)})`],
    ['Solved', or(num(v.solved))],
    ['Best time', duration(v.best_time_ms)],
    ['Fewest moves', or(num(v.fewest_moves))],
    ['Average home', num(v.average_foundation) == null ? '\u2013' : `${num(v.average_foundation)}/52`],
    ['Streak', `${or(num(v.streak))} (best ${or(num(v.best_streak))})`],
  ];
  return `<section class="variant" data-variant="${escapeHtml(key)}">`
    + `<h3>${escapeHtml(VARIANTS[key] || key)}</h3>`
    + `<dl class="stats-grid">${stats.map(([k, val]) => `<div><dt>${k}</dt><dd>${escapeHtml(val)}</dd></div>`).join('')}</dl>`
    + `${sparkline(v.rating_history)}</section>`;
}

function historyRow(h) {
  const before = num(h.rating_before);
  const after = num(h.rating_after);
  let change = '';
  if (h.rated && before != null && after != null) {
    const d = after - before;
    change = `${after} (${d >= 0 ? '+' : '\u2212'}${Math.abs(d)})`;
  }
  const replay = typeof h.replay === 'string' && /^\/[A-Za-z0-9/_-]*$/.test(h.replay)
    ? `<a href="#${escapeHtml(h.replay)}">replay</a>` : ''; // in the page: Back returns here
  const rank = num(h.rank) == null ? '\u2013' : `${num(h.rank)} of ${or(num(h.players), '?')}`;
  return `<tr data-code="${escapeHtml(h.code)}"><td class="date">${escapeHtml(date(h.at))}</td>`
    + `<td class="code">${escapeHtml(h.code)}</td><td>${escapeHtml(VARIANTS[h.variant] || h.variant || '')}</td>`
    + `<td>${escapeHtml(rank)}</td><td>${escapeHtml(RESULTS[h.result] || h.result || '')}</td>`
    + `<td>${escapeHtml(change || (h.rated ? '' : unrated(h)))}</td><td>${replay}</td></tr>`;
}

// Why a race moved no rating, when the server says (its seat shared an address with
// another seat of the race: docs/rules.md, "Ratings and statistics").
function unrated(h) {
  return Array.isArray(h.flags) && h.flags.includes('address') ? 'unrated: shared address' : 'unrated';
}

const REPLAY_CODE = /^[A-Z0-9]{6}$/;

// The daily challenges: the streak of days played and the last 30 days' attempts, each
// day linked to its challenge page and the attempt to its replay (an attempt's replay
// opens once its challenge is final, or earlier to those who may watch it).
function dailyHtml(daily) {
  const days = Array.isArray(daily.days) ? daily.days : [];
  const streak = num(daily.streak);
  const plural = (n) => (n == null ? '\u2013' : `${n} day${n === 1 ? '' : 's'}`);
  const stats = [
    ['Daily streak', plural(streak)],
    ['Best streak', plural(num(daily.best_streak))],
    ['Days played', `${days.length} (last 30 days)`],
  ];
  const row = (d) => {
    const day = escapeHtml(d.day);
    const link = typeof d.challenge === 'string' && d.challenge
      ? `<a href="${escapeHtml(challengeHref(d.challenge))}">${day}</a>` : day;
    const draw = /-(draw[13])$/.exec(d.challenge || '');
    const replay = typeof d.code === 'string' && REPLAY_CODE.test(d.code)
      ? `<a href="#/replay/${d.code}">replay</a>` : '';
    return `<tr data-challenge="${escapeHtml(d.challenge)}"><td class="date">${link}</td>`
      + `<td>${escapeHtml(draw ? VARIANTS[draw[1]] : '')}</td><td>${escapeHtml(RESULTS[d.status] || d.status || '')}</td>`
      + `<td>${escapeHtml(or(num(d.foundation)))}/52</td><td>${escapeHtml(or(num(d.moves)))}</td>`
      + `<td>${escapeHtml(duration(d.time_ms))}</td><td>${replay}</td></tr>`;
  };
  return '<section class="dailies"><h3>Daily challenges</h3>'
    + `<dl class="stats-grid">${stats.map(([k, val]) => `<div><dt>${k}</dt><dd>${escapeHtml(val)}</dd></div>`).join('')}</dl>`
    + (days.length
      ? '<div class="table-scroll"><table class="leaderboard daily-history"><thead><tr><th>Day</th><th>Game</th>'
        + '<th>Result</th><th>Home</th><th>Moves</th><th>Time</th><th><span class="visually-hidden">Replay</span></th></tr></thead>'
        + `<tbody>${days.map(row).join('')}</tbody></table></div>`
      : '<p class="muted">No daily challenge in the last 30 days.</p>')
    + '</section>';
}

// The final arenas the player raced in, newest first: each linked to its page (its final
// table, podium and races), with the player's final rank of how many and their line.
function arenasHtml(arenas) {
  const row = (a) => {
    const link = typeof a.arena === 'string' && a.arena
      ? `<a href="#/arena/${encodeURIComponent(a.arena)}">${escapeHtml(a.title || a.arena)}</a>` : escapeHtml(a.title);
    const rank = num(a.rank) == null ? '–' : `${num(a.rank)} of ${or(num(a.players), '?')}`;
    return `<tr data-arena="${escapeHtml(a.arena)}"><td class="date">${escapeHtml(date(a.starts))}</td><td>${link}</td>`
      + `<td>${escapeHtml(rank)}</td><td>${escapeHtml(or(num(a.points)))}</td><td>${escapeHtml(or(num(a.races)))}</td>`
      + `<td>${escapeHtml(or(num(a.wins)))}</td></tr>`;
  };
  return '<section class="arenas"><h3>Arenas</h3>'
    + (arenas.length
      ? '<div class="table-scroll"><table class="leaderboard arena-history"><thead><tr><th>Date</th><th>Arena</th>'
        + '<th>Rank</th><th>Points</th><th>Races</th><th>Wins</th></tr></thead>'
        + `<tbody>${arenas.map(row).join('')}</tbody></table></div>`
      : '<p class="muted">No arena yet.</p>')
    + '</section>';
}

// The profile as HTML, from the JSON of `GET /api/players/WHO`.
export function profileHtml(data) {
  const p = data && typeof data === 'object' ? data : {};
  const variants = p.variants && typeof p.variants === 'object' ? Object.entries(p.variants) : [];
  const history = Array.isArray(p.history) ? p.history : [];
  const name = p.name || (p.guest ? 'A guest' : 'A player');
  // the tag marks a named guest ("Ann guest"); a guest without a name is "A guest" already
  const tag = p.guest && p.name ? ' <span class="tag guest">guest</span>' : '';
  const stats = p.id ? ` \u00b7 <a class="stats-link" href="#/stats/${encodeURIComponent(p.id)}">Statistics</a>` : '';
  return `<h2 id="profile-title">${escapeHtml(name)}${tag}</h2>`
    + `<p class="muted small"><span class="mono">${escapeHtml(p.id)}</span>${stats}</p>`
    + (variants.length ? `<div class="variants">${variants.map(([k, v]) => variantHtml(k, v || {})).join('')}</div>`
      : '<p class="muted">No rated races yet.</p>')
    + (p.daily && typeof p.daily === 'object' ? dailyHtml(p.daily) : '')
    + (Array.isArray(p.arenas) ? arenasHtml(p.arenas) : '')
    + '<h3>Races</h3>'
    + (history.length
      ? '<div class="table-scroll"><table class="leaderboard history"><thead><tr><th>Date</th><th>Room</th>'
        + '<th>Game</th><th>Rank</th><th>Result</th><th>Rating</th><th><span class="visually-hidden">Replay</span></th></tr></thead>'
        + `<tbody>${history.map(historyRow).join('')}</tbody></table></div>`
      : '<p class="muted">No races yet.</p>');
}
