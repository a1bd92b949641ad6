// The spectator's screen: follow one board large (and back to the grid), Leave.

import { $, address, net, state, store } from './shared.js';
import { leaveRoom } from './state.js';

$('#btn-stop-watch').addEventListener('click', () => {
  net.send({ type: 'leave' });
  store.update(leaveRoom);
  history.replaceState(null, '', address());
});
$('#watch-grid').addEventListener('click', (e) => {
  const cell = e.target.closest('.grid-cell');
  if (cell && state.role === 'spectator') store.update((s) => { s.follow = cell.dataset.player; });
});
$('#btn-unfollow').addEventListener('click', () => store.update((s) => { s.follow = null; }));
