// Rendering: turns the state into the page, batched in requestAnimationFrame. It reads
// the state and writes the DOM; it sends nothing and decides nothing.

import { BoardView } from './board.js';
import { moveWords, pileLabel } from './cards.js';
import {
  archiveHtml, challengeHref, challengeHtml, challengeLink, clockText, dayOf, flagsOf, flagTag, minutes, nameCell, opensText,
  placeText, playersText, reachedText, shareGame, untilText, shareLine, statusWord, thousands, titleOf,
} from './daily.js';
import { escapeHtml, profileHref, profileHtml } from './profile.js';
import { bestHtml, statsHtml } from './stats.js';
import {
  arenaRace, attemptOf, challengeById, endsAt, finishOffered, gameOver, hintOffered, mayWatchAttempts, myKey, myLivePlace,
  names, roomPhase, seats, serverNow, sharesPlace, shownBoard, solvedHere, sprintOffered, standings, viewOf, yourRooms,
} from './state.js';

const $ = (sel, root = document) => root.querySelector(sel);

// m:ss.s, for results where tenths can separate players
export function formatPrecise(ms) {
  if (ms == null || ms < 0) ms = 0;
  const m = Math.floor(ms / 60000);
  const s = ((ms % 60000) / 1000).toFixed(1).padStart(4, '0');
  return `${m}:${s}`;
}

export function ordinal(n) {
  const tens = n % 100;
  const suffix = tens >= 11 && tens <= 13 ? 'th' : ({ 1: 'st', 2: 'nd', 3: 'rd' }[n % 10] || 'th');
  return `${n}${suffix}`;
}

export function formatMs(ms) {
  if (ms == null || ms < 0) ms = 0;
  const total = Math.floor(ms / 1000);
  const h = Math.floor(total / 3600);
  const m = Math.floor((total % 3600) / 60);
  const s = String(total % 60).padStart(2, '0');
  return h ? `${h}:${String(m).padStart(2, '0')}:${s}` : `${m}:${s}`;
}

const STATUS_WORDS = {
  playing: 'playing', won: 'won', stuck: 'stuck', resigned: 'resigned', out_of_time: 'out of time',
};

// The moves sent or queued and not yet answered, once they are late: the connection
// is down, or the oldest has waited over PENDING_MS (a quick answer shows nothing).
const PENDING_MS = 400;
export function pendingMoves(state) {
  const moves = [...(state.inflight ? [state.inflight] : []), ...state.queue];
  if (!moves.length) return [];
  const late = state.conn !== 'open' || !state.inflight || Date.now() - state.inflight.at > PENDING_MS;
  return late ? moves.map((m) => m.what) : [];
}

export function describeSettings(s, room) {
  if (!s) return '';
  const parts = [`Draw ${s.draw}`];
  parts.push(s.passes === 'unlimited' ? 'unlimited passes' : `${s.passes} pass${s.passes === 1 ? '' : 'es'}`);
  parts.push(s.empty === 'kings' ? 'kings on empty' : 'any card on empty');
  if (!s.foundation_to_column) parts.push('no foundation to column');
  if (s.scoring !== 'none') parts.push(`${s.scoring}${s.timed ? ' timed' : ''} scoring`);
  if (s.undo) parts.push('undo on');
  if (room && room.time_limit) parts.push(`${formatMs(room.time_limit * 1000)} limit`);
  if (room && room.rank_by === 'score') parts.push('ranked by score');
  if (room && room.spectator_view === 'outline') parts.push('spectators see outlines while it runs: boards at the end');
  else if (room && room.spectator_delay) parts.push(`spectators ${room.spectator_delay} s behind`);
  return parts.join(' \u00b7 ');
}

function text(node, value) {
  const s = String(value);
  if (node && node.textContent !== s) node.textContent = s;
}

// The server's hint in words, its cards named from the board it was asked on: "Hint:
// Jack of hearts to column 1 · a winning line of 87 moves starts here".
export function describeHint(hint, board) {
  if (!hint) return '';
  const what = hint.action ? (hint.action === 'draw' ? 'draw from the stock' : 'turn the waste over')
    : moveWords(hint.move, board, null) || `move from ${pileLabel(hint.from)} to ${pileLabel(hint.to)}`;
  return `Hint: ${what} \u00b7 a winning line of ${hint.line} moves starts here`;
}

// A player's name as lists and leaderboards show it: a link to their profile when the
// seat has a player key (`who`), and a "guest" tag for a guest's seat.
export function playerName(player, suffix = '') {
  const span = document.createElement('span');
  span.className = 'pname';
  const name = player ? player.name : '?';
  let label;
  if (player && player.who) {
    label = document.createElement('a');
    label.href = profileHref(player.who);
    label.className = 'profile-link';
    label.textContent = name;
  } else {
    label = document.createTextNode(name);
  }
  span.append(label);
  if (player && player.guest) {
    const tag = document.createElement('span');
    tag.className = 'tag guest';
    tag.textContent = 'guest';
    span.append(' ', tag);
  }
  if (player && player.sprint) { // an arena race's sprinter: half the time limit
    const tag = document.createElement('span');
    tag.className = 'tag sprint';
    tag.textContent = 'sprint';
    tag.title = 'Sprinting: half the time, +1 point for a win';
    span.append(' ', tag);
  }
  if (suffix) span.append(suffix); // after the tag, as the challenge pages write it
  return span;
}

// A challenge leaderboard row's flags after its name, in words (as the challenge pages
// write them: daily.js).
function withFlags(span, row) {
  for (const [words, why] of flagsOf(row).map(flagTag)) {
    const tag = document.createElement('span');
    tag.className = 'tag flag';
    tag.title = why;
    tag.textContent = words;
    span.append(' ', tag);
  }
  return span;
}

// The player's place in the race, "2/3" ("2=/3" shared), from the leaderboard the
// standings show (an attempt's: the challenge's live leaderboard); null alone or unknown.
function placeOf(state) {
  if (state.role !== 'player') return null;
  if (attemptOf(state.room)) {
    const place = myLivePlace(state); // (a guest's where accounts are ranked: on the guests' list)
    return place ? `${thousands(place.row.rank)}/${thousands(place.of)}` : null;
  }
  const rows = standings(state);
  const mine = rows.find((r) => r.player === state.player);
  if (rows.length < 2 || !mine) return null;
  return `${mine.rank}${sharesPlace(rows, mine) ? '=' : ''}/${rows.length}`;
}

// Where the focus goes when a screen (or a page over it) opens, so that a keyboard
// player starts there and not at the header: its heading, the race's board, a page's
// own region (a profile's or a challenge's heading is redrawn as it loads). Each is
// focusable by script only (tabindex="-1"). Focus still on something shown (a field
// being typed in, a header button) stays where it is.
const SCREEN_FOCUS = {
  lobby: '#lobby-title', queue: '#queue-title', room: '#room-title', race: '#my-board',
  results: '#results-title', watch: '#watch-title', arena: '#arena-title',
  'route:profile': '#profile-view', 'route:daily': '#daily-view', 'route:replay': '#replay-title',
  'route:arena': '#arena-view',
};

function focusScreen(screen) {
  const active = document.activeElement;
  if (active && active !== document.body && !active.closest('[hidden]')) return;
  const target = $(SCREEN_FOCUS[screen]);
  if (target) target.focus({ preventScroll: true });
}

const ANALYSIS_WORDS = {
  won: 'won', win: 'could still have won', lose: 'no win was left', unknown: 'not decided',
};
const SOLVED_WORDS = 'finished by the solver'; // the solver's win, never the player's

// A status as the page says it: the player's game the solver won is not called won.
// The results' ranking note and the "Reached at" column's title, in the room's words
// ("race", or "attempt" in a challenge's attempt).
const rankingNote = (game) => `Ranked by cards home, then the moves and the ${game} time ("reached at") when that count was last reached; a resigned or stuck player keeps their place. "2=": a shared place.`;
const reachedTitle = (game) => `${game[0].toUpperCase()}${game.slice(1)} time when the cards-home count last reached its value`;

function statusWords(state, player, status) {
  if (status === 'won' && player === state.player && solvedHere(state)) return SOLVED_WORDS;
  return STATUS_WORDS[status] || status;
}

// ---- arenas ----------------------------------------------------------------------------
const FIRE = '\u{1F525}'; // on fire: the next race's points are doubled
const ARENAS_UPCOMING = 3; // the lobby lists this many arenas not started yet
const pointsText = (n) => `${n} point${n === 1 ? '' : 's'}`;

// A time in the player's own zone ("18:00"; another day's with its date).
export function localTime(ms) {
  const d = new Date(ms);
  const time = d.toLocaleTimeString([], { hour: '2-digit', minute: '2-digit' });
  return d.toDateString() === new Date().toDateString() ? time
    : `${d.toLocaleDateString([], { month: 'short', day: 'numeric' })} ${time}`;
}

// An arena's when and what: "18:00–18:30 · 2 a race · 1:00 races · Draw 1 · …"
export function arenaWhat(a) {
  return `${localTime(a.starts)}\u2013${localTime(a.ends)} \u00b7 ${a.size} a race \u00b7 ${formatMs(a.time_limit * 1000)} races`
    + ` \u00b7 ${describeSettings(a.settings)}`;
}

// Where an arena is at (server time `now`): "starts in 4:10", "running · 12:00 left", "over".
export function arenaPhase(a, now) {
  if (now < a.starts) return `starts in ${clockText(a.starts - now)}`;
  if (now < a.ends) return `running \u00b7 ${clockText(a.ends - now)} left`;
  return 'over';
}

// An arena's table (`arena` frames' rows, best first; a rank shared reads "3="): the
// player's own row marked. Compact (beside a race): rank, player, points, races, streak.
// Final (the arena's result): no "Now" column.
export function arenaTableHtml(rows, me, compact = false, final = false) {
  if (!rows.length) return '<p class="muted">Nobody has joined yet.</p>';
  const head = compact ? ['#', 'Player', 'Pts', 'Races', 'Streak']
    : ['#', 'Player', 'Points', 'Races', 'Wins', 'Streak', ...(final ? [] : ['Now'])];
  const body = rows.map((r) => {
    const mine = me && r.player === me;
    const fire = r.fire ? ` <span class="fire" role="img" aria-label="on fire" title="On fire: the next race's points are doubled">${FIRE}</span>` : '';
    const now = r.racing ? 'racing' : r.paused ? 'paused' : 'waiting';
    const cells = [`${escapeHtml(r.rank)}${sharesPlace(rows, r) ? '=' : ''}`,
      `${nameCell({ ...r, who: r.player })}${mine && !compact ? ' <span class="muted">(you)</span>' : ''}`,
      escapeHtml(r.points), escapeHtml(r.races)];
    if (!compact) cells.push(escapeHtml(r.wins));
    cells.push(`${escapeHtml(r.streak)}${fire}`);
    if (!compact && !final) cells.push(`<span class="arena-now" data-now="${now}">${now}</span>`);
    return `<tr data-player="${escapeHtml(r.player)}"${mine ? ' class="me" aria-current="true"' : ''}>`
      + `${cells.map((c) => `<td>${c}</td>`).join('')}</tr>`;
  }).join('');
  return `<div class="table-scroll"><table class="leaderboard arena-board${compact ? ' compact' : ''}">`
    + `<thead><tr>${head.map((h) => `<th>${h}</th>`).join('')}</tr></thead><tbody>${body}</tbody></table></div>`;
}

// A final arena's podium (docs/rules.md, "Arena tournaments", "The results"): the rows of
// the table's first three places among the players who raced (a place shared shows each
// who shares it), as the server's `podium` is.
export function podiumOf(rows) {
  return rows.filter((r) => r.rank <= 3 && r.races > 0);
}

const MEDALS = ['\u{1F947}', '\u{1F948}', '\u{1F949}'];

// The podium's rows as a list: medal, place, name (profile link, tags), points and wins.
export function podiumHtml(podium) {
  return '<h3>Podium</h3><ol class="arena-podium">'
    + podium.map((r) => `<li data-rank="${escapeHtml(r.rank)}" data-player="${escapeHtml(r.player)}"><span class="medal" aria-hidden="true">${MEDALS[r.rank - 1] || ''}</span>`
      + `<span class="podium-place">${escapeHtml(ordinal(r.rank))}</span> ${nameCell({ ...r, who: r.player })}`
      + ` <span class="muted">${escapeHtml(r.points)} point${r.points === 1 ? '' : 's'}, ${escapeHtml(r.wins)} win${r.wins === 1 ? '' : 's'}</span></li>`).join('')
    + '</ol>';
}

export class Renderer {
  constructor(store) {
    this.store = store;
    this.pending = false;
    this.myBoard = new BoardView($('#my-board'), {
      interactive: true,
      animate: true,
      maxCard: 118,
      fitHeight: (tableau) => Math.max(240, window.innerHeight - tableau.getBoundingClientRect().top
        + window.scrollY - 12),
    });
    this.large = new BoardView($('#follow-board'), { maxCard: 110, animate: true, markLast: true });
    this.grids = new Map(); // container -> Map(player -> BoardView)
    store.subscribe(() => this.schedule());
    this.tick = setInterval(() => this.schedule(), 250);
  }

  schedule() {
    if (this.pending) return;
    this.pending = true;
    requestAnimationFrame(() => {
      this.pending = false;
      this.frame();
    });
  }

  frame() {
    const state = this.store.state;
    const view = viewOf(state);
    document.body.dataset.view = view;
    document.body.dataset.conn = state.conn;
    const routed = Boolean(state.profile || state.daily || state.replay || state.arenaPage);
    document.body.dataset.route = state.replay ? 'replay' : state.profile ? 'profile' : state.daily ? 'daily'
      : state.arenaPage ? 'arena' : ''; // (the arena pages draw themselves: arenapage.js)
    // a new screen starts at its top (a lobby scrolled down to Practice left the race's
    // stock above the top of a landscape phone)
    const screen = routed ? `route:${document.body.dataset.route}` : view;
    const changed = this.lastScreen !== undefined && screen !== this.lastScreen;
    // a page over the screen opened by its address takes the focus too (the page's first
    // screen otherwise keeps the browser's own start)
    const landed = this.lastScreen === undefined && routed;
    if (changed) window.scrollTo(0, 0);
    this.lastScreen = screen;
    for (const screen of document.querySelectorAll('.screen')) {
      screen.hidden = routed || screen.id !== `screen-${view}`;
    }
    this.connection(state);
    this.profile(state);
    this.daily(state);
    if (changed || landed) focusScreen(screen);
    if (routed) return;
    if (view === 'lobby') this.lobby(state);
    if (view === 'room') this.waiting(state);
    if (view === 'race') this.race(state);
    if (view === 'results') this.results(state);
    if (view === 'watch') this.watch(state);
    if (view === 'arena') this.arenaScreen(state);
  }

  connection(state) {
    const banner = $('#offline');
    const off = state.conn !== 'open';
    banner.hidden = !off || !state.everConnected;
    // the lag: the last ping's round trip, as lichess shows it
    const lag = state.conn === 'open' && typeof state.lag === 'number' ? state.lag : null;
    const words = state.conn === 'open' ? (lag == null ? 'online' : `online \u00b7 ${lag} ms`)
      // between attempts too: the client tries again until it is back
      : state.everConnected ? 'reconnecting\u2026' : state.conn === 'connecting' ? 'connecting\u2026' : 'offline';
    text($('#conn-state'), words);
    $('#conn-state').dataset.state = state.conn;
    $('#conn-state').dataset.lag = lag == null ? '' : lag < 150 ? 'good' : lag < 400 ? 'fair' : 'poor';
    $('#conn-state').title = lag == null ? '' : `Round trip to the server: ${lag} ms`;
  }

  // The #/players/WHO view, over every screen while the address names it.
  profile(state) {
    const box = $('#profile-view');
    const p = state.profile;
    box.hidden = !p;
    if (!p) return;
    box.dataset.state = p.status;
    const body = $('#profile-body');
    const key = JSON.stringify(p);
    if (body.dataset.key === key) return;
    body.dataset.key = key;
    if (p.status === 'ok') body.innerHTML = p.page === 'stats' ? statsHtml(p.data) : profileHtml(p.data);
    else if (p.status === 'missing' && p.page === 'stats') {
      body.innerHTML = '<h2 id="profile-title">No statistics yet</h2>'
        + '<p class="muted">Nothing is kept for this player yet: every game finished counts, practice too.</p>';
    } else if (p.status === 'missing') {
      body.innerHTML = '<h2 id="profile-title">No such player</h2>'
        + `<p class="muted">Nobody here has the player key <span class="mono">${escapeHtml(p.who)}</span>.</p>`;
    } else if (p.status === 'failed') {
      body.innerHTML = '<h2 id="profile-title">Profile unavailable</h2>'
        + `<p>The profile could not be loaded (${escapeHtml(p.error)}).</p>`
        + '<button type="button" class="btn" id="profile-retry">Try again</button>';
    } else {
      body.innerHTML = `<h2 id="profile-title">Loading the ${p.page === 'stats' ? 'statistics' : 'profile'}\u2026</h2>`;
    }
  }

  yourRooms(state) {
    const rooms = yourRooms(state);
    $('#your-rooms-box').hidden = rooms.length === 0;
    const list = $('#your-rooms');
    const key = JSON.stringify(rooms);
    if (list.dataset.key === key) return;
    list.dataset.key = key;
    list.replaceChildren();
    for (const room of rooms) {
      const li = document.createElement('li');
      li.dataset.code = room.code;
      const label = document.createElement('span');
      label.className = 'live-label';
      label.append('You are in a race: ');
      const code = document.createElement('strong');
      code.className = 'code';
      code.textContent = room.code;
      label.append(code, ` (${room.phase === 'waiting' ? 'waiting to start' : room.phase})`);
      const rejoin = document.createElement('button');
      rejoin.type = 'button';
      rejoin.className = 'btn small primary';
      rejoin.dataset.rejoin = room.code;
      rejoin.textContent = 'Rejoin';
      rejoin.setAttribute('aria-label', `Rejoin race ${room.code}`);
      li.append(label, rejoin);
      list.append(li);
    }
  }

  // Today's challenges on the home screen: each with this player's state (Play, with the
  // one-attempt notice first; Continue; done with rank and result) and the time left.
  dailyBox(state) {
    const now = serverNow(state);
    const open = (state.challenges || []).filter((c) => c.phase === 'open');
    $('#daily-box').hidden = open.length === 0;
    const dailies = open.filter((c) => c.daily);
    const closes = dailies.length ? Math.min(...dailies.map((c) => c.closes)) : null;
    text($('#daily-left'), closes ? `today's dailies close in ${clockText(closes - now)}` : '');
    const list = $('#daily-list');
    for (const left of list.querySelectorAll('[data-closes]')) {
      text(left, `closes in ${clockText(Number(left.dataset.closes) - now)}`);
    }
    const key = JSON.stringify([open, state.confirm, state.attemptRefused]);
    if (list.dataset.key === key) return;
    list.dataset.key = key;
    list.innerHTML = open.map((c) => (c.deals || []).map((d) => {
      const ref = `${c.id}/${d.index}`;
      const label = escapeHtml(c.deals.length > 1 ? `${c.title}, deal ${d.index + 1}` : c.title);
      const you = d.you;
      const limit = escapeHtml(minutes(c.time_limit));
      let what;
      const refused = state.attemptRefused[ref];
      if (!you && refused) {
        // (the address's attempts at the deal are made: it does not open again)
        what = `<span class="daily-state" data-state="refused">Not played: ${escapeHtml(refused)}</span>`;
      } else if (!you) {
        what = state.confirm === ref
          ? `<div class="attempt-confirm" role="group" aria-label="Start your attempt at ${label}">`
            + `<p><strong>One ranked attempt.</strong> The ${limit} clock starts as soon as the deal is shown and does not stop, even if you leave. It cannot be restarted.</p>`
            + `<div class="buttons"><button type="button" class="btn primary" data-attempt-go="${escapeHtml(ref)}">Start my attempt</button>`
            + '<button type="button" class="btn" data-attempt-cancel>Cancel</button></div></div>'
          : `<span class="daily-state" data-state="new">Not played · one ranked attempt, ${limit} clock from the deal's first showing</span>`
            + `<button type="button" class="btn primary" data-attempt="${escapeHtml(ref)}" aria-label="Play ${label}">Play</button>`;
      } else if (you.status === 'playing') {
        what = '<span class="daily-state" data-state="playing">In progress</span>'
          + `<button type="button" class="btn primary" data-continue="${escapeHtml(ref)}" aria-label="Continue ${label}">Continue</button>`;
      } else {
        // a guest where accounts are ranked has a place on the guests' list
        const place = escapeHtml(placeText(you.rank, you.guests ? d.guests : d.players, you.guests));
        what = `<span class="daily-state" data-state="done">Done: ${place}`
          + ` · ${escapeHtml(you.foundation ?? 0)}/52 · ${escapeHtml(statusWord(you.status))}</span>`
          + `<button type="button" class="btn small" data-practice="${escapeHtml(ref)}" aria-label="Practice ${label}">Practice this deal</button>`;
      }
      return `<li data-challenge="${escapeHtml(c.id)}" data-deal="${escapeHtml(d.index)}">`
        + `<div class="daily-title"><strong>${label}</strong> <span class="muted small">${escapeHtml(playersText(d.players))}`
        + `${c.daily ? '' : ` · <span data-closes="${escapeHtml(c.closes)}"></span>`}</span></div>`
        + `<div class="daily-actions">${what}<a class="btn small" href="${escapeHtml(challengeHref(c.id))}" aria-label="Leaderboard of ${label}">Leaderboard</a></div></li>`;
    }).join('')).join('');
  }

  // The #/challenges/ID and #/archive/DAY views, over every screen.
  daily(state) {
    const box = $('#daily-view');
    const d = state.daily;
    box.hidden = !d || Boolean(state.profile);
    if (!d || state.profile) return;
    box.dataset.state = d.status;
    const notice = $('#daily-notice');
    notice.hidden = !d.notice;
    text(notice, d.notice || '');
    const now = serverNow(state);
    let html;
    if (d.status === 'loading') html = '<h2 id="daily-title">Loading…</h2>';
    else if (d.status === 'missing') html = '<h2 id="daily-title">No such challenge</h2>';
    else if (d.status === 'failed') {
      html = '<h2 id="daily-title">Unavailable</h2>'
        + `<p>It could not be loaded (${escapeHtml(d.error)}).</p><button type="button" class="btn" id="daily-retry">Try again</button>`;
    } else if (d.kind === 'archive') {
      html = archiveHtml(d.day, d.data, dayOf(now));
    } else {
      html = challengeHtml(d.data, {
        now, me: myKey(state), live: state.live, checks: d.checks || {},
        mayWatch: (deal) => mayWatchAttempts(state, d.data.id, deal),
      });
    }
    const body = $('#daily-body');
    if (body.krHtml !== html) {
      body.krHtml = html;
      body.innerHTML = html;
    }
    for (const span of body.querySelectorAll('[data-until]')) text(span, untilText(span, now));
  }

  lobby(state) {
    // Below the name, the lobby shows once its first answers are in (the counts, today's
    // challenges, the arenas), or when they are late (lobby.js): each fills a box above
    // the play forms, and a box appearing moved a button away from a pointer on its way.
    const busy = !(state.counts && state.challenges && state.arenas) && !state.lobbyLate;
    $('#screen-lobby').setAttribute('aria-busy', String(busy));
    $('#invite-box').hidden = !state.invite;
    if (state.invite) text($('#invite-code'), state.invite);
    this.yourRooms(state);
    this.dailyBox(state);
    this.arenaList(state);
    const counts = state.counts;
    $('#lobby-counts').hidden = !counts || typeof counts.online !== 'number';
    if (counts && typeof counts.online === 'number') {
      text($('#count-online'), `${thousands(counts.online)} online`);
      text($('#count-racing'), `${thousands(counts.racing)} racing now`);
    }
    const list = $('#live-rooms');
    const rooms = state.rooms || [];
    const key = JSON.stringify(rooms);
    if (list.dataset.key === key) return;
    list.dataset.key = key;
    list.replaceChildren();
    $('#no-live').hidden = rooms.length > 0;
    for (const room of rooms) {
      const li = document.createElement('li');
      const label = document.createElement('span');
      label.className = 'live-label';
      label.append(`${room.code} \u00b7 ${room.phase} \u00b7 `);
      if (!room.players.length) label.append('nobody yet');
      room.players.forEach((p, i) => label.append(...(i ? [', '] : []), playerName(p)));
      const small = document.createElement('small');
      small.textContent = describeSettings(room.settings, room);
      label.append(document.createElement('br'), small);
      const watch = document.createElement('button');
      watch.type = 'button';
      watch.className = 'btn small';
      watch.dataset.watch = room.code;
      watch.textContent = 'Watch';
      watch.setAttribute('aria-label', `Watch race ${room.code}`);
      li.append(label, watch);
      if (room.phase === 'waiting' && room.players.length < room.capacity) {
        const join = document.createElement('button');
        join.type = 'button';
        join.className = 'btn small primary';
        join.dataset.join = room.code;
        join.textContent = 'Join';
        join.setAttribute('aria-label', `Join race ${room.code}`);
        li.append(join);
      }
      list.append(li);
    }
  }

  // The lobby's arenas (the server's `arenas` list): when, what, how many, Join.
  arenaList(state) {
    // those running, then the next few to start (an hourly schedule lists six hours' worth)
    const listed = (state.arenas || []).filter((a) => a.phase !== 'over');
    const arenas = [...listed.filter((a) => a.phase === 'running'),
      ...listed.filter((a) => a.phase === 'upcoming').sort((x, y) => x.starts - y.starts).slice(0, ARENAS_UPCOMING)];
    $('#arena-list').hidden = arenas.length === 0; // (the box holds Create an arena too)
    $('#no-arenas').hidden = arenas.length > 0;
    const now = serverNow(state);
    const list = $('#arena-list');
    for (const span of list.querySelectorAll('[data-arena-phase]')) {
      const a = arenas.find((x) => x.id === span.dataset.arenaPhase);
      if (a) text(span, arenaPhase(a, now));
    }
    const key = JSON.stringify(arenas);
    if (list.dataset.key === key) return;
    list.dataset.key = key;
    list.innerHTML = arenas.map((a) => `<li data-arena="${escapeHtml(a.id)}"><span class="live-label">`
      + `<strong>${escapeHtml(a.title)}</strong> \u00b7 <span data-arena-phase="${escapeHtml(a.id)}">${escapeHtml(arenaPhase(a, now))}</span>`
      + ` \u00b7 ${escapeHtml(playersText(a.players))}<br><small>${escapeHtml(arenaWhat(a))}</small></span>`
      + `<button type="button" class="btn small" data-arena-watch="${escapeHtml(a.id)}" aria-label="Watch ${escapeHtml(a.title)}">Watch</button>`
      + `<button type="button" class="btn small primary" data-arena-join="${escapeHtml(a.id)}" aria-label="Join ${escapeHtml(a.title)}">Join</button></li>`).join('');
  }

  // The arena this page plays in (between its races) or watches: where it is at, the
  // player's line, their last race, Pause / Resume (Join, for one who only watches),
  // Leave, its top race to watch, the table and the player's place below it.
  arenaScreen(state) {
    const frame = state.arena;
    const a = frame && frame.arena;
    const now = serverNow(state);
    text($('#arena-title'), a ? a.title : 'Arena');
    text($('#arena-sub'), a ? `${arenaWhat(a)} \u00b7 ${arenaPhase(a, now)}` : 'Joining\u2026');
    const room = arenaRace(state) ? state.room : null;
    const over = a && now >= a.ends;
    const final = Boolean(a && a.final);
    const you = frame && frame.you;
    const words = !a ? 'Joining the arena\u2026'
      : final ? 'The arena is over: final results.'
      : over ? 'The arena is over: its last races still count.'
        : state.arenaPaused && !you ? 'Watching: join to race in it.'
        : state.arenaPaused ? 'Paused: you will not be paired until you resume. Your points stay.'
          : now < a.starts ? `You are in: the races begin at ${localTime(a.starts)}.`
            : room && roomPhase(state) !== 'finished' ? 'Your race is over: waiting for the others in it to finish\u2026'
              : !a.pairing ? 'No more races start: too little of the arena is left.'
                : 'Waiting for the next race\u2026';
    text($('#arena-state'), words);
    const mine = you && [...frame.table, ...frame.near].find((r) => r.player === you.player);
    text($('#arena-you'), you ? `You: ${mine ? `${ordinal(mine.rank)} \u00b7 ` : ''}${pointsText(you.points)}`
      + (final ? '' : ` \u00b7 streak ${you.streak}${you.fire ? ` ${FIRE} next race's points doubled` : ''}`) : '');
    // the race just played, from its room (kept until the next race's)
    const rows = room ? standings(state) : [];
    const me = rows.find((r) => r.player === state.player);
    $('#arena-last').hidden = !me;
    if (me) {
      const st = state.board && state.board.status !== 'playing' ? ` (${STATUS_WORDS[state.board.status] || state.board.status})` : '';
      text($('#arena-last'), `Last race ${room.code}: ${roomPhase(state) === 'finished' ? '' : 'so far '}`
        + `${ordinal(me.rank)}${sharesPlace(rows, me) ? '=' : ''} of ${rows.length}${st}`);
    }
    this.best($('#arena-best'), state, Boolean(room) && roomPhase(state) === 'finished');
    const pause = $('#btn-arena-pause');
    text(pause, !state.arenaPaused ? 'Pause' : you ? 'Resume' : 'Join');
    pause.hidden = Boolean(over);
    // the top race (the arena's TV), unless it is the player's own
    const top = frame && frame.top;
    $('#btn-arena-tv').hidden = !top || top === (you && you.racing);
    // once final: the podium, and the arena's page (every race, with its replay) above
    // the final table
    const result = $('#arena-final');
    result.hidden = !final;
    const podium = final ? podiumOf(frame.table) : [];
    const done = !final ? '' : (podium.length ? podiumHtml(podium) : '<p class="muted">Nobody raced in it.</p>')
      + `<p><a class="btn small" id="arena-results" href="#/arena/${encodeURIComponent(a.id)}">Every race and its replay</a></p>`
      + '<h3>Final table</h3>';
    if (result.krHtml !== done) {
      result.krHtml = done;
      result.innerHTML = done;
    }
    this.arenaTable($('#arena-table'), state, false);
    const near = frame ? frame.near : [];
    const place = $('#arena-near');
    place.hidden = near.length === 0;
    const html = near.length ? `<h3>Your place</h3>${arenaTableHtml(near, you && you.player)}` : '';
    if (place.krHtml !== html) {
      place.krHtml = html;
      place.innerHTML = html;
    }
  }

  arenaTable(root, state, compact) {
    const frame = state.arena;
    const final = Boolean(frame && frame.arena.final);
    const html = frame ? arenaTableHtml(frame.table, frame.you ? frame.you.player : myKey(state), compact, final)
      : '<p class="muted">Loading the table\u2026</p>';
    if (root.krHtml !== html) {
      root.krHtml = html;
      root.innerHTML = html;
    }
  }

  waiting(state) {
    const room = state.room;
    text($('#room-code'), room.code);
    const link = `${location.origin}${location.pathname}?join=${room.code}`;
    const input = $('#room-link');
    if (input.value !== link) input.value = link;
    text($('#room-settings'), describeSettings(room.settings, room));
    const list = $('#room-players');
    const key = JSON.stringify([room.players, room.host, state.player]);
    if (list.dataset.key !== key) {
      list.dataset.key = key;
      list.replaceChildren();
      for (const p of room.players) {
        const li = document.createElement('li');
        li.dataset.player = p.id;
        li.append(playerName(p, p.id === state.player ? ' (you)' : ''), p.id === room.host ? ' \u2605 host' : '');
        const badge = document.createElement('span');
        badge.className = `badge ${p.ready ? 'ok' : ''}`;
        badge.textContent = p.ready ? 'ready' : 'not ready';
        li.append(' ', badge);
        list.append(li);
      }
      for (let i = room.players.length; i < room.capacity; i += 1) {
        const li = document.createElement('li');
        li.className = 'open-seat';
        li.textContent = 'open seat';
        list.append(li);
      }
    }
    const me = room.players.find((p) => p.id === state.player);
    const ready = $('#btn-ready');
    text(ready, me && me.ready ? 'Not ready' : 'Ready');
    ready.setAttribute('aria-pressed', String(Boolean(me && me.ready)));
    $('#btn-start').hidden = room.host !== state.player;
    $('#btn-start').disabled = room.players.length < 1;
  }

  race(state) {
    const room = state.room;
    const now = serverNow(state); // the clocks only: the phase is the server's
    const phase = roomPhase(state);
    const board = shownBoard(state);
    const countdown = $('#countdown');
    if (phase === 'countdown') {
      countdown.hidden = false;
      text($('#countdown-n'), Math.max(1, Math.ceil((room.start_at - now) / 1000)));
    } else {
      countdown.hidden = true;
    }
    const pending = pendingMoves(state);
    // the hint on the cards: marked on the board it was asked on (not on the solver's)
    const hint = state.hint && !state.playback ? state.hint : null;
    this.myBoard.update(board, {
      selection: state.selection, inflight: state.inflightDrag || null,
      pending: pending.length ? JSON.stringify(pending) : '',
      hint: hint ? JSON.stringify({ from: hint.from, to: hint.to, count: hint.count, action: hint.action }) : '',
    });
    // the win moment: the cards home leap in turn (CSS; still with reduced motion), for a
    // game the player won, not one the solver finished
    $('#my-board').classList.toggle('celebrate', Boolean(board && board.status === 'won' && !solvedHere(state)));
    const note = $('#pending-note');
    note.hidden = !pending.length;
    if (pending.length) {
      text(note, `${pending.length} move${pending.length === 1 ? '' : 's'} waiting for the server`
        + (state.conn === 'open' ? '\u2026' : ': sent again once reconnected'));
    }
    // the game's time: running while the race runs, and from the player's win on (the
    // board's reached_ms: when the 52nd card went home) the win's, so also while the
    // solver's line is shown, whose room is finished by then
    // (a sprinter's clock runs to their own time limit)
    const end = endsAt(state);
    const until = end != null ? Math.min(now, end) : now;
    const won = state.board && state.board.status === 'won' ? state.board : null;
    const elapsed = won ? won.reached_ms : phase === 'racing' && room.start_at ? until - room.start_at : 0;
    text($('#stat-moves'), board ? board.moves : 0);
    let clock = formatMs(elapsed);
    if (end) clock += ` / ${formatMs(end - room.start_at)}`;
    text($('#stat-time'), clock);
    const scored = board && board.score != null;
    $('#stat-score-box').hidden = !scored;
    if (scored) text($('#stat-score'), board.score);
    text($('#stat-found'), board ? board.foundation : 0);
    const place = placeOf(state);
    $('#stat-place-box').hidden = !place;
    if (place) text($('#stat-place'), place);
    const solving = Boolean(state.finishing || state.playback); // the solver's line: input off
    $('#btn-auto').hidden = solving || !(board && board.autocomplete);
    $('#btn-undo').hidden = !(room.settings && room.settings.undo);
    $('#btn-undo').disabled = solving || !(board && board.can_undo);
    $('#btn-hint').hidden = !hintOffered(state);
    $('#btn-finish').hidden = !finishOffered(state);
    // the server takes a resignation only of a game still being played, once the race has
    // started (not in the countdown); off, the tooltip says why
    const resign = $('#btn-resign');
    // a challenge's attempt is called an attempt, not a race, in the screen's words
    const attempt = attemptOf(room);
    const game = attempt ? 'attempt' : 'race';
    const why = gameOver(state) ? 'Your game is over'
      : solving ? 'The solver is finishing your game'
        : phase !== 'racing' ? `You can resign once the ${game} has started` : '';
    resign.disabled = Boolean(why);
    resign.title = why;
    // The solver's line: a line of its own above the board, kept (empty) through a
    // practice game, whose hints show there (a phone's: over the board's foot, css): a
    // hint or the solver's line never moves the board.
    const hintBox = $('#hint-box');
    const play = state.playback;
    const hintWords = describeHint(hint, board);
    const hintText = play ? `The solver plays its line: move ${play.done} of ${play.total}`
      : state.finishing ? `Finishing: the solver plays ${state.finishing.moves} moves\u2026` : hintWords;
    $('#hint-row').hidden = !(room.practice || state.canHint || state.finishing || play || hint);
    $('#btn-skip-finish').hidden = !play;
    hintBox.hidden = !hintText;
    hintBox.title = hintText; // (cut short on a narrow screen: the whole of it here)
    // the playback's counter changes several times a second: said once, not each step;
    // a hint is said in the live region (race.js: a live region shown with its words in
    // it is not always read)
    hintBox.setAttribute('aria-live', play || hintText === hintWords ? 'off' : 'polite');
    text(hintBox, hintText);
    const status = $('#race-status');
    const st = board && board.status !== 'playing' ? board.status : null;
    status.hidden = !st;
    if (st) text(status, st === 'stuck' ? 'Stuck: no move can change this position. Undo or resign.' : `Your game: ${statusWords(state, state.player, st)}`);
    text($('#race-settings'), `${room.code}${room.practice ? ' \u00b7 practice' : ''} \u00b7 ${describeSettings(room.settings, room)}`);
    $('#race-sprint').hidden = !sprintOffered(state);
    const line = $('#race-challenge');
    const arena = arenaRace(state) ? state.arena : null;
    line.hidden = !attempt && !arena;
    line.classList.toggle('next-race', Boolean(arena) && Date.now() < state.arenaNext);
    $('#race-arena').hidden = !arena;
    if (arena) {
      // the arena's race: its title and the player's points, "Next race" as it begins
      const you = arena.you;
      const next = Date.now() < state.arenaNext;
      text(line, `${next ? 'Next race! ' : ''}${arena.arena.title}${you ? ` · you: ${pointsText(you.points)}${you.fire ? ` ${FIRE}` : ''}` : ''}`);
      this.arenaTable($('#race-arena .arena-table'), state, true);
    }
    $('#race-side').setAttribute('aria-label', attempt ? 'Attempt standings' : 'Race standings');
    $('#race-standings').hidden = Boolean(attempt);
    $('#race-live').hidden = !attempt;
    if (attempt) {
      const title = titleOf(attempt.id, challengeById(state, attempt.id));
      text(line, `${title} \u00b7 your one ranked attempt \u00b7 ${minutes(room.time_limit)} limit`);
      this.liveBoard($('#race-live'), state, attempt);
    } else {
      this.standings($('#race-standings'), state);
    }
    this.rivals($('#race-rivals'), state, attempt);
  }

  // The phone's strip of the other racers over the board (app.css shows it on narrow
  // screens only, where the standings are under the tableau): each one's place, name and
  // cards home, one line whatever they are, so the board below it never moves.
  rivals(root, state, attempt) {
    const rows = attempt || state.role !== 'player' ? [] : standings(state);
    const others = rows.filter((r) => r.player !== state.player);
    root.hidden = others.length === 0;
    const key = JSON.stringify(others.map((r) => [r.player, r.rank, r.name, r.foundation, r.status]));
    if (root.dataset.key === key) return;
    root.dataset.key = key;
    root.replaceChildren(...others.map((row) => {
      const li = document.createElement('li');
      li.dataset.player = row.player;
      li.className = `rival status-${row.status}`;
      const name = document.createElement('span');
      name.className = 'rival-name';
      name.textContent = row.name;
      const home = document.createElement('span');
      home.className = 'rival-home';
      home.textContent = `${row.foundation}/52`;
      const fill = document.createElement('span');
      fill.className = 'rival-fill';
      fill.style.width = `${(row.foundation / 52) * 100}%`;
      li.append(`${row.rank}${sharesPlace(rows, row) ? '=' : '.'} `, name, ' ', home, fill);
      li.setAttribute('aria-label', `${ordinal(row.rank)}: ${row.name}, ${row.foundation} of 52 cards home${row.status !== 'playing' ? `, ${statusWords(state, row.player, row.status)}` : ''}`);
      return li;
    }));
  }

  // An attempt's standings: the challenge's live leaderboard (top rows, this player's
  // place from `leaderboard_you` when outside them, and the players count).
  liveBoard(root, state, attempt) {
    const live = state.live && state.live.challenge === attempt.id && state.live.deal === attempt.deal
      ? state.live : null;
    const me = myKey(state);
    const key = JSON.stringify([live, me]);
    if (root.dataset.key === key) return;
    root.dataset.key = key;
    const list = root.querySelector('.live-rows');
    list.replaceChildren();
    const top = live ? live.rows.slice(0, 10) : [];
    // this player's row below the top: a guest's where accounts are ranked is on the
    // guests' list, its place said so
    const mine = live && !top.some((r) => r.who === me) ? myLivePlace(state) : null;
    const rows = mine ? [...top, ...(top.length ? [null] : []), mine.row] : top;
    for (const row of rows) {
      const li = document.createElement('li');
      if (!row) {
        li.className = 'gap';
        li.textContent = '\u2026';
        li.setAttribute('aria-hidden', 'true');
      } else {
        li.dataset.who = row.who;
        if (row.who === me) li.className = 'me';
        const rank = mine && mine.guests && row === mine.row ? `guest place ${row.rank}: ` : `${row.rank}. `;
        const name = withFlags(playerName(row), row);
        if (row.who === me) name.append(' (you)');
        // (the moves that reached those cards, what ranks the row; none before one)
        li.append(rank, name,
          ` \u00b7 ${row.foundation}/52${reachedText(row)}${row.status !== 'playing' ? ` \u00b7 ${statusWord(row.status)}` : ''}`);
      }
      list.append(li);
    }
    const apart = live && live.ranks === 'accounts' ? ` ranked \u00b7 ${thousands(live.guests)} guest${live.guests === 1 ? '' : 's'} listed apart` : '';
    text(root.querySelector('.live-count'), live ? `${playersText(live.players)}${apart}${live.final ? ' \u00b7 final' : ''}` : 'loading the leaderboard\u2026');
  }

  // Opponents' progress bars and the live leaderboard. Rows are kept per player, so a
  // bar grows (CSS transition) rather than being redrawn.
  standings(root, state) {
    const rows = standings(state);
    const seated = seats(state);
    const key = JSON.stringify([rows, state.player, state.spectators, seated, Boolean(solvedHere(state))]);
    if (root.dataset.key === key) return;
    root.dataset.key = key;
    const bars = root.querySelector('.bars');
    const kept = new Map([...bars.children].map((n) => [n.dataset.player, n]));
    const order = [];
    for (const row of rows) {
      let item = kept.get(row.player);
      if (!item) {
        item = document.createElement('div');
        item.dataset.player = row.player;
        item.innerHTML = '<div class="bar-label"><span class="who"></span><span class="what"></span></div>'
          + '<div class="bar" role="progressbar" aria-valuemin="0" aria-valuemax="52"><div class="fill"></div></div>';
      }
      kept.delete(row.player);
      item.className = `bar-row${row.player === state.player ? ' me' : ''}`;
      const who = item.querySelector('.who');
      who.replaceChildren(`${row.rank}${sharesPlace(rows, row) ? '=' : '.'} `,
        playerName({ ...seated[row.player], name: row.name }, row.player === state.player ? ' (you)' : ''));
      text(item.querySelector('.what'), `${row.foundation}/52 \u00b7 ${row.moves} move${row.moves === 1 ? '' : 's'}${row.status !== 'playing' ? ` \u00b7 ${statusWords(state, row.player, row.status)}` : ''}`);
      const bar = item.querySelector('.bar');
      bar.setAttribute('aria-valuenow', String(row.foundation));
      bar.setAttribute('aria-label', `${row.name}: ${row.foundation} of 52 cards home`);
      bar.firstChild.style.width = `${(row.foundation / 52) * 100}%`;
      order.push(item);
    }
    for (const gone of kept.values()) gone.remove();
    order.forEach((item, i) => {
      if (bars.children[i] !== item) bars.insertBefore(item, bars.children[i] || null);
    });
    const spect = root.querySelector('.spectators');
    if (spect) spect.textContent = `${state.spectators} watching`;
  }

  leaderboardTable(table, state, final) {
    const rows = standings(state);
    const seated = seats(state);
    const tbody = table.tBodies[0];
    const solved = Boolean(solvedHere(state));
    const key = JSON.stringify([rows, final, seated, solved]);
    if (table.dataset.key === key) return;
    table.dataset.key = key;
    tbody.replaceChildren();
    const scored = rows.some((r) => r.score != null);
    table.classList.toggle('scored', scored);
    for (const row of rows) {
      const tr = document.createElement('tr');
      tr.dataset.player = row.player;
      if (row.player === state.player) tr.className = 'me';
      // a place shared with another row (the server's exact tie) shows as "2="
      const shared = sharesPlace(rows, row);
      const cells = [shared ? `${row.rank}=` : row.rank, row.name, `${row.foundation}/52`, row.moves,
        formatPrecise(row.reached_ms), statusWords(state, row.player, row.status)];
      if (scored) cells.push(row.score == null ? '' : row.score);
      cells.forEach((c, i) => {
        const td = document.createElement('td');
        if (i === 1) {
          const you = row.player === state.player ? ' (you)' : '';
          td.append(playerName({ ...seated[row.player], name: row.name }, you));
        }
        else if (i === 5) {
          const badge = document.createElement('span');
          badge.className = `status-badge status-${c === SOLVED_WORDS ? 'solved' : row.status}`;
          badge.textContent = c;
          td.append(badge);
        } else td.textContent = c;
        if (i === 0 && shared) td.title = 'a shared place: the same cards home, moves and time';
        tr.append(td);
      });
      tbody.append(tr);
    }
  }

  results(state) {
    const room = state.room;
    const done = roomPhase(state) === 'finished';
    const mine = state.board && state.role === 'player' ? state.board.status : null;
    // the solver's line is never the player's win
    const solved = solvedHere(state);
    const headline = mine === 'won' ? 'You won: all 52 cards home'
      : mine && mine !== 'playing' ? `Your game is over (${STATUS_WORDS[mine] || mine})` : 'Your game is over';
    text($('#results-title'), solved ? 'Results: finished by the solver'
      : done ? (mine === 'won' ? 'Results: you won!' : 'Results') : headline);
    text($('#results-sub'), solved
      ? (room.parent
        ? `A practice continuation of race ${room.parent}: the solver played its last ${solved.moves} moves from your position. Not a win of yours: the race's own results are unchanged.`
        : `Practice game ${room.code}: the solver played the last ${solved.moves} moves. Not counted as your win.`)
      : done
        ? `${room.practice ? 'Practice game' : 'Race'} ${room.code} is over${room.end_reason === 'time_limit' ? ': time ran out' : ''}.`
        : 'Watching the others until everyone is done.');
    this.leaderboardTable($('#results-table'), state, done);
    const attempt = attemptOf(room);
    $('#results-note').hidden = Boolean(room.practice); // one player: no ranking to explain
    // an attempt's words: its time is the attempt's, not a race's
    text($('#results-note'), rankingNote(attempt ? 'attempt' : 'race'));
    $('#results-reached').title = reachedTitle(attempt ? 'attempt' : 'race');
    this.place(state, done);
    this.best($('#results-best'), state, done);
    const reveal = done ? room.reveal : null;
    $('#reveal').hidden = !reveal;
    if (reveal) {
      text($('#reveal-seed'), reveal.seed != null ? reveal.seed : '(an explicit deal: see below)');
      text($('#reveal-deal'), reveal.deal);
      text($('#reveal-salt'), reveal.salt);
      text($('#reveal-commitment'), reveal.commitment);
      const check = state.commitmentCheck;
      const out = $('#reveal-check');
      if (!check || check.commitment !== reveal.commitment) {
        text(out, 'checking\u2026');
        out.dataset.ok = '';
      } else {
        text(out, check.ok ? '\u2714 the commitment matches: the deal was fixed before the start'
          : '\u2718 the commitment does NOT match the revealed seed');
        out.dataset.ok = String(check.ok);
      }
    }
    this.analysis(state, done);
    // the game's replay, once the server shows it: a finished room's reveal says so (a
    // game on a challenge's deal has none before the challenge is final)
    const replay = $('#results-replay');
    replay.hidden = !reveal || !/^[A-Z0-9]{6}$/.test(room.code);
    if (!replay.hidden) replay.setAttribute('href', `#/replay/${room.code}`);
    $('#btn-finish-results').hidden = !finishOffered(state);
    const rematch = done && room.rematch ? room.rematch : null;
    this.attemptBox(state, attempt, done);
    if (attempt) {
      const whose = state.role === 'player' ? 'Your attempt'
        : `${(room.players[0] && room.players[0].name) || 'The'}\u2019s attempt`;
      text($('#results-sub'), done ? `${whose} at ${titleOf(attempt.id, challengeById(state, attempt.id))} is over.`
        : `${whose} is over.`);
    }
    $('#btn-rematch').hidden = state.role !== 'player' || !done || Boolean(rematch) || Boolean(room.parent)
      || Boolean(attempt);
    // a practice game's rematch is a new practice game, on a new deal
    text($('#btn-rematch'), room.practice ? 'New practice game' : 'Rematch');
    $('#btn-rematch-join').hidden = !rematch;
    $('#btn-back-race').hidden = !room.parent; // a practice continuation of a race
    text($('#rematch-note'), rematch ? `Rematch room ${rematch} is open.` : '');
    this.grid($('#results-boards'), state, state.player);
  }

  // A won game's personal best and streak, once the server has counted the game.
  best(box, state, done) {
    const html = done && state.role === 'player' && !solvedHere(state) ? bestHtml(state.played) : '';
    box.hidden = !html;
    if (box.dataset.html !== html) {
      box.dataset.html = html;
      box.innerHTML = html;
    }
  }

  // The player's own place, from their row of the server's leaderboard.
  place(state, done) {
    const out = $('#results-place');
    const rows = standings(state);
    const me = state.role === 'player' ? rows.find((r) => r.player === state.player) : null;
    out.hidden = !me || rows.length < 2;
    if (out.hidden) return;
    text(out, `${done ? 'Your place' : 'Your place so far'}: ${ordinal(me.rank)}${sharesPlace(rows, me) ? '=' : ''} of ${rows.length}`);
    out.dataset.rank = String(me.rank);
  }

  // After an attempt: "rank N of M", the share line, the leaderboard, practice.
  attemptBox(state, attempt, done) {
    const box = $('#attempt-box');
    box.hidden = !attempt || state.role !== 'player';
    if (box.hidden) return;
    const live = state.live && state.live.challenge === attempt.id && state.live.deal === attempt.deal
      ? state.live : null;
    const place = live ? myLivePlace(state) : null;
    const row = place && place.row;
    const words = place ? placeText(row.rank, place.of, place.guests) : '';
    text($('#attempt-rank'), place ? `${words[0].toUpperCase()}${words.slice(1)}${live.final ? ' (final)' : ''}`
      : 'Rank: waiting for the leaderboard\u2026');
    $('#attempt-rank').dataset.rank = row ? String(row.rank) : '';
    const title = titleOf(attempt.id, challengeById(state, attempt.id));
    const board = state.board && state.board.over ? state.board : null;
    const line = row && board
      ? shareLine(title, shareGame(board), row.rank, place.of, challengeLink(attempt.id), place.guests) : '';
    const input = $('#share-line');
    if (input.value !== line) input.value = line;
    $('#btn-share').disabled = !line;
    const c = challengeById(state, attempt.id);
    const final = Boolean(c && (c.final || serverNow(state) >= c.final_at));
    text($('#attempt-reveal-note'), done && state.room.reveal ? ''
      : `The deal's seed and salt, practice of the deal, finish it for me, replays and others' attempts open once the challenge is final, when the last attempt begun before the close has run out of time${c ? `: at ${opensText(c.final_at)} (in ${clockText(c.final_at - serverNow(state))})` : ''}. Until then others are still playing it.`);
    $('#attempt-reveal-note').dataset.opensAt = c && !final ? String(c.final_at) : '';
    $('#btn-attempt-practice').disabled = !final;
  }

  analysis(state, done) {
    const box = $('#analysis');
    const a = done ? state.analysis : null;
    box.hidden = !a;
    if (!a) return;
    text($('#analysis-par'), a.par != null
      ? `Par: ${a.par} moves, the shortest winning line the solver found from the deal`
      : `Par: none (${a.deal === 'lose' ? 'the deal cannot be won' : 'no line found in time'})`);
    const list = $('#analysis-players');
    const key = JSON.stringify([a, solvedHere(state)]);
    if (list.dataset.key === key) return;
    list.dataset.key = key;
    list.replaceChildren();
    const who = names(state);
    for (const [id, result] of Object.entries(a.players || {})) {
      const li = document.createElement('li');
      li.dataset.player = id;
      li.dataset.result = result;
      const words = result === 'won' ? statusWords(state, id, result) : ANALYSIS_WORDS[result] || result;
      li.textContent = `${who[id] || id}: ${words}`;
      list.append(li);
    }
  }

  watch(state) {
    const room = state.room;
    const now = serverNow(state); // the clocks only: the phase is the server's
    const phase = roomPhase(state);
    text($('#watch-title'), `Watching ${room.code}`);
    // the race's time on the boards shown: behind the race by the room's spectator delay
    const behind = room.spectator_delay || 0;
    const shown = Math.min(now - behind * 1000, room.ends_at ?? now) - room.start_at;
    text($('#watch-phase'), phase === 'countdown'
      ? `starting in ${Math.max(1, Math.ceil((room.start_at - now) / 1000))}`
      : phase === 'racing' ? `racing \u00b7 ${formatMs(shown)}${behind ? ` \u00b7 ${behind} s behind` : ''}` : phase);
    text($('#watch-settings'), describeSettings(room.settings, room));
    // rated play: outlines while the race runs (the server sends no card until the end)
    $('#watch-note').hidden = !(room.spectator_view === 'outline' && phase !== 'finished');
    text($('#watch-count'), `${state.spectators} watching`);
    this.leaderboardTable($('#watch-table'), state, false);
    const follow = state.follow && state.boards && state.boards[state.follow] ? state.follow : null;
    $('#follow').hidden = !follow;
    $('#watch-grid').hidden = Boolean(follow);
    if (follow) {
      text($('#follow-name'), names(state)[follow] || follow);
      this.large.update(state.boards[follow]);
    } else {
      this.grid($('#watch-grid'), state, null);
    }
  }

  // A grid of small boards: every player's (spectators), or the others' (finished players).
  grid(container, state, skip) {
    let views = this.grids.get(container);
    if (!views) {
      views = new Map();
      this.grids.set(container, views);
    }
    const boards = state.boards || {};
    const who = names(state);
    const rows = standings(state);
    const byPlayer = Object.fromEntries(rows.map((r) => [r.player, r]));
    const players = ((state.room && state.room.players) || []).map((p) => p.id)
      .filter((id) => id !== skip && boards[id]);
    for (const [id, view] of views) {
      if (!players.includes(id)) {
        view.cell.remove();
        view.board.destroy();
        views.delete(id);
      }
    }
    for (const id of players) {
      let view = views.get(id);
      if (!view) {
        const cell = document.createElement('button');
        cell.type = 'button';
        cell.className = 'grid-cell';
        cell.dataset.player = id;
        const head = document.createElement('div');
        head.className = 'grid-head';
        const holder = document.createElement('div');
        cell.append(head, holder);
        container.append(cell);
        view = { cell, head, board: new BoardView(holder, { maxCard: 80, markLast: true, animate: true }), last: null };
        views.set(id, view);
      }
      const row = byPlayer[id];
      text(view.head, row
        ? `${row.rank}${sharesPlace(rows, row) ? '=' : '.'} ${who[id] || id} \u00b7 ${row.foundation}/52 \u00b7 ${row.moves} move${row.moves === 1 ? '' : 's'}${row.status !== 'playing' ? ` \u00b7 ${STATUS_WORDS[row.status] || row.status}` : ''}`
        : who[id] || id);
      view.cell.setAttribute('aria-label', `Follow ${who[id] || id}`);
      if (view.last !== boards[id]) {
        view.last = boards[id];
        view.board.update(boards[id]);
      }
    }
    container.classList.toggle('empty', players.length === 0);
  }
}
