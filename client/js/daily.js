// Daily challenges (docs/protocol.md, "Challenges"): the hash routes of the challenge
// page (`#/challenges/ID`) and the archive (`#/archive/YYYY-MM-DD`), their fetches of
// `GET /api/challenges...`, and pure functions from the server's JSON to text and
// escaped HTML (the share line, the lobby's entries, the standings tables).

import { escapeHtml, profileHref } from './profile.js';
import { sharesPlace } from './state.js';

const DAY = /^\d{4}-\d{2}-\d{2}$/;
const DAY_MS = 86_400_000;

// {kind: 'challenge', id} | {kind: 'archive', day (or null: the day before today)} | null
export function dailyRoute(hash) {
  let m = /^#\/challenges\/([^/?#]+)$/.exec(hash || '');
  if (m) {
    try {
      return { kind: 'challenge', id: decodeURIComponent(m[1]) };
    } catch {
      return { kind: 'challenge', id: m[1] };
    }
  }
  m = /^#\/archive(?:\/(\d{4}-\d{2}-\d{2}))?$/.exec(hash || '');
  if (m) return { kind: 'archive', day: m[1] || null };
  return null;
}

export const challengeHref = (id) => `#/challenges/${encodeURIComponent(id)}`;
export const archiveHref = (day) => `#/archive/${day}`;

// The address to share: the page with `?challenge=ID` (opens the challenge's page).
export function challengeLink(id, origin = location.origin, path = location.pathname) {
  return `${origin}${path}?challenge=${encodeURIComponent(id)}`;
}

// YYYY-MM-DD of an epoch-ms instant (UTC, as the dailies' days are), and a day moved by n.
export function dayOf(ms) {
  return new Date(ms).toISOString().slice(0, 10);
}
export function addDays(day, n) {
  return dayOf(Date.parse(`${day}T00:00:00Z`) + n * DAY_MS);
}

export async function getJson(url, fetcher = fetch) {
  let response;
  try {
    response = await fetcher(url, { headers: { Accept: 'application/json' } });
  } catch (err) {
    return { status: 0, error: String(err && err.message ? err.message : err) };
  }
  if (response.status !== 200) return { status: response.status, error: `HTTP ${response.status}` };
  try {
    return { status: 200, data: await response.json() };
  } catch {
    return { status: 502, error: 'the answer was not JSON' };
  }
}

export function loadChallenge(id, fetcher = fetch) {
  return getJson(`/api/challenges/${encodeURIComponent(id)}`, fetcher);
}

export function loadDay(day, fetcher = fetch) {
  if (!DAY.test(day)) return Promise.resolve({ status: 400, error: 'not a day' });
  return getJson(`/api/challenges?day=${day}`, fetcher);
}

// 1,234 (the share line's players count)
export function thousands(n) {
  return String(n).replace(/\B(?=(\d{3})+(?!\d))/g, ',');
}

// "1 player", "2,344 players": the players who made an attempt (a challenge's count)
export function playersText(n) {
  return `${thousands(n || 0)} player${n === 1 ? '' : 's'}`;
}

// "2026-12-06 00:30 UTC": when something the server refuses until then opens (an
// error's `opens_at`, a challenge's `final_at`), as the server's message says it.
export function opensText(ms) {
  return `${new Date(ms).toISOString().slice(0, 16).replace('T', ' ')} UTC`;
}

// m:ss (h:mm:ss past an hour)
export function clockText(ms) {
  const total = Math.max(0, Math.floor((ms || 0) / 1000));
  const h = Math.floor(total / 3600);
  const m = Math.floor((total % 3600) / 60);
  const s = String(total % 60).padStart(2, '0');
  return h ? `${h}:${String(m).padStart(2, '0')}:${s}` : `${m}:${s}`;
}

// "Daily 2026-12-02 Draw 3" from a challenge of the list, else from its id.
export function titleOf(id, challenge) {
  if (challenge && challenge.title) return challenge.title;
  const m = /^daily-(\d{4}-\d{2}-\d{2})-draw(\d)$/.exec(id || '');
  return m ? `Daily ${m[1]} Draw ${m[2]}` : id || '';
}

export function minutes(seconds) {
  const m = Math.round((seconds || 0) / 60);
  return m >= 1 ? `${m}-minute` : `${seconds}-second`;
}

const STATUS = {
  playing: 'playing', won: 'won', stuck: 'stuck', resigned: 'resigned', out_of_time: 'out of time',
};
export const statusWord = (s) => STATUS[s] || s || '';

// "rank 17 of 2,344"; on the guests' list of a challenge that ranks accounts only
// (docs/rules.md, "Accounts-only ranking"), "guest place 3 of 41".
export function placeText(rank, of, guests = false) {
  return `${guests ? 'guest place' : 'rank'} ${rank ?? '?'} of ${thousands(of || 0)}`;
}

// The line a player copies after their attempt:
// "Klondike Race daily 2026-12-02 Draw 3: 52/52 in 118 moves, 3:12, rank 17 of 2,344 https://…?challenge=ID"
// game: {foundation, moves, ms, status} (a won game: the moves and time of the 52nd card).
// A guest where the challenge ranks accounts only (`guests`): their place on the guests'
// list, "guest place 3 of 41".
export function shareLine(title, game, rank, players, link, guests = false) {
  const m = /^Daily (.*)$/.exec(title || '');
  const what = m ? `daily ${m[1]}` : title;
  const place = rank != null ? `, ${placeText(rank, players || 1, guests)}` : '';
  const status = game.status !== 'won' && game.status !== 'playing' ? ` (${statusWord(game.status)})` : '';
  return `Klondike Race ${what}: ${game.foundation}/52 in ${game.moves} move${game.moves === 1 ? '' : 's'}, ${clockText(game.ms)}${place}${status} ${link}`;
}

// The share line's figures: the player's own final board (the server's word on their
// game), as the leaderboard ranks it: the foundation cards and the moves and time it
// took to reach them.
export function shareGame(board) {
  return {
    foundation: board.foundation,
    moves: board.reached_moves,
    ms: board.reached_ms,
    status: board.status,
  };
}

// What ranks a row after its cards home (docs/rules.md, "Race ranking"): the moves and
// the time it took to reach that count. Nothing before a card has gone home (0 and 0:00
// would read as a game of no moves): null, shown as "–".
export function reachedOf(row) {
  return row.reached_moves ? { moves: row.reached_moves, ms: row.reached_ms } : null;
}

// " in 74 moves" after a row's "12/52" (the live board's words), '' with nothing reached.
export function reachedText(row) {
  const reached = reachedOf(row);
  return reached ? ` in ${reached.moves} move${reached.moves === 1 ? '' : 's'}` : '';
}

const REACHED_MOVES = 'The moves it took to get this many cards home (fewer ranks higher); – until a card has gone home';
const REACHED_AT = 'Attempt time when this many cards were home (less ranks higher); – until a card has gone home';

// Why a row is flagged (docs/rules.md, "Fair play"), as its tag says it.
export const FLAG_WORDS = {
  address: ['shared address', 'another player came from the same network address before this one'],
  speed: ['too fast', 'won faster than a person plays'],
};

// A row's reasons: its flags, or for a row without them (an older server) the speed flag.
export function flagsOf(row) {
  if (Array.isArray(row.flags)) return row.flags.filter((f) => f in FLAG_WORDS);
  return row.flagged ? ['speed'] : [];
}

// A flag's tag, "flagged: shared address", and its meaning (the tag's title).
export function flagTag(flag) {
  return [`flagged: ${FLAG_WORDS[flag][0]}`, FLAG_WORDS[flag][1]];
}

export function nameCell(row) {
  const name = escapeHtml(row.name || '?');
  const link = row.who ? `<a class="profile-link" href="${escapeHtml(profileHref(row.who))}">${name}</a>` : name;
  const flags = flagsOf(row).map(flagTag).map(([tag, why]) => ` <span class="tag flag" title="${escapeHtml(why)}">${escapeHtml(tag)}</span>`);
  return `<span class="pname">${link}${row.guest ? ' <span class="tag guest">guest</span>' : ''}${flags.join('')}</span>`;
}

// Under a table with flagged rows: what the flags mean, in words.
function flagsNote(rows) {
  const seen = [...new Set(rows.flatMap(flagsOf))];
  if (!seen.length) return '';
  const why = seen.map((f) => `<b>${escapeHtml(FLAG_WORDS[f][0])}</b>: ${escapeHtml(FLAG_WORDS[f][1])}`).join('; ');
  return `<p class="muted flags-note">Flagged rows keep their place until an operator looks at them. ${why}.</p>`;
}

// A standings table (rows as the server sends them; a rank another row shown shares is
// "3="). opts: {me, watch (bool: offer Watch), replay (bool: the rows' replay links),
// live (bool: a live leaderboard: each ended attempt's replay link, one's own included,
// and Watch on the others' attempts still being played)}.
export function standingsHtml(rows, opts = {}) {
  if (!rows.length) return '<p class="muted">No attempts yet.</p>';
  // the moves and time columns are what ranks a row after its cards home, not the
  // attempt's own moves and time (the results and the profile have those)
  const head = '<thead><tr><th>#</th><th>Player</th><th>Home</th>'
    + `<th><abbr title="${escapeHtml(REACHED_MOVES)}">Moves to reach</abbr></th><th><abbr title="${escapeHtml(REACHED_AT)}">Reached at</abbr></th><th>Status</th>`
    + `${opts.live || opts.replay ? '<th><span class="visually-hidden">Links</span></th>' : ''}</tr></thead>`;
  const body = rows.map((r) => {
    const me = opts.me && r.who === opts.me;
    let extra = '';
    if (opts.replay) {
      const ok = typeof r.replay === 'string' && /^\/[A-Za-z0-9/_-]*$/.test(r.replay);
      // (a route of the page, not the server's redirect: Back returns to these standings)
      extra = `<td>${ok ? `<a class="replay-link" href="#${escapeHtml(r.replay)}">replay</a>` : ''}</td>`;
    } else if (opts.live) {
      // an ended attempt's replay: the server shows it to nobody, its own player
      // included, before the challenge is final (not_yet); Watch is for an attempt still
      // being played (another's), an ended one offering its replay instead
      const code = typeof r.code === 'string' && /^[A-Z0-9]{6}$/.test(r.code) ? r.code : null;
      const playing = r.status === 'playing';
      const watch = me || !code || !opts.watch || !playing ? '' : `<button type="button" class="btn small" data-watch-attempt="${code}"`
        + ` aria-label="Watch ${escapeHtml(r.name)}'s attempt">Watch</button>`;
      const replay = code && !playing && opts.watch
        ? `<a class="replay-link" href="#/replay/${code}" aria-label="Replay ${escapeHtml(r.name)}'s attempt">replay</a>` : '';
      extra = `<td>${watch}${replay}</td>`;
    }
    const reached = reachedOf(r);
    return `<tr data-who="${escapeHtml(r.who)}"${me ? ' class="me" aria-current="true"' : ''}>`
      + `<td>${escapeHtml(r.rank)}${sharesPlace(rows, r) ? '=' : ''}</td><td>${nameCell(r)}${me ? ' <span class="muted">(you)</span>' : ''}</td>`
      + `<td>${escapeHtml(r.foundation)}/52</td><td>${escapeHtml(reached ? reached.moves : '–')}</td>`
      + `<td>${escapeHtml(reached ? clockText(reached.ms) : '–')}</td><td>${escapeHtml(statusWord(r.status))}</td>${extra}</tr>`;
  }).join('');
  return `<div class="table-scroll"><table class="leaderboard challenge-table">${head}<tbody>${body}</tbody></table></div>${flagsNote(rows)}`;
}

// Where a challenge ranks accounts only: its guests' attempts, listed apart with places
// of their own (live while the challenge is open, as the ranked rows are). opts: {me,
// live (the watched leaderboard of this deal, or null), closed, watch}
function guestsHtml(d, opts) {
  const live = opts.closed ? null : opts.live;
  const rows = live ? live.guest_rows : d.guest_rows || [];
  const table = opts.closed ? { me: opts.me, replay: true } : { me: opts.me, watch: opts.watch, live: true };
  let out = `<section class="guests-list" aria-labelledby="guests-${escapeHtml(d.index)}">`
    + `<h4 id="guests-${escapeHtml(d.index)}">Guests, listed apart</h4>`
    + `<p class="muted small guests-note">This challenge ranks accounts only: guests play and are listed here with places of their own. Claim a name to be ranked.</p>`
    + (rows.length ? standingsHtml(rows.slice(0, 100), table) : '<p class="muted">No guests.</p>');
  const mine = live && live.youGuests && opts.me && !rows.some((r) => r.who === opts.me) ? live.you || [] : [];
  if (mine.length) out += '<h4>Your guest place</h4>' + standingsHtml(mine, table);
  return out + '</section>';
}

function describe(settings) {
  if (!settings) return '';
  const bits = [`Draw ${settings.draw}`];
  if (settings.passes && settings.passes !== 'unlimited') bits.push(`${settings.passes} passes`);
  if (settings.undo) bits.push('undo');
  return bits.join(', ');
}

// The text of a `data-until` span of challengeHtml at server time `now`.
export function untilText(span, now) {
  return `${span.dataset.label} ${clockText(Number(span.dataset.until) - now)}`;
}

// A challenge's page, from `GET /api/challenges/ID` (+ the live board and checks).
// ctx: {now (server ms), me, live (the watched leaderboard or null), checks ({commitment:
// {ok, computed}}), mayWatch (deal index -> bool)}
export function challengeHtml(c, ctx) {
  const closed = c.phase === 'closed';
  const final = ctx.live && ctx.live.challenge === c.id ? ctx.live.final : ctx.now >= c.final_at;
  // the time left is a span the view fills each second (untilText), so that the page's
  // markup, and with it its links and buttons, changes only when the challenge does
  let when;
  if (c.phase === 'upcoming') when = `<span data-until="${escapeHtml(c.opens)}" data-label="Opens in"></span>`;
  else if (!closed) when = `<span data-until="${escapeHtml(c.closes)}" data-label="Open: closes in"></span>`;
  else when = escapeHtml(`Closed ${dayOf(c.closes - 1)} 24:00 UTC`);
  const day = dayOf(c.opens);
  let out = `<h2 id="daily-title">${escapeHtml(c.title)}</h2>`
    + `<p class="muted" id="challenge-when">${when} \u00b7 ${escapeHtml(minutes(c.time_limit))} limit per attempt`
    + `${c.daily ? ` \u00b7 <a href="${escapeHtml(archiveHref(day))}">all dailies of ${escapeHtml(day)}</a>` : ''}</p>`;
  for (const d of c.deals || []) {
    const live = ctx.live && ctx.live.challenge === c.id && ctx.live.deal === d.index ? ctx.live : null;
    const players = live ? live.players : d.players;
    const guests = live ? live.guests : d.guests;
    const apart = c.ranks === 'accounts' ? ` ranked \u00b7 ${escapeHtml(thousands(guests || 0))} guest${guests === 1 ? '' : 's'} listed apart` : '';
    out += `<section class="challenge-deal" data-deal="${escapeHtml(d.index)}">`;
    if ((c.deals || []).length > 1) out += `<h3>Deal ${escapeHtml(d.index + 1)}</h3>`;
    out += `<p class="muted">${escapeHtml(describe(d.settings))} \u00b7 <span class="players-count">${escapeHtml(playersText(players))}</span>${apart}`
      + ` \u00b7 <span class="board-state" data-final="${final ? 'true' : 'false'}">${final ? 'final' : closed ? 'attempts begun before the close may still change it' : 'live'}</span></p>`;
    if (closed && d.reveal) {
      const check = ctx.checks[d.commitment];
      const checkText = !check ? 'checking\u2026' : check.ok
        ? '\u2714 the commitment matches: the deal was fixed before the challenge opened'
        : '\u2718 the commitment does NOT match the revealed seed';
      out += '<div class="reveal"><h4>The deal</h4><dl>'
        + `<dt>Seed</dt><dd class="reveal-seed">${escapeHtml(d.reveal.seed)}</dd>`
        + `<dt>Deal</dt><dd>${escapeHtml(d.reveal.deal)}</dd>`
        + `<dt>Salt</dt><dd class="mono">${escapeHtml(d.reveal.salt)}</dd>`
        + `<dt>Commitment</dt><dd class="mono">${escapeHtml(d.commitment)}</dd>`
        + `<dt>Par</dt><dd class="par">${d.par != null ? `${escapeHtml(d.par)} moves, the shortest winning line the solver found` : 'none found'}</dd>`
        + `</dl><p class="check challenge-check" data-ok="${check ? String(check.ok) : ''}">${escapeHtml(checkText)}</p></div>`;
    } else if (d.commitment) {
      out += `<p class="muted small">Commitment <span class="mono">${escapeHtml(d.commitment)}</span>: the seed and salt are shown once the challenge is final (when the last attempt begun before the close has run out of time).</p>`;
    }
    if (closed) {
      out += `<h4>${final ? 'Final standings' : 'Standings'}</h4>`
        + standingsHtml(d.rows || [], { me: ctx.me, replay: true });
    } else {
      const rows = live ? live.rows : d.rows || [];
      const watch = ctx.mayWatch(d.index);
      out += `<h4>Live leaderboard${live ? '' : ' (connecting\u2026)'}</h4>`;
      if (!watch) out += '<p class="muted small watch-note">Others\u2019 attempts can be watched once the challenge is final: until then they are still playing this deal.</p>';
      out += standingsHtml(rows.slice(0, 100), { me: ctx.me, watch, live: true });
      const mine = live && !live.youGuests && ctx.me && !rows.some((r) => r.who === ctx.me) ? (live.you || []) : [];
      if (mine.length) {
        out += '<h4>Your place</h4>' + standingsHtml(mine, { me: ctx.me, watch, live: true });
      }
    }
    if (c.ranks === 'accounts') {
      out += guestsHtml(d, { me: ctx.me, live, closed, watch: ctx.mayWatch(d.index) });
    }
    out += '</section>';
  }
  return out;
}

// The archive of one day's dailies, from `GET /api/challenges?day=DAY`.
export function archiveHtml(day, data, today) {
  const list = (data && data.challenges) || [];
  const items = list.map((c) => {
    const players = (c.deals || []).reduce((n, d) => n + (d.players || 0), 0);
    return `<li><a href="${escapeHtml(challengeHref(c.id))}">${escapeHtml(c.title)}</a>`
      + ` <span class="muted">\u00b7 ${escapeHtml(c.phase)} \u00b7 ${escapeHtml(playersText(players))}</span></li>`;
  }).join('');
  const next = addDays(day, 1);
  return `<h2 id="daily-title">Dailies of ${escapeHtml(day)}</h2>`
    + '<nav class="buttons archive-nav" aria-label="Days">'
    + `<a class="btn small" id="archive-prev" href="${escapeHtml(archiveHref(addDays(day, -1)))}">&larr; ${escapeHtml(addDays(day, -1))}</a>`
    + (next <= today ? `<a class="btn small" id="archive-next" href="${escapeHtml(archiveHref(next))}">${escapeHtml(next)} &rarr;</a>` : '')
    + '</nav>'
    + (items ? `<ul class="archive-list">${items}</ul>` : '<p class="muted">No dailies that day.</p>');
}
