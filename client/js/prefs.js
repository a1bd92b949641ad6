// The header's two choices, kept by this browser: the four-colour deck (shown by CSS,
// body[data-deck]) and the win chime (off until the player turns it on).

import { $, storage } from './shared.js';

export let chimes = 0; // the chimes played (the tests count them)

function showDeck(four) {
  document.body.dataset.deck = four ? 'four' : 'two';
  $('#btn-deck').setAttribute('aria-pressed', four ? 'true' : 'false');
}
showDeck(storage.get('kr.deck') === 'four');
$('#btn-deck').addEventListener('click', () => {
  const four = document.body.dataset.deck !== 'four';
  storage.set('kr.deck', four ? 'four' : 'two');
  showDeck(four);
});

$('#btn-sound').setAttribute('aria-pressed', storage.get('kr.sound') === true ? 'true' : 'false');
$('#btn-sound').addEventListener('click', () => {
  const on = storage.get('kr.sound') !== true;
  storage.set('kr.sound', on);
  $('#btn-sound').setAttribute('aria-pressed', on ? 'true' : 'false');
});

// A rising C E G C, when the player turned the sound on.
export function chime() {
  if (storage.get('kr.sound') !== true) return;
  chimes += 1;
  try {
    const audio = new AudioContext();
    [523.25, 659.25, 783.99, 1046.5].forEach((hz, i) => {
      const tone = audio.createOscillator();
      const gain = audio.createGain();
      tone.frequency.value = hz;
      const at = audio.currentTime + i * 0.12;
      gain.gain.setValueAtTime(0.0001, at);
      gain.gain.exponentialRampToValueAtTime(0.2, at + 0.02);
      gain.gain.exponentialRampToValueAtTime(0.0001, at + 0.4);
      tone.connect(gain).connect(audio.destination);
      tone.start(at);
      tone.stop(at + 0.45);
    });
    setTimeout(() => audio.close(), 1200);
  } catch { /* no audio here */ }
}
