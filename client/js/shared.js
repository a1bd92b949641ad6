// What the app's modules share, by explicit import: the store (the one state), the
// connection, the renderer, the browser's storage, the page's address, and the notices
// every screen uses (a toast, the press-twice confirmation, the share sheet).

import { Net, defaultUrl } from './net.js';
import { Renderer } from './render.js';
import { Store, initialState } from './state.js';

export const $ = (sel) => document.querySelector(sel);
export const params = new URLSearchParams(location.search);

export const storage = {
  get(key) {
    try { return JSON.parse(localStorage.getItem(key)); } catch { return null; }
  },
  set(key, value) {
    try {
      if (value == null) localStorage.removeItem(key);
      else localStorage.setItem(key, JSON.stringify(value));
    } catch { /* private mode: nothing kept */ }
  },
};

export const store = new Store(initialState());
export const state = store.state;
state.name = storage.get('kr.name') || '';
state.solved = storage.get('kr.solved');

export const renderer = new Renderer(store);
// The one connection. What is said on opening it and what each message does are
// connection.js's (it sets `net.onOpen` and `net.onMessage`); app.js connects once
// every module is wired.
export const net = new Net(defaultUrl(), {
  onMessage: () => {},
  onOpen: () => {},
  onStatus: (status) => store.update((s) => {
    // a stalled connection (no pong in time) is dropped and made again: reconnecting
    s.conn = status === 'stalled' ? 'connecting' : status;
    if (status === 'open') s.everConnected = true;
  }),
  onPong: (ms) => store.update((s) => { s.lag = ms; }),
});

// The page's address without its query (the hash route, e.g. a profile, is kept).
export function address(query = '') {
  return `${location.pathname}${query}${location.hash}`;
}

// The stored session (a player's token, shared by this browser's tabs) is forgotten only
// when it is the session of the room this tab leaves: another tab may be racing on it.
export function forgetSession(code) {
  const session = storage.get('kr.session');
  if (session && session.code === code) storage.set('kr.session', null);
}

let toastTimer = null;
export function toast(message, kind = 'info') {
  const box = $('#toast');
  box.textContent = message;
  box.dataset.kind = kind;
  box.hidden = false;
  clearTimeout(toastTimer);
  toastTimer = setTimeout(() => { box.hidden = true; }, 3500);
}

// A button whose action cannot be taken back asks first: a press arms it (it says
// `question` for 3 s) and only a second press meanwhile confirms (true).
const armed = new Map(); // button -> {timer, disarm}
export function confirmed(button, question) {
  const arm = armed.get(button);
  if (arm) {
    clearTimeout(arm.timer);
    arm.disarm();
    return true;
  }
  const label = button.textContent;
  const aria = button.getAttribute('aria-label');
  const disarm = () => {
    armed.delete(button);
    button.textContent = label;
    if (aria) button.setAttribute('aria-label', aria);
  };
  button.textContent = question;
  if (aria) button.setAttribute('aria-label', question);
  armed.set(button, { timer: setTimeout(disarm, 3000), disarm });
  return false;
}

// The system's share sheet (phones, some desktops), where the browser has one: the
// buttons show only then. A share the player cancels is no error.
for (const button of document.querySelectorAll('[data-native-share]')) button.hidden = !navigator.share;
export async function nativeShare(data) {
  try {
    await navigator.share(data);
  } catch (err) {
    if (err && err.name !== 'AbortError') toast('Could not share: copy the link instead', 'error');
  }
}

// The browser's own SHA-256 (Web Crypto), in hex: the commitment checks.
export async function sha256Hex(text) {
  const digest = await crypto.subtle.digest('SHA-256', new TextEncoder().encode(text));
  return [...new Uint8Array(digest)].map((b) => b.toString(16).padStart(2, '0')).join('');
}
