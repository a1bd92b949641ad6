// The results screen: the commitment checked in the browser (Web Crypto), Rematch (and
// a rematch joined), Finish it for me, Back to the race, Back to lobby.

import { finishForMe } from './race.js';
import {
  $, address, forgetSession, net, sha256Hex, state, storage, store,
} from './shared.js';
import { leaveRoom, playName } from './state.js';

// The browser's own SHA-256 of the revealed deal, compared with the commitment.
export async function checkCommitment() {
  const reveal = state.room && state.room.reveal;
  if (!reveal || (state.commitmentCheck && state.commitmentCheck.commitment === reveal.commitment)) return;
  if (!(window.crypto && crypto.subtle)) {
    store.update((s) => { s.commitmentCheck = { commitment: reveal.commitment, ok: false, unavailable: true }; });
    return;
  }
  const hex = await sha256Hex(`${reveal.salt}:${reveal.deal}`);
  store.update((s) => { s.commitmentCheck = { commitment: reveal.commitment, ok: hex === reveal.commitment, computed: hex }; });
}

// Rematch: the server makes one new room on the same settings and tells everyone in
// this one its code (room.rematch); a player asking later is seated in that same room.
$('#btn-rematch').addEventListener('click', () => {
  if (state.room && state.role === 'player') net.send({ type: 'rematch' });
});
$('#btn-rematch-join').addEventListener('click', () => {
  const room = state.room;
  if (!room || !room.rematch) return;
  if (state.role === 'player') net.send({ type: 'rematch' });
  else if (playName(state)) net.send({ type: 'join', code: room.rematch, name: playName(state) });
  else { // a spectator with no name yet: the lobby asks for one, the rematch as its invitation
    const code = room.rematch;
    net.send({ type: 'leave' });
    store.update((s) => { leaveRoom(s); s.invite = code; });
    history.replaceState(null, '', address(`?join=${code}`));
    requestAnimationFrame(() => $('#name').focus());
  }
});
$('#btn-finish-results').addEventListener('click', finishForMe);
$('#btn-back-race').addEventListener('click', () => {
  const race = storage.get('kr.race');
  const parent = state.room && state.room.parent;
  if (race && race.code === parent) {
    storage.set('kr.session', race); // resume as the race's player, on a fresh page
    storage.set('kr.race', null);
    location.reload();
  } else if (parent) {
    net.send({ type: 'watch', code: parent }); // e.g. another browser: watch it instead
  }
});
$('#btn-lobby').addEventListener('click', () => {
  if (state.room) forgetSession(state.room.code);
  net.send({ type: 'leave' });
  store.update(leaveRoom);
  history.replaceState(null, '', address());
  net.send({ type: 'rooms' });
  net.send({ type: 'challenges' });
});
