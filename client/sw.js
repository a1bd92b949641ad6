// Klondike Race's service worker: the client's shell (its own files) kept in a cache of
// this version, so the page opens from it; a clear offline page when the server cannot be
// reached. Nothing else is cached or answered here: the WebSocket, /api/, /healthz, the
// replay links and every other route go to the network as if there were no worker.
//
// The server writes SHELL below as it serves this file: every file of the client with its
// SHA-256, and a version over them. A deploy that changes any file changes this file, so
// the browser installs the new worker, which fetches the new shell (each file checked
// against its hash: a stale copy from a cache on the way fails the install, tried again
// at the next visit) into a new cache, takes over and deletes the old ones
// (docs/client.md, "Installable, and the service worker").

const SHELL = "__KR_SHELL__";
const OK = typeof SHELL === 'object' && SHELL !== null; // not served by the race server: do nothing
const CACHE = OK ? `kr-shell-${SHELL.version}` : null;
const FILES = OK ? Object.keys(SHELL.files) : [];
const scope = () => new URL(self.registration.scope);
const url = (file) => new URL(file, scope()).href;
const PAGE = 'index.html';
const OFFLINE = 'offline.html';

async function hex(buffer) {
  const digest = await crypto.subtle.digest('SHA-256', buffer);
  return [...new Uint8Array(digest)].map((b) => b.toString(16).padStart(2, '0')).join('');
}

self.addEventListener('install', (event) => {
  if (!OK) return;
  event.waitUntil((async () => {
    const cache = await caches.open(CACHE);
    await Promise.all(FILES.map(async (file) => {
      const answer = await fetch(url(file), { cache: 'no-store' });
      const body = await answer.clone().arrayBuffer();
      if (!answer.ok || await hex(body) !== SHELL.files[file]) throw new Error(`${file}: not this version`);
      await cache.put(url(file), answer);
    }));
    await self.skipWaiting();
  })());
});

self.addEventListener('activate', (event) => {
  event.waitUntil((async () => {
    for (const name of await caches.keys()) {
      if (name.startsWith('kr-shell-') && name !== CACHE) await caches.delete(name);
    }
    await self.clients.claim();
  })());
});

self.addEventListener('fetch', (event) => {
  const request = event.request;
  if (!OK || request.method !== 'GET') return;
  const address = new URL(request.url);
  const base = scope();
  if (address.origin !== base.origin || !address.pathname.startsWith(base.pathname)) return;
  const file = address.pathname.slice(base.pathname.length);
  if (request.mode === 'navigate') {
    if (file !== '' && file !== PAGE) return; // a replay link, /api/ opened: the network's
    event.respondWith(page(request));
    return;
  }
  if (!Object.hasOwn(SHELL.files, file) || address.search) return;
  event.respondWith(caches.open(CACHE)
    .then((cache) => cache.match(url(file)))
    .then((kept) => kept || fetch(request)));
});

// The page: asked of the server first (there is no game without it); answered from this
// version's shell, so that the page and its modules are one version. Offline, or the
// server down: the offline page.
async function page(request) {
  const cache = await caches.open(CACHE);
  try {
    const answer = await fetch(request);
    if (!answer.ok) return answer;
    return (await cache.match(url(PAGE))) || answer;
  } catch {
    return (await cache.match(url(OFFLINE))) || Response.error();
  }
}
