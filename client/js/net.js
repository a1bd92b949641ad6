// The network: one WebSocket, JSON messages in and out (docs/protocol.md), reconnect
// with backoff. What to say after (re)connecting is the app's business (`onOpen`).
//
// A connection can die without closing (a stalled proxy, a phone changing networks):
// the socket stays "open" and whatever is sent waits in the dark. So every ping expects
// its pong: no pong within PONG_WAIT_MS means the connection is stalled, and it is
// dropped (quietly: its handlers are detached) and a new one made at once. A ping goes
// every PING_MS; and when something that expects an answer is sent (`probe`), nothing at
// all coming back within PONG_WAIT_MS is a stall too, so a move that goes nowhere is
// noticed within a few seconds without a ping of its own.
//
// The server closes a connection that sends more than its rate (docs/protocol.md:
// KR_RATE 20 a second, KR_BURST 40): the client keeps under it (`wait`), with a margin.

export const PING_MS = 5000;
export const PONG_WAIT_MS = 3000;
const CONNECT_WAIT_MS = 10000; // a connection attempt that hangs this long is given up
export const SEND_RATE = 15; // messages a second the client sends at most, sustained
const SEND_BURST = 30; // ... and at once

export function defaultUrl() {
  const params = new URLSearchParams(location.search);
  const forced = params.get('ws');
  if (forced) return forced;
  const scheme = location.protocol === 'https:' ? 'wss:' : 'ws:';
  return `${scheme}//${location.host}/ws`;
}

export class Net {
  constructor(url, { onMessage, onOpen, onStatus, onPong }) {
    this.url = url;
    this.onMessage = onMessage;
    this.onOpen = onOpen;
    this.onStatus = onStatus;
    this.onPong = onPong || (() => {});
    this.ws = null;
    this.retry = 0;
    this.timer = null;
    this.pinger = null;
    this.waiting = null; // the ping waiting for its pong: {id, at, timer}
    this.pingId = 0;
    this.expecting = null; // a timer: something was sent that expects an answer
    this.credit = SEND_BURST; // messages that may go now (refilled at SEND_RATE a second)
    this.stamp = Date.now();
    this.closedByUs = false;
    window.addEventListener('online', () => this.reconnectNow());
  }

  connect() {
    clearTimeout(this.timer);
    this.onStatus('connecting');
    let ws;
    try {
      ws = new WebSocket(this.url);
    } catch (err) {
      console.error('websocket', err);
      this.later();
      return;
    }
    this.ws = ws;
    // A handshake that hangs (the network is dead) is given up, without closing it
    // (closing a socket still connecting is an error in the console): if it ever opens
    // it is closed then; meanwhile another attempt goes.
    const hung = setTimeout(() => {
      if (this.ws !== ws || ws.readyState !== WebSocket.CONNECTING) return;
      this.abandon(ws);
      this.later();
    }, CONNECT_WAIT_MS);
    ws.onopen = () => {
      clearTimeout(hung);
      this.retry = 0;
      this.onStatus('open');
      this.onOpen();
      clearInterval(this.pinger);
      this.pinger = setInterval(() => this.ping(), PING_MS);
    };
    ws.onmessage = (event) => {
      let msg;
      try {
        msg = JSON.parse(event.data);
      } catch {
        console.error('not JSON from the server', event.data);
        return;
      }
      if (this.expecting) {
        clearTimeout(this.expecting);
        this.expecting = null;
      }
      if (msg.type === 'pong' && this.waiting && msg.id === this.waiting.id) {
        clearTimeout(this.waiting.timer);
        this.onPong(Date.now() - this.waiting.at);
        this.waiting = null;
      }
      this.onMessage(msg);
    };
    ws.onclose = () => {
      clearTimeout(hung);
      if (this.ws !== ws) return;
      this.stopPinging();
      this.ws = null;
      this.onStatus('closed');
      if (!this.closedByUs) this.later();
    };
    ws.onerror = () => {}; // onclose follows
  }

  // Leave a socket behind: no more of its messages are read, and it closes as soon as
  // it may without an error.
  abandon(ws) {
    ws.onmessage = null;
    ws.onclose = null;
    ws.onerror = null;
    if (ws.readyState === WebSocket.CONNECTING) ws.onopen = () => ws.close();
    else {
      ws.onopen = null;
      try { ws.close(); } catch { /* already closing */ }
    }
    if (this.ws === ws) {
      this.ws = null;
      this.stopPinging();
    }
  }

  stopPinging() {
    clearInterval(this.pinger);
    if (this.waiting) clearTimeout(this.waiting.timer);
    this.waiting = null;
    clearTimeout(this.expecting);
    this.expecting = null;
  }

  ping() {
    if (!this.open || this.waiting || this.wait() > 0) return; // (a busy connection is alive)
    this.pingId += 1;
    const id = this.pingId;
    const ws = this.ws;
    const timer = setTimeout(() => this.stalled(ws), PONG_WAIT_MS);
    this.waiting = { id, at: Date.now(), timer };
    this.spend();
    ws.send(JSON.stringify({ type: 'ping', id }));
  }

  // Something was sent that expects an answer: nothing at all heard within PONG_WAIT_MS
  // means the connection is stalled.
  probe() {
    if (!this.open || this.expecting) return;
    const ws = this.ws;
    this.expecting = setTimeout(() => {
      this.expecting = null;
      this.stalled(ws);
    }, PONG_WAIT_MS);
  }

  // How long (ms) until a message may go within the client's own rate (0: now).
  wait() {
    const now = Date.now();
    this.credit = Math.min(SEND_BURST, this.credit + ((now - this.stamp) / 1000) * SEND_RATE);
    this.stamp = now;
    return this.credit >= 1 ? 0 : Math.ceil(((1 - this.credit) / SEND_RATE) * 1000);
  }

  spend() {
    this.wait();
    this.credit -= 1;
  }

  // No pong in time: the connection is dead though not closed. Drop it and reconnect.
  stalled(ws) {
    if (this.ws !== ws) return;
    this.abandon(ws);
    this.onStatus('stalled');
    this.retry = 0;
    this.connect();
  }

  later() {
    const delay = Math.min(5000, 250 * 2 ** this.retry) + Math.random() * 200;
    this.retry += 1;
    clearTimeout(this.timer);
    this.timer = setTimeout(() => this.connect(), delay);
  }

  reconnectNow() {
    if (this.ws && this.ws.readyState !== WebSocket.CLOSED) return;
    this.retry = 0;
    this.connect();
  }

  get open() {
    return Boolean(this.ws) && this.ws.readyState === WebSocket.OPEN;
  }

  send(msg) {
    if (!this.open) return false;
    this.spend();
    this.ws.send(JSON.stringify(msg));
    return true;
  }

  // For tests and the "drop" debugging hook: close as a network drop would.
  drop() {
    if (this.ws) this.ws.close();
  }
}
