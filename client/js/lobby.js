// The lobby (and the quick match's queue it leads to): the display name, quick match,
// join or watch by code, the create form and Practice, the live public races and
// "Your races".

import { $, net, params, state, storage, store } from './shared.js';
import { playName, signedIn, viewOf } from './state.js';

// The name field: what the player types as a guest; an account's own name, not
// editable, while signed in. A guest's field is only written back when it showed an
// account's name: an identity that arrives while the player types (before the field's
// change stores the name) must not wipe what they typed.
export function nameField() {
  const field = $('#name');
  const account = signedIn(state);
  if (account && field.value !== playName(state)) field.value = playName(state);
  else if (!account && field.readOnly) field.value = state.name;
  field.readOnly = account;
  $('#name-note').textContent = account ? 'your account\u2019s name' : '';
}

// The name a game that asks for none plays under (practice, a ghost race, a seat taken
// back): the account's or the one typed, else the header's "Guest".
export const DEFAULT_NAME = 'Guest';
export function nameOrDefault() {
  return playName(state) || DEFAULT_NAME;
}

// The name to play under, or null (the field asks for one): races and the daily.
export function needName() {
  if (signedIn(state)) return playName(state);
  const field = $('#name');
  const name = field.value.trim();
  if (!name) {
    field.focus();
    field.setCustomValidity('Choose a display name first');
    field.reportValidity();
    return null;
  }
  takeName(name);
  return name;
}

function takeName(name) {
  $('#name').setCustomValidity('');
  store.update((s) => { s.name = name; });
  storage.set('kr.name', name);
}

function settingsFromForm(form) {
  const f = new FormData(form);
  const passes = f.get('passes');
  return {
    draw: Number(f.get('draw')),
    passes: passes === 'unlimited' ? 'unlimited' : Number(passes),
    empty: f.get('empty'),
    foundation_to_column: f.get('foundation_to_column') === 'on',
    scoring: f.get('scoring'),
    timed: f.get('timed') === 'on' && f.get('scoring') === 'standard',
    undo: f.get('undo') === 'on',
  };
}

function create(settings, extra, name = playName(state)) {
  const msg = { type: 'create', name, settings, ...extra };
  // dev servers only (--dev): a named deal, for tests and development
  if (params.get('seed')) msg.deal = { seed: params.get('seed') };
  else if (params.get('cards')) msg.deal = { cards: params.get('cards').split(',') };
  net.send(msg);
}

// Undo is a private room's: a public room's race is rated, and rated races have none (the
// server refuses it), so the box is off and disabled until Private is ticked.
function undoFollowsPrivate() {
  const { undo, private: unlisted } = $('#create-form').elements;
  undo.disabled = !unlisted.checked;
  if (undo.disabled) undo.checked = false;
}
$('#create-form').addEventListener('change', undoFollowsPrivate);
undoFollowsPrivate();

// The lobby waits this long at most for its first answers before showing (render.js)
const LOBBY_WAIT_MS = 5000;
setTimeout(() => store.update((s) => { s.lobbyLate = true; }), LOBBY_WAIT_MS);

$('#name').value = state.name;
$('#name').addEventListener('change', () => { if (!signedIn(state)) needName(); });
// the name is taken as it is typed: taken only when the field lets go (the first tap
// elsewhere), the header grew under that tap on a phone and moved the button it aimed at
$('#name').addEventListener('input', () => {
  const name = $('#name').value.trim();
  if (!signedIn(state) && name) takeName(name);
});
$('#create-form').addEventListener('submit', (e) => {
  e.preventDefault();
  if (!needName()) return;
  const form = e.target;
  const f = new FormData(form);
  const limit = f.get('time_limit');
  const rankBy = f.get('rank_by');
  const settings = settingsFromForm(form);
  create(settings, {
    capacity: Number(f.get('capacity')),
    private: f.get('private') === 'on',
    winnable_only: f.get('winnable_only') === 'on',
    time_limit: limit ? Number(limit) : null,
    rank_by: rankBy === 'score' && settings.scoring !== 'none' ? 'score' : 'progress',
    spectator_delay: Number(f.get('spectator_delay') || 0),
  });
});
// Practice starts at once, under the name typed or the default: no name is asked. Its
// undo is its own box's (ticked at first), not the form's, which is a race's (off).
$('#btn-practice').addEventListener('click', () => {
  const form = $('#create-form');
  const f = new FormData(form);
  const limit = f.get('time_limit');
  create({ ...settingsFromForm(form), undo: $('#practice-undo').checked }, {
    practice: true,
    time_limit: limit ? Number(limit) : null,
    winnable_only: f.get('winnable_only') === 'on',
  }, nameOrDefault());
});
$('#join-form').addEventListener('submit', (e) => {
  e.preventDefault();
  const code = $('#join-code').value.trim().toUpperCase();
  if (!needName() || !code) return;
  net.send({ type: 'join', code, name: playName(state) });
});
$('#btn-watch-code').addEventListener('click', () => {
  const code = $('#join-code').value.trim().toUpperCase();
  if (code) net.send({ type: 'watch', code });
});
$('#btn-quick').addEventListener('click', () => {
  if (needName()) net.send({ type: 'quick', name: playName(state), draw: 1 });
});
$('#btn-quick3').addEventListener('click', () => {
  if (needName()) net.send({ type: 'quick', name: playName(state), draw: 3 });
});
// the queue's one button: out of the queue (`unqueued`), the connection kept; a match
// that came first is entered as ever (`not_queued` then says nothing)
$('#btn-cancel-quick').addEventListener('click', () => {
  store.update((s) => { s.view = 'lobby'; });
  net.send({ type: 'leave_queue' });
});
$('#btn-refresh').addEventListener('click', () => net.send({ type: 'rooms' }));
$('#count-racing').addEventListener('click', (e) => { // down to the live races (no route)
  e.preventDefault();
  $('#live-races').scrollIntoView({ block: 'start' });
});
$('#live-rooms').addEventListener('click', (e) => {
  const watch = e.target.closest('[data-watch]');
  const join = e.target.closest('[data-join]');
  if (watch) net.send({ type: 'watch', code: watch.dataset.watch });
  if (join && needName()) net.send({ type: 'join', code: join.dataset.join, name: playName(state) });
});
// "Your races": rejoin a room this player sits in (from another device): the server
// gives the same seat back, with a token of this device's.
$('#your-rooms').addEventListener('click', (e) => {
  const rejoin = e.target.closest('[data-rejoin]');
  if (rejoin) net.send({ type: 'join', code: rejoin.dataset.rejoin, name: nameOrDefault() });
});
setInterval(() => {
  if (viewOf(state) === 'lobby' && net.open) net.send({ type: 'rooms' });
}, 5000);
