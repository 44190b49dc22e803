// Live run events, one connection per browser.
//
// A browser keeps at most six connections to a host (HTTP/1.1): one event stream per open run
// page would use them all up at the sixth tab and freeze the dashboard. So one tab, the
// leader, holds a single stream of every run's events (GET /api/events) and passes each event
// to the other tabs over a BroadcastChannel. The leader is elected with the Web Locks API: the
// tab holding the lock leads; when it closes, the next tab waiting for the lock takes over and
// opens the stream. Where the Web Locks API is missing (a page served over plain http from
// another machine is not a secure context) a lease in localStorage elects the tab instead (at
// the end of this file); without BroadcastChannel each tab opens its own stream, still one per
// tab rather than one per run page.
//
//   watchRun(id, (kind, data) => ...)  kind: "status" | "generation" | "end"; returns unwatch
//   onConnection((state) => ...)       state: "connecting" | "open" | "lost"; returns unwatch
//   reconnect()                        opens the stream afresh (after the server came back)

import { apiUrl } from "./api.js";

const NAME = "kalah-tuner-events";
const KINDS = ["status", "generation", "end"];
/** How long the leader waits before it opens a stream the server closed. */
const RETRY_MS = 3000;

const handlers = new Map();
const connWatchers = new Set();
let connState = "connecting";
let started = false;
let channel = null;
let leader = false;
let es = null;
let retryTimer = null;
let openedAt = 0;
/** Names the stream now open: a new one each time a holder opens it. */
let epoch = null;
let opened = 0;

/** Whether this tab holds the stream (for the tests and the curious). */
export function isLeader() {
  return leader;
}

export function connectionState() {
  return connState;
}

export function watchRun(id, fn) {
  start();
  if (!handlers.has(id)) handlers.set(id, new Set());
  handlers.get(id).add(fn);
  return () => {
    const set = handlers.get(id);
    if (!set) return;
    set.delete(fn);
    if (!set.size) handlers.delete(id);
  };
}

export function onConnection(fn) {
  start();
  connWatchers.add(fn);
  return () => connWatchers.delete(fn);
}

export function reconnect() {
  if (!started) return;
  if (leader) {
    // A stream opened a moment ago is fresh enough.
    if (connState === "open" && Date.now() - openedAt < 2000) return;
    openStream();
  } else if (channel) {
    channel.postMessage({ type: "reconnect" });
  }
}

function dispatch(kind, data) {
  const id = data && (data.run_id ?? data.id);
  for (const fn of [...(handlers.get(id) || [])]) {
    try {
      fn(kind, data);
    } catch (e) {
      console.error(e);
    }
  }
}

function setConn(state) {
  if (state === connState) return;
  connState = state;
  for (const fn of [...connWatchers]) {
    try {
      fn(state);
    } catch (e) {
      console.error(e);
    }
  }
}

function handle(msg) {
  if (!msg || typeof msg !== "object") return;
  if (msg.type === "event") dispatch(msg.kind, msg.data);
  else if (msg.type === "conn") {
    // A stream opened afresh (another holder, a reconnect) may have missed events: the
    // listeners see it go down and up, and catch up.
    if (msg.state === "open" && connState === "open" && msg.epoch && msg.epoch !== epoch) setConn("connecting");
    if (msg.epoch) epoch = msg.epoch;
    setConn(msg.state);
  }
}

/** In the leader: handles a message here and passes it to every other tab. */
function announce(msg) {
  handle(msg);
  if (channel) channel.postMessage(msg);
}

function closeStream() {
  clearTimeout(retryTimer);
  retryTimer = null;
  if (es) es.close();
  es = null;
}

function openStream() {
  closeStream();
  const source = new EventSource(apiUrl("events"));
  es = source;
  source.addEventListener("open", () => {
    if (es !== source) return;
    openedAt = Date.now();
    announce({ type: "conn", state: "open", epoch: `${tabId}.${++opened}` });
  });
  for (const kind of KINDS) {
    source.addEventListener(kind, (ev) => {
      if (es !== source) return;
      let data;
      try {
        data = JSON.parse(ev.data);
      } catch {
        return;
      }
      announce({ type: "event", kind, data });
    });
  }
  source.addEventListener("error", () => {
    if (es !== source) return;
    announce({ type: "conn", state: "lost" });
    // CLOSED: the server answered with an error; the browser will not try again by itself.
    if (source.readyState === EventSource.CLOSED) {
      es = null;
      retryTimer = setTimeout(openStream, RETRY_MS);
    }
  });
}

function start() {
  if (started) return;
  started = true;
  if (!("EventSource" in window)) {
    setConn("lost");
    return;
  }
  if (!("BroadcastChannel" in window)) {
    leader = true;
    openStream();
    return;
  }
  const locks = navigator.locks && typeof navigator.locks.request === "function";
  channel = new BroadcastChannel(NAME);
  channel.onmessage = (e) => {
    const msg = e.data;
    if (!msg || typeof msg !== "object") return;
    if (msg.type === "hello") {
      // A new tab asks how the stream is.
      if (leader) channel.postMessage({ type: "conn", state: connState, epoch });
    } else if (msg.type === "reconnect") {
      if (leader) reconnect();
    } else if (msg.type === "resign") {
      // The holder closes: no stream until another tab opens one (with Web Locks the next
      // tab gets the lock at once; with the lease, one tab wins it soon).
      setConn("connecting");
      if (!locks) setTimeout(leaseTick, Math.random() * 300);
    } else {
      handle(msg);
    }
  };
  if (!locks) {
    leaseElection();
    channel.postMessage({ type: "hello" });
    return;
  }
  addEventListener("pagehide", () => {
    if (leader && channel) channel.postMessage({ type: "resign" });
  });
  navigator.locks
    .request(NAME, () => {
      leader = true;
      openStream();
      // Held until the tab closes.
      return new Promise(() => {});
    })
    .catch(() => {
      // No lock after all: this tab streams for itself.
      if (!leader) {
        channel.close();
        channel = null;
        leader = true;
        openStream();
      }
    });
  channel.postMessage({ type: "hello" });
}

// Without the Web Locks API (plain http from another machine is no secure context), a lease
// in localStorage elects the holder: it renews the lease every LEASE_MS; a tab that finds the
// lease older than LEASE_STALE_MS claims it, and holds the stream if its claim is still there a
// moment later. A holder that finds the lease taken (its renewals came late, say in a
// throttled background tab) closes its stream.
const LEASE_KEY = "kalah-tuner.events-holder";
const LEASE_MS = 2000;
const LEASE_STALE_MS = 6000;
const tabId = Math.random().toString(36).slice(2) + Date.now().toString(36);

function readLease() {
  try {
    return JSON.parse(localStorage.getItem(LEASE_KEY) || "null");
  } catch {
    return null;
  }
}

function writeLease() {
  localStorage.setItem(LEASE_KEY, JSON.stringify({ tab: tabId, t: Date.now() }));
}

let claiming = false;
function leaseTick() {
  let lease;
  try {
    lease = readLease();
    if (leader) {
      if (lease && lease.tab !== tabId) {
        leader = false;
        closeStream();
      } else writeLease();
      return;
    }
    if (claiming || (lease && Date.now() - lease.t < LEASE_STALE_MS)) return;
    claiming = true;
    writeLease();
  } catch {
    // No storage at all: this tab streams for itself.
    if (!leader) {
      leader = true;
      openStream();
    }
    return;
  }
  setTimeout(() => {
    claiming = false;
    const now = readLease();
    if (!leader && now && now.tab === tabId) {
      leader = true;
      openStream();
    }
  }, 300);
}

function leaseElection() {
  leaseTick();
  setInterval(leaseTick, LEASE_MS);
  addEventListener("pagehide", () => {
    if (!leader) return;
    try {
      localStorage.removeItem(LEASE_KEY);
    } catch {
      // Nothing to hand over.
    }
    if (channel) channel.postMessage({ type: "resign" });
  });
}
