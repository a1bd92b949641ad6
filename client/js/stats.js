// Play statistics: the `#/stats` page (one's own) and `#/stats/WHO` (anyone's), drawn
// from the profile's `stats` (GET /api/players/WHO), with a chart of the last 30 days in
// inline SVG; and the results' personal-best line, from the server's `played` message.
// Pure functions from JSON to escaped HTML, so they can be tested on their own.

import { escapeHtml, profileHref, whoOf } from './profile.js';

const VARIANTS = { draw1: 'Draw 1', draw3: 'Draw 3' };

// '' for `#/stats` (one's own), the key or name of `#/stats/WHO`, or null for any other
// address.
export function statsRoute(hash) {
  return hash === '#/stats' ? '' : whoOf(hash, 'stats');
}

export function statsHref(who) {
  return who ? `#/stats/${encodeURIComponent(who)}` : '#/stats';
}

function num(v) {
  return typeof v === 'number' && Number.isFinite(v) ? v : null;
}

// m:ss (h:mm:ss from an hour), or '–'.
export function timeText(ms) {
  const v = num(ms);
  if (v == null) return '\u2013';
  const total = Math.floor(v / 1000);
  const h = Math.floor(total / 3600);
  const m = Math.floor((total % 3600) / 60);
  const s = String(total % 60).padStart(2, '0');
  return h ? `${h}:${String(m).padStart(2, '0')}:${s}` : `${m}:${s}`;
}

// The results' lines of a won game from the `played` message: the best time of the
// variant, whether this game set it, the streak. '' for a game not won (or none told).
export function bestHtml(played) {
  const p = played && typeof played === 'object' ? played : null;
  if (!p || p.won !== true || !p.best) return '';
  const variant = VARIANTS[p.variant] || p.variant || '';
  const best = p.best;
  const fewest = p.fewest || {};
  const was = num(best.previous_ms) != null ? ` (was ${timeText(best.previous_ms)})` : '';
  const lines = [`<p class="best-time">Your best ${escapeHtml(variant)} time: <strong>${escapeHtml(timeText(best.time_ms))}</strong></p>`];
  if (best.new) lines.push(`<p class="best-new" role="status">New personal best!${escapeHtml(was)}</p>`);
  else if (fewest.new) lines.push(`<p class="best-new" role="status">Fewest moves yet: ${escapeHtml(num(fewest.moves))}</p>`);
  const streak = num(p.streak) || 0;
  lines.push(`<p class="best-streak">Win streak: ${escapeHtml(streak)} (best ${escapeHtml(num(p.best_streak) || streak)})`
    + ` \u00b7 <a href="${statsHref('')}">Your statistics</a></p>`);
  return lines.join('');
}

// The last days' games and wins as an SVG bar chart (a bar a day, the wins over the
// games), scaled to its box: readable on a phone as on a desktop.
export function chartSvg(days, label = '') {
  const list = Array.isArray(days) ? days : [];
  const w = 300;
  const h = 120;
  const top = 14;
  const base = h - 16;
  const most = Math.max(1, ...list.map((d) => num(d && d.games) || 0));
  const step = list.length ? w / list.length : w;
  const bar = Math.max(2, step - 2);
  const y = (n) => base - (n / most) * (base - top);
  const bars = list.map((d, i) => {
    const g = num(d.games) || 0;
    const won = num(d.wins) || 0;
    const x = (i * step + 1).toFixed(1);
    const tip = `<title>${escapeHtml(d.day)}: ${g} game${g === 1 ? '' : 's'}, ${won} won</title>`;
    return `<g class="day" data-day="${escapeHtml(d.day)}" data-games="${g}" data-wins="${won}">${tip}`
      + `<rect class="games" x="${x}" y="${y(g).toFixed(1)}" width="${bar.toFixed(1)}" height="${(base - y(g)).toFixed(1)}"/>`
      + `<rect class="wins" x="${x}" y="${y(won).toFixed(1)}" width="${bar.toFixed(1)}" height="${(base - y(won)).toFixed(1)}"/></g>`;
  }).join('');
  const games = list.reduce((n, d) => n + (num(d.games) || 0), 0);
  const wins = list.reduce((n, d) => n + (num(d.wins) || 0), 0);
  const first = list.length ? list[0].day : '';
  const last = list.length ? list[list.length - 1].day : '';
  const aria = `${label ? `${label}: ` : ''}${games} games and ${wins} wins over the last ${list.length} days`;
  return `<svg class="stats-chart" viewBox="0 0 ${w} ${h}" preserveAspectRatio="none" role="img" aria-label="${escapeHtml(aria)}">`
    + `<line class="axis" x1="0" y1="${base}" x2="${w}" y2="${base}"/>`
    + `<text class="tick" x="0" y="10">${most}</text>`
    + `${bars}`
    + `<text class="tick" x="0" y="${h - 3}">${escapeHtml(first.slice(5))}</text>`
    + `<text class="tick end" x="${w}" y="${h - 3}" text-anchor="end">${escapeHtml(last.slice(5))}</text></svg>`;
}

function variantHtml(key, v) {
  const rows = [
    ['Games', num(v.games) ?? '\u2013'],
    ['Wins', num(v.wins) ?? '\u2013'],
    ['Win rate', num(v.win_rate) == null ? '\u2013' : `${Math.round(v.win_rate * 1000) / 10}%`],
    ['Best time', timeText(v.best_time_ms)],
    ['Fewest moves', num(v.fewest_moves) ?? '\u2013'],
    ['Streak', num(v.streak) ?? '\u2013'],
    ['Best streak', num(v.best_streak) ?? '\u2013'],
  ];
  const name = VARIANTS[key] || key;
  return `<section class="variant stats-variant" data-variant="${escapeHtml(key)}"><h3>${escapeHtml(name)}</h3>`
    + `<dl class="stats-grid">${rows.map(([k, val]) => `<div><dt>${k}</dt><dd>${escapeHtml(val)}</dd></div>`).join('')}</dl>`
    + `<figure class="chart">${chartSvg(v.days, name)}`
    + '<figcaption class="muted small"><span class="key games"></span> games <span class="key wins"></span> won, '
    + 'per UTC day, the last 30 days</figcaption></figure></section>';
}

// The statistics page from the profile JSON.
export function statsHtml(data) {
  const p = data && typeof data === 'object' ? data : {};
  const stats = p.stats && typeof p.stats === 'object' ? p.stats : {};
  const kinds = Object.keys(stats).sort();
  const name = p.name || (p.guest ? 'A guest' : 'A player');
  return `<h2 id="profile-title">Statistics: ${escapeHtml(name)}</h2>`
    + `<p class="small"><a href="${escapeHtml(profileHref(p.id || ''))}">Profile</a></p>`
    + (kinds.length ? `<div class="variants">${kinds.map((k) => variantHtml(k, stats[k] || {})).join('')}</div>`
      : '<p class="muted">No finished game yet: every game you finish counts here, practice too.</p>')
    + '<p class="muted small">Every finished game counts: races, practice, dailies, arenas and ghost races; '
    + 'not a practice game the solver helped with, nor a practice continuation. A win is a solved deal.</p>';
}
