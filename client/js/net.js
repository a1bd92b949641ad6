// The network: one WebSocket, JSON messages in and out (docs/protocol.md), reconnect
// with backoff. What to say after (re)connecting is the app's business (`onOpen`).

export function defaultUrl() {
  const params = new URLSearchParams(location.search);
  const forced = params.get('ws');
  if (forced) return forced;
  const scheme = location.protocol === 'https:' ? 'wss:' : 'ws:';
  return `${scheme}//${location.host}/ws`;
}

export class Net {
  constructor(url, { onMessage, onOpen, onStatus }) {
    this.url = url;
    this.onMessage = onMessage;
    this.onOpen = onOpen;
    this.onStatus = onStatus;
    this.ws = null;
    this.retry = 0;
    this.timer = null;
    this.pinger = null;
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
    ws.onopen = () => {
      this.retry = 0;
      this.onStatus('open');
      this.onOpen();
      clearInterval(this.pinger);
      this.pinger = setInterval(() => this.send({ type: 'ping', id: Date.now() }), 15000);
    };
    ws.onmessage = (event) => {
      let msg;
      try {
        msg = JSON.parse(event.data);
      } catch {
        console.error('not JSON from the server', event.data);
        return;
      }
      this.onMessage(msg);
    };
    ws.onclose = () => {
      if (this.ws !== ws) return;
      clearInterval(this.pinger);
      this.ws = null;
      this.onStatus('closed');
      if (!this.closedByUs) this.later();
    };
    ws.onerror = () => {}; // onclose follows
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
    this.ws.send(JSON.stringify(msg));
    return true;
  }

  // For tests and the "drop" debugging hook: close as a network drop would.
  drop() {
    if (this.ws) this.ws.close();
  }
}
