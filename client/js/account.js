// Who the player is (docs/protocol.md, "Players: guests and accounts"): the device
// identity this browser makes once, the `hello` said first on every connection, and the
// account area of the header (claim a name, sign in, sign out, change the password).
// Passwords go from the form to the socket and nowhere else: never into the state,
// storage, the address or a log.

import { signedIn } from './state.js';

const DEVICE_KEY = 'kr.device';
const SESSION_KEY = 'kr.account';
const DEVICE_FORM = /^[A-Za-z0-9_-]{32,64}$/;

function base64url(bytes) {
  let bin = '';
  for (const b of bytes) bin += String.fromCharCode(b);
  return btoa(bin).replace(/\+/g, '-').replace(/\//g, '_').replace(/=+$/, '');
}

// This browser's device identity: 256 random bits, base64url (43 characters), made on
// the first visit and kept in localStorage.
export function deviceIdentity(storage) {
  const kept = storage.get(DEVICE_KEY);
  if (typeof kept === 'string' && DEVICE_FORM.test(kept)) return kept;
  const made = base64url(crypto.getRandomValues(new Uint8Array(32)));
  storage.set(DEVICE_KEY, made);
  return made;
}

function countdownText(seconds) {
  if (seconds < 60) return `${seconds} s`;
  return `${Math.floor(seconds / 60)}:${String(seconds % 60).padStart(2, '0')}`;
}

const ABOUT = new Set(['hello', 'register', 'sign_in', 'sign_out', 'change_password']);
const FORMS = { register: '#register-form', sign_in: '#signin-form', change_password: '#password-form' };

export class Account {
  // store: the app's Store; storage: {get, set}; send(msg) -> bool; toast(text, kind)
  constructor({ store, storage, send, toast }) {
    this.store = store;
    this.storage = storage;
    this.send = send;
    this.toast = toast;
    this.device = deviceIdentity(storage);
    this.busy = null; // the account request waiting for its answer
    this.limitUntil = 0; // rate limited until (ms, local clock)
    this.limitText = '';
    this.limitTimer = null;
    this.$ = (sel) => document.querySelector(sel);
    this.wire();
    store.subscribe((s) => this.render(s));
  }

  // The first message of every connection.
  hello() {
    this.busy = null;
    const session = this.storage.get(SESSION_KEY);
    const msg = { type: 'hello', device: this.device };
    if (typeof session === 'string' && session) msg.session = session;
    return msg;
  }

  // An `identity` answer: keep the session it brings; a guest again forgets it.
  onIdentity(msg) {
    const was = this.busy;
    this.busy = null;
    if (msg.session) this.storage.set(SESSION_KEY, msg.session);
    else if (!msg.player || msg.player.guest) this.storage.set(SESSION_KEY, null);
    if (was) {
      for (const sel of Object.values(FORMS)) this.$(sel).reset();
      this.showError('');
    }
    if (was) this.close();
    if (was === 'change_password') this.toast('Password changed: every other device is signed out');
    this.render(this.store.state);
  }

  // An `error`: true when it was the account's (shown in the account area).
  onError(msg) {
    if (!ABOUT.has(msg.about)) return false;
    this.busy = null;
    if (msg.about === 'hello') {
      if (msg.reason === 'bad_session') {
        // The session ended (signed out elsewhere, password changed, expired): a guest.
        this.storage.set(SESSION_KEY, null);
        this.toast('Your session has ended: you play as a guest', 'error');
        this.send({ type: 'hello', device: this.device });
      } else {
        console.warn('hello refused', msg.reason);
      }
      return true;
    }
    if (msg.reason === 'rate_limited' && typeof msg.retry_after === 'number') {
      this.rateLimited(msg);
    } else {
      this.open();
      this.showError(msg.message || msg.reason, msg.reason);
    }
    this.render(this.store.state);
    return true;
  }

  rateLimited(msg) {
    this.open();
    this.limitUntil = Date.now() + msg.retry_after * 1000;
    this.limitText = (msg.message || 'too many attempts').replace(/;\s*try again.*$/, '');
    clearInterval(this.limitTimer);
    const tick = () => {
      const left = Math.ceil((this.limitUntil - Date.now()) / 1000);
      if (left <= 0) {
        clearInterval(this.limitTimer);
        this.limitTimer = null;
        this.limitUntil = 0;
        this.showError('');
      } else {
        this.showError(`${this.limitText}: try again in ${countdownText(left)}`, 'rate_limited');
      }
      this.render(this.store.state);
    };
    tick();
    this.limitTimer = setInterval(tick, 1000);
  }

  showError(text, reason = '') {
    const box = this.$('#account-error');
    box.textContent = text;
    box.dataset.reason = reason;
    box.hidden = !text;
  }

  request(about, msg) {
    if (this.busy || this.limitUntil) return;
    this.showError('');
    if (this.send(msg)) this.busy = about;
    else this.showError('Offline: try again once connected', 'offline');
    this.render(this.store.state);
  }

  open(focus) {
    const panel = this.$('#account-panel');
    panel.hidden = false;
    for (const id of ['#btn-claim', '#btn-signin', '#btn-account']) this.$(id).setAttribute('aria-expanded', 'true');
    if (focus) this.$(focus).focus();
  }

  close() {
    this.$('#account-panel').hidden = true;
    for (const id of ['#btn-claim', '#btn-signin', '#btn-account']) this.$(id).setAttribute('aria-expanded', 'false');
  }

  wire() {
    const $ = this.$;
    $('#btn-claim').addEventListener('click', () => {
      // the name the guest plays under, to claim as it is (or to change): the form's
      // field, when still empty, takes it
      const field = $('#register-form [name="name"]');
      if (!field.value && this.store.state.name) field.value = this.store.state.name;
      this.open('#register-form [name="name"]');
    });
    $('#btn-signin').addEventListener('click', () => this.open('#signin-form [name="name"]'));
    $('#btn-account').addEventListener('click', () => {
      if ($('#account-panel').hidden) this.open('#btn-signout');
      else this.close();
    });
    $('#btn-account-close').addEventListener('click', () => this.close());
    $('#account-panel').addEventListener('keydown', (e) => {
      if (e.key === 'Escape') this.close();
    });
    const submit = (sel, about, build) => {
      $(sel).addEventListener('submit', (e) => {
        e.preventDefault(); // never a real submission: the password stays out of any address
        const f = new FormData(e.target);
        this.request(about, build(f));
      });
    };
    submit('#register-form', 'register', (f) => ({
      type: 'register', name: String(f.get('name')).trim(), password: String(f.get('password')),
    }));
    submit('#signin-form', 'sign_in', (f) => ({
      type: 'sign_in', name: String(f.get('name')).trim(), password: String(f.get('password')),
    }));
    submit('#password-form', 'change_password', (f) => ({
      type: 'change_password', password: String(f.get('password')), new_password: String(f.get('new_password')),
    }));
    $('#btn-signout').addEventListener('click', () => this.request('sign_out', { type: 'sign_out' }));
    $('#btn-signout-all').addEventListener('click', () => this.request('sign_out', { type: 'sign_out', everywhere: true }));
  }

  render(state) {
    const $ = this.$;
    const identity = state.identity && state.identity.player;
    const account = signedIn(state);
    const name = account ? identity.name : state.name || 'Guest';
    if ($('#me-name').textContent !== name) $('#me-name').textContent = name;
    $('#me-guest').hidden = account || !state.name;
    $('#account').dataset.state = account ? 'account' : identity ? 'guest' : 'unknown';
    $('#btn-claim').hidden = account;
    $('#btn-signin').hidden = account;
    $('#btn-account').hidden = !account;
    $('#account-guest').hidden = account;
    $('#account-signed').hidden = !account;
    if (account && $('#account-name').textContent !== identity.name) {
      $('#account-name').textContent = identity.name;
      $('#password-form [name="username"]').value = identity.name; // for password managers
    }
    const blocked = Boolean(this.busy || this.limitUntil || state.conn !== 'open');
    for (const btn of $('#account-panel').querySelectorAll('button[type="submit"], #btn-signout, #btn-signout-all')) {
      btn.disabled = blocked;
    }
    $('#account-panel').setAttribute('aria-busy', String(Boolean(this.busy)));
  }
}
