// The replay viewer (`#/replay/CODE`, `#/replay/CODE/STEP`; the server sends
// `/replay/CODE` here): every player's board side by side, stepped through one timeline
// merged by race time, as spectators saw the race. The server computed every board
// (GET /api/replays/CODE: each player's initial board and, per move, the fields that
// changed); this module only applies those changes and holds no rules. The replay
// state is one number, the step (0: the deal, N: every move made); play, the buttons,
// the scrubber and the keys all set it, and the page is drawn from it.

import { BoardView } from './board.js';
import { moveWords } from './cards.js';
import { opensText } from './daily.js';
import { escapeHtml } from './profile.js';

const CODE = /^[A-HJ-NP-Z2-9]{6}$/;
export const SPEEDS = [0.5, 1, 2, 4, 8];
const MAX_GAP_MS = 2000; // a long think is played as at most this long (before the speed)
const MIN_DELAY_MS = 25;

// {code, step (or null)} of a `#/replay/CODE[/STEP]` address, or null.
export function replayRoute(hash) {
  const m = /^#\/replay\/([^/?#]+)(?:\/(\d{1,6}))?$/.exec(hash || '');
  if (!m || !CODE.test(m[1])) return null;
  return { code: m[1], step: m[2] == null ? null : Number(m[2]) };
}

export const replayHref = (code, step) => `#/replay/${code}${step ? `/${step}` : ''}`;

// A board after a frame's changes (the server's delta: changed fields only, `columns`
// as {index: column}, `foundations` as {suit: top}).
export function applyDelta(board, change) {
  const out = { ...board };
  for (const [key, value] of Object.entries(change)) {
    if (key === 'columns') {
      const columns = board.columns.slice();
      for (const [i, column] of Object.entries(value)) columns[Number(i)] = column;
      out.columns = columns;
    } else if (key === 'foundations') {
      out.foundations = { ...board.foundations, ...value };
    } else {
      out[key] = value;
    }
  }
  return out;
}

// Everything the viewer looks up, from the server's replay: each player's boards (the
// initial one first), and for each step the frame it applies.
export function prepare(data) {
  const players = data.players.map((p) => {
    const boards = [p.initial];
    for (const f of p.frames) boards.push(applyDelta(boards[boards.length - 1], f.board));
    return { id: p.id, name: p.name, who: p.who, frames: p.frames, boards, final: p.final };
  });
  const byId = Object.fromEntries(players.map((p) => [p.id, p]));
  const seen = Object.fromEntries(players.map((p) => [p.id, 0]));
  // steps[s - 1]: the s-th step: {player, index: the frame, counts: frames of each player applied}
  const steps = [];
  for (const id of data.timeline) {
    seen[id] += 1;
    steps.push({ player: id, frame: byId[id].frames[seen[id] - 1], counts: { ...seen } });
  }
  return { code: data.code, room: data.room, players, byId, steps };
}

export async function loadReplay(code, fetcher = fetch) {
  let response;
  try {
    response = await fetcher(`/api/replays/${code}`, { headers: { Accept: 'application/json' } });
  } catch (err) {
    return { status: 0, error: String(err) };
  }
  let body = null;
  try { body = await response.json(); } catch { /* not JSON */ }
  if (response.status === 200 && body) return { status: 200, data: body };
  return {
    status: response.status,
    error: (body && body.error) || 'failed',
    message: body && body.message,
    opens_at: body && body.opens_at,
  };
}

// A player's n-th frame's move in words, as the live region says one's own moves
// (cards.js), from the boards before and after it: "Ace of clubs to the clubs foundation",
// "Drew the Eight of clubs"; a resignation, and the race's end when it changed the board.
const FRAME_WORDS = { end: 'The race ended' };
function moveSaid(player, n) {
  const { move } = player.frames[n - 1];
  return FRAME_WORDS[move] || moveWords(move, player.boards[n - 1], player.boards[n]) || move;
}

function clock(ms) {
  const m = Math.floor(ms / 60000);
  const s = ((ms % 60000) / 1000).toFixed(1).padStart(4, '0');
  return `${m}:${s}`;
}

const ERRORS = {
  not_finished: 'This race is still on: its replay opens once it has finished.',
  not_yet: 'This is a game on a challenge deal: its replay opens once the challenge is final.',
  no_replay: 'No replay of this room: the code is unknown, or the race was too long ago.',
  bad_code: 'That is not a room code.',
};

export class ReplayViewer {
  // askServer(code): the replay over the connection ({status, data} or {status, error,
  // opens_at}; status 0: not connected); a game on a challenge deal is refused to
  // everyone, over either, until the challenge is final (not_yet, with opens_at)
  constructor(root, askServer = null) {
    this.root = root;
    this.askServer = askServer;
    this.data = null;
    this.step = 0;
    this.playing = false;
    this.speed = 1;
    this.timer = null;
    this.views = new Map();
    this.code = null;
    this.$ = (sel) => root.querySelector(sel);
    this.$('#replay-first').addEventListener('click', () => this.go(0));
    this.$('#replay-prev').addEventListener('click', () => this.go(this.step - 1));
    this.$('#replay-next').addEventListener('click', () => this.go(this.step + 1));
    this.$('#replay-last').addEventListener('click', () => this.go(this.total()));
    this.$('#replay-play').addEventListener('click', () => this.toggle());
    this.$('#replay-scrub').addEventListener('input', (e) => this.go(Number(e.target.value), true));
    this.$('#replay-speed').addEventListener('change', (e) => this.setSpeed(Number(e.target.value)));
    this.$('#replay-boards').addEventListener('click', (e) => {
      const jump = e.target.closest('[data-jump]');
      if (jump) this.jump(jump.closest('[data-player]').dataset.player, jump.dataset.jump);
      const ghost = e.target.closest('[data-ghost]');
      if (ghost) {
        // a practice race against this recorded game (the app sends `ghost`)
        const player = ghost.closest('[data-player]').dataset.player;
        root.dispatchEvent(new CustomEvent('ghost', { detail: { code: this.code, player, button: ghost } }));
      }
    });
    // capture: while the replay is open its keys are its own (not the game's input)
    window.addEventListener('keydown', (e) => this.key(e), true);
  }

  get open() { return !this.root.hidden; }

  total() { return this.data ? this.data.steps.length : 0; }

  async show(code, step) {
    this.root.hidden = false;
    if (this.code === code && this.data) {
      if (step != null) this.go(step);
      return;
    }
    this.close(false);
    this.root.hidden = false;
    this.code = code;
    this.data = null;
    this.$('#replay-title').textContent = `Replay ${code}`;
    this.$('#replay-sub').textContent = 'Loading\u2026';
    this.$('#replay-error').hidden = true;
    this.root.dataset.state = 'loading';
    // over the connection when there is one, else over HTTP
    let got = this.askServer ? await this.askServer(code) : { status: 0 };
    if (got.status === 0) got = await loadReplay(code);
    if (this.code !== code) return; // navigated on meanwhile
    if (got.status !== 200) {
      this.root.dataset.state = 'error';
      this.$('#replay-sub').textContent = '';
      const box = this.$('#replay-error');
      const when = typeof got.opens_at === 'number' ? ` It opens at ${opensText(got.opens_at)}.` : '';
      box.textContent = (ERRORS[got.error] || `The replay could not be loaded (${got.error}).`) + when;
      box.dataset.error = got.error;
      box.hidden = false;
      return;
    }
    this.data = prepare(got.data);
    this.build();
    this.root.dataset.state = 'ready';
    this.go(step == null ? 0 : step);
  }

  close(hide = true) {
    this.pause();
    for (const view of this.views.values()) view.board.destroy();
    this.views.clear();
    this.$('#replay-boards').replaceChildren();
    this.code = null;
    this.data = null;
    if (hide) this.root.hidden = true;
  }

  build() {
    const { room, players } = this.data;
    const s = room.settings || {};
    const names = players.map((p) => p.name).join(' vs ');
    this.$('#replay-sub').textContent = `${names} \u00b7 Draw ${s.draw}${s.undo ? ' \u00b7 undo on' : ''}`
      + `${room.reveal && room.reveal.seed ? ` \u00b7 seed ${room.reveal.seed}` : ''}`;
    const scrub = this.$('#replay-scrub');
    scrub.max = String(this.total());
    const container = this.$('#replay-boards');
    for (const p of players) {
      const cell = document.createElement('div');
      cell.className = 'grid-cell replay-player';
      cell.dataset.player = p.id;
      cell.innerHTML = '<div class="grid-head replay-player-head">'
        + `<span class="replay-name">${escapeHtml(p.name)}</span> `
        + '<span class="replay-home"></span> <span class="replay-status muted"></span>'
        + `<span class="replay-jumps"><button type="button" class="btn small" data-jump="prev" aria-label="${escapeHtml(p.name)}: previous move">&#9664;</button>`
        + `<button type="button" class="btn small" data-jump="next" aria-label="${escapeHtml(p.name)}: next move">&#9654;</button>`
        + `<button type="button" class="btn small" data-ghost aria-label="Race the ghost of ${escapeHtml(p.name)}">Race this ghost</button></span>`
        + '</div><div class="replay-last muted small"></div><div class="replay-board"></div>';
      container.append(cell);
      const board = new BoardView(cell.querySelector('.replay-board'), { maxCard: 80 });
      this.views.set(p.id, { cell, board, last: null });
    }
  }

  // The step: every input lands here; the page follows.
  go(step, fromScrub = false) {
    if (!this.data) return;
    const to = Math.max(0, Math.min(this.total(), Math.floor(Number(step) || 0)));
    this.step = to;
    this.draw(fromScrub);
    history.replaceState(null, '', `${location.pathname}${location.search}${replayHref(this.data.code, to)}`);
    if (this.playing) this.schedule(); // playing goes on from the step input chose
  }

  counts(step) {
    if (step === 0) return Object.fromEntries(this.data.players.map((p) => [p.id, 0]));
    return this.data.steps[step - 1].counts;
  }

  draw(fromScrub) {
    const { players, steps } = this.data;
    const counts = this.counts(this.step);
    const current = this.step ? steps[this.step - 1] : null;
    for (const p of players) {
      const view = this.views.get(p.id);
      const n = counts[p.id] || 0;
      const board = p.boards[n];
      if (view.last !== board) {
        view.last = board;
        view.board.update(board);
      }
      view.cell.querySelector('.replay-home').textContent = `${board.foundation}/52`;
      view.cell.querySelector('.replay-status').textContent = board.status === 'playing' ? '' : board.status.replace('_', ' ');
      const frame = n ? p.frames[n - 1] : null;
      const last = view.cell.querySelector('.replay-last');
      last.textContent = frame ? `${clock(frame.at_ms)} ${moveSaid(p, n)}` : 'the deal';
      last.title = frame ? frame.move : ''; // the notation (docs/notation.md), on hover
      view.cell.classList.toggle('moved', Boolean(current && current.player === p.id));
    }
    const scrub = this.$('#replay-scrub');
    if (!fromScrub) scrub.value = String(this.step);
    scrub.setAttribute('aria-valuetext', `step ${this.step} of ${this.total()}`);
    this.$('#replay-step').textContent = `${this.step} / ${this.total()}`;
    this.$('#replay-time').textContent = clock(current ? current.frame.at_ms : 0);
    const mover = current ? this.data.byId[current.player] : null;
    const said = this.$('#replay-move');
    said.textContent = mover ? `${mover.name}: ${moveSaid(mover, counts[mover.id])}` : 'The deal, before the first move';
    said.title = current ? current.frame.move : '';
    this.$('#replay-link').value = `${location.origin}${location.pathname}${replayHref(this.data.code, this.step)}`;
    this.root.dataset.step = String(this.step);
  }

  jump(player, way) {
    const { steps } = this.data;
    if (way === 'next') {
      for (let s = this.step + 1; s <= steps.length; s += 1) {
        if (steps[s - 1].player === player) { this.go(s); return; }
      }
    } else {
      for (let s = this.step - 1; s >= 1; s -= 1) {
        if (steps[s - 1].player === player) { this.go(s); return; }
      }
      if (this.step > 0) this.go(0);
    }
  }

  setSpeed(speed) {
    if (!SPEEDS.includes(speed)) return;
    this.speed = speed;
    this.$('#replay-speed').value = String(speed);
    if (this.playing) this.schedule();
  }

  toggle() {
    if (this.playing) this.pause();
    else this.play();
  }

  play() {
    if (!this.data || !this.total()) return;
    this.playing = true;
    if (this.step >= this.total()) this.go(0);
    this.$('#replay-play').setAttribute('aria-pressed', 'true');
    this.$('#replay-play').textContent = 'Pause';
    this.schedule();
  }

  pause() {
    this.playing = false;
    clearTimeout(this.timer);
    this.timer = null;
    const button = this.$('#replay-play');
    button.setAttribute('aria-pressed', 'false');
    button.textContent = 'Play';
  }

  // The next step after the race's own gap (capped), at the chosen speed.
  schedule() {
    clearTimeout(this.timer);
    if (!this.playing) return;
    const { steps } = this.data;
    const at = this.step ? steps[this.step - 1].frame.at_ms : 0;
    const next = steps[this.step];
    if (!next) { this.pause(); return; }
    const gap = Math.min(MAX_GAP_MS, Math.max(0, next.frame.at_ms - at));
    this.timer = setTimeout(() => this.go(this.step + 1), Math.max(MIN_DELAY_MS, gap / this.speed));
  }

  key(e) {
    if (!this.open || !this.data || e.ctrlKey || e.metaKey || e.altKey) return;
    const target = e.target;
    if (target && (target.tagName === 'SELECT' || (target.tagName === 'INPUT' && target.type !== 'range')
      || target.isContentEditable)) return;
    const keys = {
      ArrowLeft: () => this.go(this.step - 1),
      ArrowRight: () => this.go(this.step + 1),
      Home: () => this.go(0),
      End: () => this.go(this.total()),
      ' ': () => this.toggle(),
    };
    const act = keys[e.key];
    if (!act) return;
    e.preventDefault();
    e.stopPropagation();
    if (e.key === ' ' && e.repeat) return;
    act();
  }
}
