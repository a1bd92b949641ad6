// The client's state: what the server last said, plus local UI choices (selection,
// screen, followed board). Server messages are folded in by `receive`. It holds no game
// rules: boards only change when the server sends one, the room's phase is the last
// `room.phase` the server sent, whether a game is over is the board's `over`, and
// whether the solver may help is the server's `can_hint` / `can_finish`.

export function initialState() {
  return {
    conn: 'connecting', // connecting | open | closed
    everConnected: false,
    view: 'lobby', // lobby | queue | room | race | results | watch
    name: '', // the display name typed (kept for a guest; an account plays under its own)
    identity: null, // the server's last `identity`: {player: {id, name, guest}, rooms: [...]}
    role: null, // player | spectator
    player: null,
    token: null,
    room: null, // the server's public room; room.phase is the phase (the server's word)
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
    counts: null, // {online, racing}: the lobby's counts from the last `rooms`
    profile: null, // the #/players/WHO view: {who, status: loading|ok|missing|failed, data, error}
    notice: null, // {text, kind, at}
    refusal: null, // {reason, message, at, seq}
    inflightDrag: null, // {pile, index}: cards lifted by a drag, until the server answers
    commitmentCheck: null, // {commitment, ok, computed}: the browser's own SHA-256 check
    analysis: null, // the solver's analysis of a finished race
    played: null, // the server's `played`: what my finished game did to my statistics
    hint: null, // the last hint: {move, from, to, count, action, line}
    finishing: null, // {seq, moves}: the server is playing the solver's line
    playback: null, // the solver's line shown move by move: {steps: [{board, leaderboard}],
    //                 shown (the board shown), leaderboard (its ack's), total, done}
    solved: null, // {code, moves}: the room whose game the solver finished (kr.solved)
    winMoment: 0, // until when (Date.now() ms) the race screen shows the player's win
    lag: null, // the last ping's round trip, ms
    canHint: false, // the server's can_hint for this player (spectators: false)
    canFinish: false, // the server's can_finish for this player (spectators: false)
    challenges: null, // the server's last `challenges` list (each deal with `you`)
    // the watched challenge leaderboard: {challenge, deal, v, ranks, players, final, rows,
    // guests, guest_rows (the guests' list where accounts are ranked), you (this player's
    // place and neighbours), youGuests (you is on the guests' list)}
    live: null,
    attemptRefused: {}, // "ID/N" -> the server's message refusing an attempt there (rate_limited)
    replay: null, // the #/replay/CODE view: the code (the viewer, replay.js, holds the rest)
    daily: null, // the #/challenges/ID or #/archive/DAY view: {kind, id|day, status, data, error}
    confirm: null, // the challenge whose "one ranked attempt" notice is open: "ID/N"
    lobbyLate: false, // the lobby shown without its first answers (they took too long)
    invite: null, // a ?join=CODE link opened without a name: the code, until joined or declined
    arenas: null, // the server's last `arenas` list (the lobby's arenas)
    arenaId: null, // the arena this page plays in (kept as kr.arena), until Leave
    arenaPaused: false, // not playing in it now: paused (Pause), or only watching it
    // that arena's table: {arena, v, table (its first rows), top (its top race), you (this
    // player's line), near (their place and the rows around it, below the first rows)}
    arena: null,
    arenaNext: 0, // until when (Date.now() ms) the race screen says "Next race"
    sprintAsked: null, // the code of the arena race this page sent `sprint` in
    // the lobby's Create an arena: {pending: true} while asked, then {arena} (the server's
    // `arena_made`) or {error} (its refusal, in words)
    arenaMade: null,
    // the #/arena/ID page ({id}) or the recent results, #/arenas ({list: true}), with
    // {status: loading|ok|missing|failed, data, error} as `GET /api/arenas...` answered
    arenaPage: null,
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

// The room's phase as the server last said it (every room it sends carries `phase`;
// a `start` message's room says racing, a `room` event says finished).
export function roomPhase(state) {
  return state.room ? state.room.phase : null;
}

// This player's own game is over, by the server's board.
export function gameOver(state) {
  return Boolean(state.board && state.board.over);
}

// The player is still in a race: its countdown or the race itself, their own game not over.
export function stillRacing(state) {
  const phase = roomPhase(state);
  return state.role === 'player' && (phase === 'countdown' || phase === 'racing') && !gameOver(state);
}

// The solver's buttons: the server's flags, off while a finish is being played.
export function hintOffered(state) {
  return state.role === 'player' && state.canHint && !state.finishing && !state.playback;
}

export function finishOffered(state) {
  return state.role === 'player' && state.canFinish && !state.finishing && !state.playback;
}

// The board the player sees: the server's, or while the solver's line is shown move by
// move, the one shown now (every one of them the server's).
export function shownBoard(state) {
  return state.playback ? state.playback.shown : state.board;
}

// The solver's win of this player's game in this room (finish it for me: kr.solved), or
// null: never called the player's win.
export function solvedHere(state) {
  const solved = state.role === 'player' && state.room && state.solved;
  return solved && solved.code === state.room.code ? solved : null;
}

export const WIN_MOMENT_MS = 2200; // the race screen stays this long after one's win

// The race on screen is one of the arena this page plays in.
export function arenaRace(state) {
  return Boolean(state.arenaId && state.room && state.room.arena === state.arenaId && state.role === 'player');
}

// This player's seat in the room on screen (the server's public seat), or null.
export function mySeat(state) {
  const room = state.room;
  return state.role === 'player' && room ? room.players.find((p) => p.id === state.player) || null : null;
}

// When this player's race ends, as the server said: a sprinter's own time limit (their
// seat's `ends_at`), else the room's (null: no time limit).
export function endsAt(state) {
  const me = mySeat(state);
  if (me && me.sprint) return me.ends_at;
  return state.room ? state.room.ends_at : null;
}

// The Sprint button: in an arena race's countdown or race, before the player's first
// move (nothing acknowledged, sent or queued), not chosen yet; the server decides.
export function sprintOffered(state) {
  const me = mySeat(state);
  const phase = roomPhase(state);
  return arenaRace(state) && Boolean(me) && !me.sprint && state.sprintAsked !== state.room.code
    && (phase === 'countdown' || phase === 'racing') && state.seq === 0 && !state.inflight
    && !state.queue.length && !gameOver(state);
}

// Which screen the state calls for.
export function viewOf(state) {
  if (!state.room) return state.arenaId ? 'arena' : state.view === 'queue' ? 'queue' : 'lobby';
  const phase = roomPhase(state);
  if (state.role === 'spectator') return phase === 'finished' ? 'results' : 'watch';
  if (state.playback && state.role === 'player') return 'race'; // the solver's line, shown
  if (state.winMoment && Date.now() < state.winMoment) return 'race'; // the win moment
  // an arena's race over for the player: back to the arena, until the next race
  if (arenaRace(state) && (phase === 'finished' || gameOver(state))) return 'arena';
  if (phase === 'waiting') return 'room';
  if (phase === 'finished') return 'results';
  if (phase === 'racing' && gameOver(state)) return 'results';
  return 'race';
}

function clock(state, msg) {
  if (typeof msg.server_time === 'number') state.offset = msg.server_time - Date.now();
}

function takeRoom(state, room) {
  if (room) state.room = room;
}

// can_hint / can_finish: a snapshot (welcome, resync, resumed) says them all, absent for
// spectators; later messages (start, ack, room) update them when they carry them.
function takeFlags(state, msg, snapshot) {
  if (snapshot || typeof msg.can_hint === 'boolean') state.canHint = msg.can_hint === true;
  if (snapshot || typeof msg.can_finish === 'boolean') state.canFinish = msg.can_finish === true;
}

// ---- folding the server's messages in: one handler a message type -------------------
// Each takes the state and the message, changes the state, and returns an effect name
// for the app to act on (e.g. "ack", "refused", "token"), or null.

// A snapshot (welcome, resync, resumed): who this is, the room and every board as they
// are now; the moves sent before it are forgotten (the app sends again what is left).
function snapshot(state, msg) {
  clock(state, msg);
  state.role = msg.role;
  state.player = msg.player || null;
  takeRoom(state, msg.room);
  takeFlags(state, msg, true);
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
  state.played = msg.played || (msg.type === 'resumed' ? state.played : null);
  state.hint = null;
  if (msg.type !== 'resumed' || !state.finishing) state.finishing = null;
  state.playback = null;
  return msg.token ? 'token' : 'welcome';
}

// The race starts: its room says racing.
function start(state, msg) {
  clock(state, msg);
  takeRoom(state, msg.room);
  takeFlags(state, msg, false);
  if (msg.board) state.board = msg.board;
  if (msg.boards) state.boards = msg.boards;
  return 'start';
}

// A move of the player's own taken: its board (during finish it for me, the next step
// of the solver's line to show).
function ack(state, msg) {
  // a win of the player's own (not the solver's line): the race screen stays a moment
  const won = msg.board && msg.board.status === 'won' && !(state.board && state.board.status === 'won');
  if (won && !state.finishing && !state.playback) state.winMoment = Date.now() + WIN_MOMENT_MS;
  if (msg.board) state.board = msg.board;
  if (msg.board && state.playback) state.playback.steps.push({ board: msg.board, leaderboard: msg.leaderboard });
  takeFlags(state, msg, false);
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

// A move refused: it and the moves queued behind it are not played.
function refused(state, msg) {
  state.refusal = { reason: msg.reason, message: msg.message, at: Date.now(), seq: msg.seq };
  if (state.inflight && state.inflight.seq === msg.seq) state.inflight = null;
  state.queue = [];
  state.selection = null;
  return 'refused';
}

// Another player's progress (their board too, when this connection may see it).
function progress(state, msg) {
  if (typeof msg.v === 'number') state.version = Math.max(state.version, msg.v);
  state.progress = { ...state.progress, [msg.player]: msg.progress };
  if (msg.leaderboard) state.leaderboard = msg.leaderboard;
  if (msg.board) {
    state.boards = { ...(state.boards || {}), [msg.player]: msg.board };
    // our own game, ended on another device of ours: its board is ours now
    if (msg.player === state.player && state.role === 'player') state.board = msg.board;
  }
  return 'progress';
}

// The room changed (players, phase, the finish with every board).
function room(state, msg) {
  if (typeof msg.v === 'number') state.version = Math.max(state.version, msg.v);
  takeRoom(state, msg.room);
  takeFlags(state, msg, false);
  if (msg.leaderboard) state.leaderboard = msg.leaderboard;
  if (msg.boards) state.boards = msg.boards;
  if (msg.boards && state.player && msg.boards[state.player]) {
    state.board = msg.boards[state.player];
  }
  return 'room';
}

function analysis(state, msg) {
  state.analysis = msg.analysis;
  return null;
}

// My game's effect on my statistics, sent once my room has finished.
function played(state, msg) {
  state.played = msg.played && typeof msg.played === 'object' ? msg.played : null;
  return null;
}

function hint(state, msg) {
  state.hint = msg;
  return 'hint';
}

// Finish it for me: the server plays the solver's line; its acks are shown move by move.
function finishing(state, msg) {
  state.finishing = { seq: msg.seq, moves: msg.moves };
  state.playback = {
    steps: [], shown: state.board, leaderboard: state.leaderboard, total: msg.moves, done: 0,
  };
  state.solved = { code: state.room && state.room.code, moves: msg.moves };
  state.hint = null;
  return 'finishing';
}

function boards(state, msg) {
  state.boards = msg.boards;
  return 'boards';
}

function spectators(state, msg) {
  state.spectators = msg.count;
  return null;
}

function identity(state, msg) {
  state.identity = { player: msg.player || null, rooms: msg.rooms || [] };
  return 'identity';
}

// The lobby's live public races and its counts.
function rooms(state, msg) {
  state.rooms = msg.rooms || [];
  state.counts = { online: msg.online, racing: msg.racing };
  return null;
}

// In the quick match's queue.
function queued(state, msg) {
  state.view = 'queue';
  state.quickDraw = msg.draw === 3 ? 3 : 1;
  return null;
}

// Out of the queue (Cancel): the lobby, unless a race came first.
function unqueued(state) {
  if (state.view === 'queue') state.view = 'lobby';
  return null;
}

// A quick match found: its token (the room follows with a welcome).
function matched(state, msg) {
  state.token = msg.token;
  return 'token';
}

function left(state) {
  leaveRoom(state);
  return 'left';
}

function pong(state, msg) {
  clock(state, msg);
  return null;
}

function challenges(state, msg) {
  clock(state, msg);
  state.challenges = msg.challenges || [];
  return 'challenges';
}

// A challenge's whole live leaderboard (the player's own place kept while it is the same).
function leaderboard(state, msg) {
  const same = state.live && state.live.challenge === msg.challenge && state.live.deal === msg.deal;
  state.live = {
    challenge: msg.challenge, deal: msg.deal, v: msg.v, ranks: msg.ranks || 'everyone',
    players: msg.players, final: msg.final === true, rows: msg.rows || [],
    guests: msg.guests || 0, guest_rows: msg.guest_rows || [],
    you: same ? state.live.you : null, youGuests: same ? state.live.youGuests : false,
  };
  return 'leaderboard';
}

// The rows that changed or left since the version this connection holds (`base`), on
// the ranked rows and on the guests' list.
function leaderboardChanges(state, msg) {
  const live = state.live;
  if (!live || live.challenge !== msg.challenge || live.deal !== msg.deal) return null;
  if (live.v !== msg.base) return 'leaderboard_stale';
  state.live = {
    ...live, v: msg.v, players: msg.players, final: msg.final === true,
    rows: changedRows(live.rows, msg.changed, msg.gone),
    guests: msg.guests || 0, guest_rows: changedRows(live.guest_rows, msg.guest_changed, msg.guest_gone),
  };
  return 'leaderboard';
}

// The player's own place on the watched leaderboard, when outside its top rows.
function leaderboardYou(state, msg) {
  if (state.live && state.live.challenge === msg.challenge && state.live.deal === msg.deal) {
    state.live = { ...state.live, you: msg.rows || [], youGuests: msg.guests === true };
  }
  return null;
}

// ---- arenas -----------------------------------------------------------------------------
function arenas(state, msg) {
  clock(state, msg);
  state.arenas = msg.arenas || [];
  return null;
}

// The table of the arena this page plays in or watches, whole (a frame of another, or of
// one left, is old news).
function arena(state, msg) {
  clock(state, msg);
  if (!msg.arena || msg.arena.id !== state.arenaId) return null;
  state.arena = {
    arena: msg.arena, v: msg.v, table: msg.table || [], top: msg.top_race || null,
    you: msg.you || null, near: [],
  };
  return 'arena';
}

// The rows of the table that changed or left since the version held (`base`), its top race
// and where the arena is at; changes to rows not held: the whole table again.
function arenaChanges(state, msg) {
  clock(state, msg);
  const held = state.arena;
  if (!held || msg.arena !== state.arenaId || held.arena.id !== msg.arena) return null;
  if (held.v !== msg.base) return 'arena_stale';
  state.arena = {
    ...held, v: msg.v, table: changedRows(held.table, msg.changed, msg.gone, 'player'),
    top: msg.top_race || null,
    arena: { ...held.arena, phase: msg.phase, pairing: msg.pairing, final: msg.final },
  };
  return 'arena';
}

// This player's own line, and their place with the rows around it below the first rows.
function arenaYou(state, msg) {
  if (!state.arena || msg.arena !== state.arenaId) return null;
  state.arena = { ...state.arena, you: msg.you || null, near: msg.rows || [] };
  return 'arena';
}

// The answer to this page's create_arena: the arena made (its maker is not in it yet).
function arenaMadeMsg(state, msg) {
  clock(state, msg);
  state.arenaMade = { arena: msg.arena };
  return null;
}

// The arena's next race: its token (the race's welcome follows, as after a resume).
function arenaRaceMsg(state, msg) {
  if (msg.arena !== state.arenaId) return null;
  state.token = msg.token;
  state.arenaNext = Date.now() + ARENA_NEXT_MS;
  return 'token';
}

export const ARENA_NEXT_MS = 4000; // the race screen says "Next race" this long

function error(state, msg) {
  if (msg.about === 'finish') state.finishing = null;
  if (msg.about === 'sprint') state.sprintAsked = null;
  state.notice = { text: msg.message || msg.reason, kind: 'error', reason: msg.reason, at: Date.now() };
  return 'error';
}

const RECEIVE = {
  welcome: snapshot, resync: snapshot, resumed: snapshot, start, ack, refused, progress, room,
  analysis, played, hint, finishing, boards, spectators, identity, rooms, queued, unqueued,
  matched, left, pong,
  challenges, leaderboard, leaderboard_changes: leaderboardChanges, leaderboard_you: leaderboardYou,
  arenas, arena, arena_changes: arenaChanges, arena_you: arenaYou, arena_race: arenaRaceMsg,
  arena_made: arenaMadeMsg, error,
};

// Fold one server message into the state. Returns an effect name for the app to act
// on (e.g. "ack", "refused", "token"), or null (a type it does not know included).
export function receive(state, msg) {
  return Object.hasOwn(RECEIVE, msg.type) ? RECEIVE[msg.type](state, msg) : null;
}

// Whether another row shares this row's place (exact ties share a place, docs/rules.md):
// the client then shows the place as "2=", everywhere it shows it.
export function sharesPlace(rows, row) {
  return rows.some((r) => r !== row && r.rank === row.rank);
}

// Leaderboard rows held, with the rows that `changed` (new, or replacing the row of the
// same `id`: `who`, an arena table's `player`) and without those `gone`, ranked again.
function changedRows(rows, changed, gone, id = 'who') {
  const byId = new Map((rows || []).map((r) => [r[id], r]));
  for (const who of gone || []) byId.delete(who);
  for (const row of changed || []) byId.set(row[id], row);
  return ranked([...byId.values()], id);
}

// Leaderboard rows in order (by `key`, then `who`, or the `id` named) with their `rank`:
// 1 + the rows with a smaller key (docs/protocol.md, "Leaderboards", "Arenas").
export function ranked(rows, id = 'who') {
  const sorted = [...rows].sort((a, b) => a.key - b.key || (a[id] < b[id] ? -1 : a[id] > b[id] ? 1 : 0));
  let rank = 1;
  return sorted.map((r, i) => {
    if (i > 0 && r.key !== sorted[i - 1].key) rank = i + 1;
    return { ...r, rank };
  });
}

export function leaveRoom(state) {
  state.winMoment = 0;
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
  state.played = null;
  state.hint = null;
  state.finishing = null;
  state.playback = null;
  state.canHint = false;
  state.canFinish = false;
  state.view = 'lobby';
}

// Signed in to an account (not a guest, not anonymous), by the server's `identity`.
export function signedIn(state) {
  const p = state.identity && state.identity.player;
  return Boolean(p && !p.guest);
}

// The name this player races under: an account's own name, else the one typed.
export function playName(state) {
  return signedIn(state) ? state.identity.player.name : state.name;
}

// The unfinished rooms the server says this player sits in, less the one on screen.
export function yourRooms(state) {
  const rooms = (state.identity && state.identity.rooms) || [];
  const here = state.room && state.room.code;
  return rooms.filter((r) => r.code !== here);
}

// A room's players by player id ({id, name, who, guest}), from the public room.
export function seats(state) {
  const out = {};
  for (const p of (state.room && state.room.players) || []) out[p.id] = p;
  return out;
}

// Names by player id, from the public room.
export function names(state) {
  const out = {};
  for (const p of (state.room && state.room.players) || []) out[p.id] = p.name;
  return out;
}

// The leaderboard rows to show: the server's, plus any seated player it does not list
// yet (a player who joined after the last leaderboard was sent has made no move). While
// the solver's line is shown move by move, the leaderboard of the board shown (its ack's).
export function standings(state) {
  const rows = (state.playback ? state.playback.leaderboard : state.leaderboard) || [];
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

// ---- challenges ----------------------------------------------------------------------
// A room's challenge deal ("ID/N" in room.challenge): {id, deal}, or null.
export function attemptOf(room) {
  const m = room && typeof room.challenge === 'string' ? /^(.+)\/(\d+)$/.exec(room.challenge) : null;
  return m ? { id: m[1], deal: Number(m[2]) } : null;
}

// A challenge of the server's last `challenges` list, by id.
export function challengeById(state, id) {
  return ((state.challenges || []).find((c) => c.id === id)) || null;
}

// This player's key (the server's `identity`), or null.
export function myKey(state) {
  const p = state.identity && state.identity.player;
  return p ? p.id : null;
}

// This player's place on the watched leaderboard (the top rows, else `leaderboard_you`):
// {row, guests (on the guests' list of a challenge that ranks accounts only), of (how
// many are on that list)}, or null.
export function myLivePlace(state) {
  const live = state.live;
  const me = myKey(state);
  if (!live || !me) return null;
  const lists = [[live.rows, false], [live.guest_rows || [], true], [live.you || [], Boolean(live.youGuests)]];
  for (const [rows, guests] of lists) {
    const row = rows.find((r) => r.who === me);
    if (row) return { row, guests, of: guests ? live.guests : live.players };
  }
  return null;
}

// Whether this player may watch others' attempts at a deal: once the challenge is final
// (the server says `not_yet` before, whoever asks: docs/rules.md).
export function mayWatchAttempts(state, id) {
  const c = challengeById(state, id);
  return Boolean(c && c.final);
}
