// The header's choices, kept by this browser: the table's theme and the card back (the
// preferences popover, body[data-theme] and body[data-back]: CSS variables), the
// four-colour deck (body[data-deck]) and the sound (off until the player turns it on):
// short, quiet tones made with the Web Audio API, no audio file.

import { $, storage } from './shared.js';

export let chimes = 0; // the win chimes played (the tests count them)
export const sounds = { move: 0, draw: 0, refusal: 0, start: 0 }; // the other sounds played

// ---- the table's theme and the card back ------------------------------------------------

export const THEMES = ['green', 'dark', 'light'];
export const BACKS = ['blue', 'red'];
// the browser's own bar, as the table (the manifest's theme_color is the green one)
const BAR = { green: '#0b5d2b', dark: '#16191e', light: '#dfe8dc' };

// The theme chosen; before any choice, the dark table on a system set to dark, else the
// green felt (the game's own look, whatever a light system says).
function firstTheme() {
  const kept = storage.get('kr.theme');
  if (THEMES.includes(kept)) return kept;
  return window.matchMedia('(prefers-color-scheme: dark)').matches ? 'dark' : 'green';
}

function showTheme(theme) {
  document.body.dataset.theme = theme;
  const bar = document.querySelector('meta[name="theme-color"]');
  if (bar) bar.setAttribute('content', BAR[theme]);
  for (const input of document.querySelectorAll('input[name="pref-theme"]')) input.checked = input.value === theme;
}

function showBack(back) {
  document.body.dataset.back = back;
  for (const input of document.querySelectorAll('input[name="pref-back"]')) input.checked = input.value === back;
}

showTheme(firstTheme());
showBack(BACKS.includes(storage.get('kr.back')) ? storage.get('kr.back') : 'blue');
for (const input of document.querySelectorAll('input[name="pref-theme"]')) {
  input.addEventListener('change', () => { storage.set('kr.theme', input.value); showTheme(input.value); });
}
for (const input of document.querySelectorAll('input[name="pref-back"]')) {
  input.addEventListener('change', () => { storage.set('kr.back', input.value); showBack(input.value); });
}

// ---- the four-colour deck ---------------------------------------------------------------

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

// ---- sound ------------------------------------------------------------------------------

const soundOn = () => storage.get('kr.sound') === true;
$('#btn-sound').setAttribute('aria-pressed', soundOn() ? 'true' : 'false');
$('#btn-sound').addEventListener('click', () => {
  const on = !soundOn();
  storage.set('kr.sound', on);
  $('#btn-sound').setAttribute('aria-pressed', on ? 'true' : 'false');
});

let audio = null; // one AudioContext for the page, made at the first sound
function output() {
  if (!audio) audio = new AudioContext();
  if (audio.state === 'suspended') audio.resume().catch(() => {});
  return audio;
}

// Tones [hz, start s, length s, wave, end hz] at a peak volume: each fades in in 10 ms and
// out by its end.
function play(tones, peak) {
  try {
    const out = output();
    for (const [hz, start, length, wave = 'sine', endHz = hz] of tones) {
      const tone = out.createOscillator();
      const gain = out.createGain();
      const at = out.currentTime + start;
      tone.type = wave;
      tone.frequency.setValueAtTime(hz, at);
      if (endHz !== hz) tone.frequency.exponentialRampToValueAtTime(endHz, at + length);
      gain.gain.setValueAtTime(0.0001, at);
      gain.gain.exponentialRampToValueAtTime(peak, at + 0.01);
      gain.gain.exponentialRampToValueAtTime(0.0001, at + length);
      tone.connect(gain).connect(out.destination);
      tone.start(at);
      tone.stop(at + length + 0.02);
    }
  } catch { /* no audio here */ }
}

// A card put down (a move, an undo): a soft low tick.
const MOVE = [[520, 0, 0.07, 'triangle', 300]];
// A draw (or the waste turned back): a quick flick, two light ticks.
const DRAW = [[1400, 0, 0.04, 'triangle', 900], [1100, 0.035, 0.04, 'triangle', 700]];
// A refusal: a short falling buzz.
const REFUSAL = [[220, 0, 0.16, 'square', 150]];
// The race starts: two notes up, "go".
const START = [[587.33, 0, 0.12], [880, 0.11, 0.2]];

// One of the player's sounds, when they turned the sound on: 'move', 'draw', 'refusal'
// or 'start'.
export function sound(kind) {
  if (!soundOn()) return;
  sounds[kind] += 1;
  if (kind === 'move') play(MOVE, 0.08);
  else if (kind === 'draw') play(DRAW, 0.05);
  else if (kind === 'refusal') play(REFUSAL, 0.04);
  else if (kind === 'start') play(START, 0.1);
}

// A rising C E G C when the player wins.
export function chime() {
  if (!soundOn()) return;
  chimes += 1;
  play([523.25, 659.25, 783.99, 1046.5].map((hz, i) => [hz, i * 0.12, 0.4]), 0.2);
}
