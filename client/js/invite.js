// The link the page was opened with: `?watch=CODE` and `?join=CODE` are done once
// connected (`pendingIntent`, until done or declined), `?challenge=ID` opens the
// challenge's page; and the lobby's invitation panel, for a `?join` link opened with no
// name saved.

import { challengeHref } from './daily.js';
import { needName } from './lobby.js';
import { $, address, net, params, state, store } from './shared.js';
import { playName } from './state.js';

export let pendingIntent = null; // what to do once connected: {type, code}
if (params.get('watch')) pendingIntent = { type: 'watch', code: params.get('watch').toUpperCase() };
else if (params.get('join')) pendingIntent = { type: 'join', code: params.get('join').toUpperCase() };
// A shared challenge link (?challenge=ID) opens the challenge's page.
if (params.get('challenge')) {
  history.replaceState(null, '', `${location.pathname}${challengeHref(params.get('challenge'))}`);
}

// Done, or refused: no later (re)connection does it again.
export function forgetIntent() {
  pendingIntent = null;
}

$('#btn-invite-join').addEventListener('click', () => {
  const code = state.invite;
  if (!code || !needName()) return;
  net.send({ type: 'join', code, name: playName(state) });
});
$('#btn-invite-no').addEventListener('click', () => {
  pendingIntent = null; // declined: no later (re)connection joins it
  store.update((s) => { s.invite = null; });
  history.replaceState(null, '', address());
});
