// The waiting room: its invitation link (Copy, Share…), Ready, Start, Leave.

import { $, nativeShare, net, state, toast } from './shared.js';

$('#btn-share-room').addEventListener('click', () => {
  const code = state.room ? state.room.code : '';
  nativeShare({ title: 'Klondike Race', text: `Race me at Klondike Race: room ${code}`, url: $('#room-link').value });
});
$('#btn-copy').addEventListener('click', async () => {
  const link = $('#room-link').value;
  try {
    await navigator.clipboard.writeText(link);
    toast('Link copied');
  } catch {
    $('#room-link').select();
  }
});
$('#btn-ready').addEventListener('click', () => {
  const me = state.room.players.find((p) => p.id === state.player);
  net.send({ type: 'ready', ready: !(me && me.ready) });
});
$('#btn-start').addEventListener('click', () => net.send({ type: 'start' }));
$('#btn-leave').addEventListener('click', () => net.send({ type: 'leave' }));
