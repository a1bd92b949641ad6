// The client's state: what the server last said, plus local UI choices (selection,
// screen, followed board). Server messages are folded in by `receive`; nothing here
// decides whether a move is legal: boards only change when the server sends one.

export const PHASES = ['waiting', 'countdown', 'racing', 'finished'];

export function initialState() {
  return {
    conn: 'connecting', // connecting | open | closed
    everConnected: false,
    view: 'lobby', // lobby | queue | room | race | results | watch
    name: '',
    role: null, // player | spectator
    player: null,
    token: null,
    room: null, // the server's public room
    leaderboard: [],
    progress: {},
    spectators: 0,
    board: null, // this player's own board (board_view)
    boards: null, // other boards when this connection may see them
    offset: 0, // server clock - local clock, ms
    seq: 0, // moves the server has acknowledged for this player
    inflight: null, // {seq, intent} sent and not yet answered
    queue: [], // intents waiting for the one in flight
    selection: null, // {pile, index, count}
    follow: null, // the player whose board a spectator follows large
    rooms: [], // live public races
    notice: null, // {text, kind, at}
    refusal: null, // {reason, message, at, seq}
    inflightDrag: null, // {pile, index}: cards lifted by a drag, until the server answers
    commitmentCheck: null, // {commitment, ok, computed}: the browser's own SHA-256 check
    analysis: null, // the solver's analysis of a finished race
    hint: null, // the last hint: {move, from, to, count, action, line}
    finishing: null, // {seq, moves}: the server is playing the solver's line
    version: 0,
  };
}

export class Store {
  constructor(state) {
    this.state = state;
    this.listeners = new Set();
  }

  subscribe(fn) {
    this.listeners.add(fn);
    return () => this.listeners.delete(fn);
  }

  update(change) {
    change(this.state);
    for (const fn of this.listeners) fn(this.state);
  }
}

export function serverNow(state) {
  return Date.now() + state.offset;
}

// The same rule as the server's phase_of: the stored phase plus the clock.
export function phaseOf(room, now) {
  if (!room) return null;
  if (room.phase === 'finished') return 'finished';
  if (room.start_at == null) return 'waiting';
  if (now < room.start_at) return 'countdown';
  if (room.ends_at != null && now >= room.ends_at) return 'finished';
  return 'racing';
}

export function isOver(status, settings) {
  if (!status || status === 'playing') return false;
  return !(status === 'stuck' && settings && settings.undo);
}

export function myGameOver(state) {
  return Boolean(state.board) && isOver(state.board.status, state.room && state.room.settings);
}

// Finish it for me is offered in a practice game that is on, and in a race once the
// player's own race is over (their game is over, or the race has finished) unless won.
export function canFinish(state) {
  const room = state.room;
  if (!room || state.role !== 'player' || !state.board || state.finishing) return false;
  if (state.board.status === 'won') return false;
  const phase = phaseOf(room, serverNow(state));
  if (room.practice) return phase === 'racing' && !myGameOver(state);
  return phase === 'finished' || myGameOver(state);
}

export function canHint(state) {
  const room = state.room;
  return Boolean(room && room.practice && state.role === 'player' && state.board && !state.finishing)
    && phaseOf(room, serverNow(state)) === 'racing' && !myGameOver(state);
}

// Which screen the state calls for.
export function viewOf(state) {
  if (!state.room) return state.view === 'queue' ? 'queue' : 'lobby';
  const phase = phaseOf(state.room, serverNow(state));
  if (state.role === 'spectator') return phase === 'finished' ? 'results' : 'watch';
  if (phase === 'waiting') return 'room';
  if (phase === 'finished') return 'results';
  if (phase === 'racing' && myGameOver(state)) return 'results';
  return 'race';
}

function clock(state, msg) {
  if (typeof msg.server_time === 'number') state.offset = msg.server_time - Date.now();
}

function takeRoom(state, room) {
  if (room) state.room = room;
}

// Fold one server message into the state. Returns an effect name for the app to act
// on (e.g. "ack", "refused", "token"), or null.
export function receive(state, msg) {
  switch (msg.type) {
    case 'welcome':
    case 'resync':
    case 'resumed': {
      clock(state, msg);
      state.role = msg.role;
      state.player = msg.player || null;
      takeRoom(state, msg.room);
      if (msg.leaderboard) state.leaderboard = msg.leaderboard;
      if (msg.progress) state.progress = msg.progress;
      if (typeof msg.spectators === 'number') state.spectators = msg.spectators;
      state.board = msg.board || null;
      state.boards = msg.boards || null;
      if (typeof msg.seq === 'number') state.seq = msg.seq;
      if (typeof msg.v === 'number') state.version = msg.v;
      state.inflight = null;
      state.queue = [];
      state.selection = null;
      if (msg.token) state.token = msg.token;
      state.analysis = msg.analysis || (msg.type === 'resumed' ? state.analysis : null);
      state.hint = null;
      if (msg.type !== 'resumed' || !state.finishing) state.finishing = null;
      return msg.token ? 'token' : 'welcome';
    }
    case 'start': {
      clock(state, msg);
      takeRoom(state, msg.room);
      if (msg.board) state.board = msg.board;
      if (msg.boards) state.boards = msg.boards;
      return 'start';
    }
    case 'ack': {
      if (msg.board) state.board = msg.board;
      // the player's own progress event is not sent: the ack carries the news
      if (msg.leaderboard) state.leaderboard = msg.leaderboard;
      if (typeof msg.v === 'number') state.version = Math.max(state.version, msg.v);
      state.seq = Math.max(state.seq, msg.seq);
      if (state.inflight && state.inflight.seq === msg.seq) state.inflight = null;
      state.selection = null;
      state.hint = null;
      if (state.finishing && msg.seq >= state.finishing.seq + state.finishing.moves - 1) {
        state.finishing = null;
      }
      return 'ack';
    }
    case 'refused': {
      state.refusal = { reason: msg.reason, message: msg.message, at: Date.now(), seq: msg.seq };
      if (state.inflight && state.inflight.seq === msg.seq) state.inflight = null;
      state.queue = [];
      state.selection = null;
      return 'refused';
    }
    case 'progress': {
      if (typeof msg.v === 'number') state.version = Math.max(state.version, msg.v);
      state.progress = { ...state.progress, [msg.player]: msg.progress };
      if (msg.leaderboard) state.leaderboard = msg.leaderboard;
      if (msg.board) {
        state.boards = { ...(state.boards || {}), [msg.player]: msg.board };
      }
      return 'progress';
    }
    case 'room': {
      if (typeof msg.v === 'number') state.version = Math.max(state.version, msg.v);
      takeRoom(state, msg.room);
      if (msg.leaderboard) state.leaderboard = msg.leaderboard;
      if (msg.boards) state.boards = msg.boards;
      if (msg.boards && state.player && msg.boards[state.player]) {
        state.board = msg.boards[state.player];
      }
      return 'room';
    }
    case 'analysis': {
      state.analysis = msg.analysis;
      return null;
    }
    case 'hint': {
      state.hint = msg;
      return 'hint';
    }
    case 'finishing': {
      state.finishing = { seq: msg.seq, moves: msg.moves };
      state.hint = null;
      return null;
    }
    case 'boards': {
      state.boards = msg.boards;
      return 'boards';
    }
    case 'spectators': {
      state.spectators = msg.count;
      return null;
    }
    case 'rooms': {
      state.rooms = msg.rooms || [];
      return null;
    }
    case 'queued': {
      state.view = 'queue';
      return null;
    }
    case 'matched': {
      state.token = msg.token;
      return 'token';
    }
    case 'left': {
      leaveRoom(state);
      return 'left';
    }
    case 'pong': {
      clock(state, msg);
      return null;
    }
    case 'error': {
      if (msg.about === 'finish') state.finishing = null;
      state.notice = { text: msg.message || msg.reason, kind: 'error', reason: msg.reason, at: Date.now() };
      return 'error';
    }
    default:
      return null;
  }
}

export function leaveRoom(state) {
  state.room = null;
  state.role = null;
  state.player = null;
  state.board = null;
  state.boards = null;
  state.leaderboard = [];
  state.progress = {};
  state.inflight = null;
  state.queue = [];
  state.selection = null;
  state.follow = null;
  state.inflightDrag = null;
  state.token = null;
  state.analysis = null;
  state.hint = null;
  state.finishing = null;
  state.view = 'lobby';
}

// Names by player id, from the public room.
export function names(state) {
  const out = {};
  for (const p of (state.room && state.room.players) || []) out[p.id] = p.name;
  return out;
}

// The leaderboard rows to show: the server's, plus any seated player it does not list
// yet (a player who joined after the last leaderboard was sent has made no move).
export function standings(state) {
  const rows = state.leaderboard || [];
  const players = (state.room && state.room.players) || [];
  const listed = new Set(rows.map((r) => r.player));
  const missing = players.filter((p) => !listed.has(p.id));
  if (!missing.length) return rows;
  const last = rows.filter((r) => r.foundation === 0 && r.moves === 0);
  const rank = last.length ? last[0].rank : rows.length + 1;
  return rows.concat(missing.map((p) => ({
    player: p.id, name: p.name, foundation: 0, moves: 0, reached_moves: 0, reached_ms: 0,
    status: 'playing', score: null, rank,
  })));
}
