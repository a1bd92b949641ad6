// The lobby's "Create an arena" (docs/protocol.md, `create_arena`): the form (when, how
// long, the race size and time limit, Draw 1 or 3, private or public), the server's
// answer `arena_made` shown with the arena's link to copy (a private arena's only way
// in: the link opens its page, where anyone who has it joins) and Join, and a refusal in
// the server's words.

import { joinArena } from './arena.js';
import { arenaHref, arenaLink } from './arenapage.js';
import { needName } from './lobby.js';
import { escapeHtml } from './profile.js';
import { arenaWhat } from './render.js';
import {
  $, net, state, store, toast,
} from './shared.js';
import { serverNow } from './state.js';

const MINUTE_MS = 60_000;

// create_arena's fields from the form; `starts` on the server's clock.
export function arenaFields(form, now) {
  const f = new FormData(form);
  return {
    starts: now + Number(f.get('starts_in')) * MINUTE_MS,
    minutes: Number(f.get('minutes')),
    size: Number(f.get('size')),
    time_limit: Number(f.get('time_limit')),
    settings: { draw: Number(f.get('draw')) },
    private: f.get('private') === 'on',
  };
}

// The made arena (or the refusal) under the form.
export function madeHtml(made) {
  if (made.pending) return '<p class="muted">Creating\u2026</p>';
  if (made.error) return `<p class="account-error" role="alert">Not created: ${escapeHtml(made.error)}</p>`;
  const a = made.arena;
  const where = a.private ? 'Private: only those you give its link to can find it.'
    : 'Public: it is listed in the lobby until it ends.';
  return `<p role="status"><strong>${escapeHtml(a.title)}</strong> is made: ${escapeHtml(arenaWhat(a))}.</p>`
    + `<p class="muted small">${where}</p>`
    + '<div class="row-form"><label for="arena-made-link" class="visually-hidden">The arena\u2019s link</label>'
    + `<input id="arena-made-link" readonly value="${escapeHtml(arenaLink(a.id))}">`
    + '<button type="button" class="btn" id="btn-arena-made-copy">Copy link</button></div>'
    + '<div class="buttons">'
    + `<button type="button" class="btn primary" data-arena-made-join="${escapeHtml(a.id)}" aria-label="Join ${escapeHtml(a.title)}">Join it</button>`
    + `<a class="btn" href="${escapeHtml(arenaHref(a.id))}">Its page</a></div>`;
}

// A refusal of create_arena: shown under the form (true), not as a toast.
export function arenaMadeError(msg) {
  if (msg.about !== 'create_arena') return false;
  store.update((s) => { s.arenaMade = { error: msg.message || msg.reason }; });
  return true;
}

$('#arena-form').addEventListener('submit', (e) => {
  e.preventDefault();
  const fields = arenaFields(e.target, serverNow(state));
  store.update((s) => { s.arenaMade = { pending: true }; });
  if (!net.send({ type: 'create_arena', ...fields })) {
    store.update((s) => { s.arenaMade = { error: 'not connected: try again in a moment' }; });
  }
});

$('#arena-made').addEventListener('click', async (e) => {
  const join = e.target.closest('[data-arena-made-join]');
  if (join && needName()) joinArena(join.dataset.arenaMadeJoin);
  if (!e.target.closest('#btn-arena-made-copy')) return;
  const link = $('#arena-made-link');
  try {
    await navigator.clipboard.writeText(link.value);
    toast('Link copied');
  } catch {
    link.select();
  }
});

let drawn = null;
store.subscribe((s) => {
  const html = s.arenaMade ? madeHtml(s.arenaMade) : '';
  if (html === drawn) return;
  drawn = html;
  const box = $('#arena-made');
  box.hidden = !html;
  box.innerHTML = html;
  const made = s.arenaMade && s.arenaMade.arena;
  if (made) $('#arena-create').open = true;
  if (made && !made.private) net.send({ type: 'arenas' }); // listed now
});
