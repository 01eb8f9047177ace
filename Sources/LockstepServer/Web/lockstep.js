// Lockstep's JavaScript client: an ES module with no dependencies, served by every Lockstep server at /lockstep.js.
//
//   import { connectRoom } from "http://127.0.0.1:8080/lockstep.js";
//   const room = await connectRoom("ws://127.0.0.1:8080/rooms/demo", { name: "alice" });
//   room.subscribe((room) => render(room.state));
//   const version = await room.send({ type: "increment" });
//
// The room's state is a mirror of the server's: snapshots replace it, patches (RFC 6902) move it one version at a
// time, and a version gap makes the client ask for a fresh snapshot. Requests carry a session and a sequence number,
// so after a dropped connection the client resumes (`since=`, `epoch=`) and sends again only what the server has not
// acknowledged: every request is applied exactly once. A server that is going away (close code 1001: it drains on
// SIGTERM) has answered everything it read: the client reconnects at once, to the next address when given several.
//
// With `{ path: "/boards/7" }` (a JSON Pointer) the room's `state` is the value there (null while it does not exist)
// and patches are relative to it; they arrive only when it changes, so versions skip, and so they do for a client with
// a token (a room with private parts sends it nothing for changes it may not see). Requests name whole-room paths.
//
// With `{ keep: true }` (or `keep: storage`, any object with getItem, setItem and removeItem) the session, the
// requests not yet answered and the last state are kept in `localStorage`, one entry per room: a page loaded again
// shows the kept state at once, before any network is there, and sends what waits when the server answers, each
// request applied once. An entry that cannot be read, or was kept for another room, app, session or history of the
// room, is set aside (renamed with a `:set-aside:` suffix, and logged) and the client starts fresh. Two tabs must not
// keep the same room with the same session: give each its own `session` (or keep in one tab only).

/** The close code of a server going away (draining on SIGTERM). */
const GOING_AWAY = 1001;
/** The layout of a kept room this client writes; it reads this one and every older one. */
const KEPT_FORMAT = 1;

/** Why a request failed: the server's error code (`rejected`, `nothing_to_undo`, ...) and its message. */
export class LockstepError extends Error {
  constructor(code, message) {
    super(`${code}: ${message}`);
    this.name = "LockstepError";
    this.code = code;
  }
}

/**
 * Connects to `url` (`ws://HOST:PORT/rooms/ROOM`), or to the first of several addresses of servers sharing the room
 * (an array: the client moves to the next after a failed attempt or a server going away); resolves once the room's
 * state has arrived.
 */
export async function connectRoom(url, options = {}) {
  const room = new Room(url, options);
  await room.ready;
  return room;
}

/** One room, kept in step with the server. Create it with `connectRoom`. */
export class Room {
  constructor(
    url,
    {
      name, session, token, path, maxPending = 1000, reconnectDelay = 100, maxReconnectDelay = 5000, keep = false,
      app = "", presenceInterval = 50,
    } = {},
  ) {
    /** The addresses tried in turn; `urls[urlIndex]` is the one in use. */
    this.urls = Array.isArray(url) ? url : [url];
    this.urlIndex = 0;
    /** The part of the room followed, a JSON Pointer; "" for all of it (a `path=` in the URL does the same). */
    this.path = path ?? new URL(this.urls[0]).searchParams.get("path") ?? "";
    parsePointer(this.path);
    /** Whether versions may skip: a view, or a token that may hide private parts, only sees some changes. */
    this.versionsSkip = this.path !== "" || Boolean(token ?? new URL(this.urls[0]).searchParams.get("token"));
    this.name = name;
    this.session = session ?? randomSession();
    this.token = token;
    this.maxPending = maxPending;
    this.reconnectDelay = reconnectDelay;
    this.maxReconnectDelay = maxReconnectDelay;
    /** The state at `version` (the value at `path`), as JSON. */
    this.state = null;
    /** The version of `state`; -1 before the first snapshot. */
    this.version = -1;
    /** The room's epoch: a resume with another room's history gets a snapshot. */
    this.epoch = null;
    /** This connection's client id (`you`). */
    this.you = null;
    /** Who is in the room: `[{client, name, sub?, state?}]` (`state` once that client set one), `peerCount` in all. */
    this.peers = [];
    this.peerCount = 0;
    /** What this client says it is doing (`setPresence`); null for nothing. */
    this.presence = null;
    /** Shortest time between two presence states sent, in milliseconds: states set in between are merged. */
    this.presenceInterval = presenceInterval;
    this.presenceOwed = false;
    this.presenceSentAt = -Infinity;
    /** Steps that can be undone and redone now. */
    this.undoCount = 0;
    this.redoCount = 0;
    /** `connecting`, `open`, `offline` or `closed`. */
    this.status = "connecting";
    this.seq = 0;
    this.outbox = [];
    /** Requests answered `unavailable` in a row: each goes out again after a longer wait. */
    this.refusals = 0;
    this.listeners = new Set();
    this.closed = false;
    this.attempt = 0;
    this.ready = new Promise((resolve, reject) => {
      this.readyResolve = resolve;
      this.readyReject = reject;
    });
    /** Where the room is kept across page loads (null: nowhere), under `keptKey`, for the app named `app`. */
    this.storage = keep === true ? (globalThis.localStorage ?? null) : keep || null;
    this.app = app;
    this.room = new URL(this.urls[0]).pathname.split("/").pop();
    this.keptKey = `lockstep:${this.room}${this.path}`;
    /** The epoch of a kept state, checked against the server's at the first snapshot. */
    this.keptEpoch = null;
    if (this.storage) {
      this.restore(session);
      // A kept room works offline: its state (or nothing yet) shows now, and requests wait until the server answers.
      this.readyResolve(this);
    }
    this.open();
  }

  /** Requests not yet answered, kept ones included. */
  get pendingCount() {
    return this.outbox.length;
  }

  /** Calls `listener(room, message)` after every change of state, presence or status; returns an unsubscribe. */
  subscribe(listener) {
    this.listeners.add(listener);
    return () => this.listeners.delete(listener);
  }

  /**
   * Sends an action; resolves with the version that includes it once the server has acknowledged it. Answered
   * `unavailable`, it goes out again with its `seq` (see `sendAgainLater`) instead of rejecting.
   */
  send(action) {
    return this.request({ type: "action", action });
  }

  /**
   * Reverts the room's most recent change not yet undone, whoever made it. With `{mine: true}`, takes back this
   * client's own most recent change still in effect instead (its session's, so changes from before a reconnection
   * count), leaving others' later changes; rejects with `conflict` when it cannot, `nothing_to_undo` when none.
   */
  undo({ mine = false } = {}) {
    return this.request(mine ? { type: "undo", mine: true } : { type: "undo" });
  }

  /** Re-applies the most recently undone change; with `{mine: true}`, the latest one this client's undo took back. */
  redo({ mine = false } = {}) {
    return this.request(mine ? { type: "redo", mine: true } : { type: "redo" });
  }

  /** Takes the room back to the state it had at `version`, as one new change. */
  revert(version) {
    return this.request({ type: "revert", to: version });
  }

  /**
   * Has the server apply `action` after `after` milliseconds, as this client's change, even if nobody is connected
   * then; `timer` names it (scheduling a pending name replaces it). Resolves with `{timer, due}` once it is stored.
   */
  schedule(action, { after, timer } = {}) {
    const message = { type: "action", action, after };
    if (timer !== undefined) message.timer = timer;
    return this.request(message);
  }

  /** Cancels the room's pending timer `timer`; resolves with `{timer, due: null}`, also when none was pending. */
  cancel(timer) {
    return this.request({ type: "cancel", timer });
  }

  /**
   * Says what this client is doing (a cursor, "typing"): any JSON value of at most the server's `--presence-limit`
   * bytes, or null for nothing. Every client of the room sees it in `peers`; it is never part of the room's state.
   * Sent at most once per `presenceInterval` milliseconds, the latest state winning, and again after a reconnection.
   */
  setPresence(state) {
    if (this.closed) return;
    this.presence = state ?? null;
    this.presenceOwed = true;
    this.sendPresenceWhenDue();
  }

  /** Sends the owed presence state now, or once `presenceInterval` has passed since the last one. */
  sendPresenceWhenDue() {
    if (!this.presenceOwed || this.presenceTimer !== undefined || this.status !== "open") return;
    const wait = this.presenceSentAt + this.presenceInterval - Date.now();
    if (wait > 0) {
      this.presenceTimer = setTimeout(() => {
        this.presenceTimer = undefined;
        this.sendPresenceWhenDue();
      }, wait);
      return;
    }
    this.presenceOwed = false;
    this.presenceSentAt = Date.now();
    this.socket.send(JSON.stringify({ type: "presence", state: this.presence }));
  }

  /** Closes the connection for good; requests still pending fail (kept ones stay kept for the next page load). */
  close() {
    clearTimeout(this.presenceTimer);
    this.save();
    this.storage = null;
    this.closed = true;
    this.setStatus("closed");
    clearTimeout(this.retryTimer);
    if (this.socket) this.socket.close(1000);
    for (const entry of this.outbox.splice(0)) entry.reject(new LockstepError("closed", "the room was closed"));
  }

  request(message) {
    if (this.closed) return Promise.reject(new LockstepError("closed", "the room was closed"));
    if (this.outbox.length >= this.maxPending) {
      return Promise.reject(new LockstepError("outbox_full", `${this.maxPending} requests are already waiting`));
    }
    this.seq += 1;
    const entry = { ...message, id: `s${this.seq}`, seq: this.seq };
    return new Promise((resolve, reject) => {
      this.outbox.push({ message: entry, resolve, reject });
      // Kept before it may leave, so a reload sends it again with the same `seq`.
      this.save();
      if (this.status === "open") this.socket.send(JSON.stringify(entry));
    });
  }

  /** Reads the kept room, if it is one this client may use; otherwise sets it aside. */
  restore(session) {
    let raw;
    try {
      raw = this.storage.getItem(this.keptKey);
    } catch (error) {
      console.warn(`lockstep: cannot read the kept room ${this.keptKey}: ${error}`);
      return;
    }
    if (raw === null || raw === undefined) return;
    let kept;
    try {
      kept = JSON.parse(raw);
    } catch (error) {
      return this.setAside(raw, `it is not JSON (${error.message})`);
    }
    const valid = kept !== null && typeof kept === "object" && Number.isInteger(kept.format) && kept.format >= 1 &&
      typeof kept.session === "string" && Number.isInteger(kept.seq) && Array.isArray(kept.outbox) &&
      kept.outbox.every((message) => message && typeof message.id === "string" && Number.isInteger(message.seq));
    if (!valid) return this.setAside(raw, "it is not a kept room");
    if (kept.format > KEPT_FORMAT) {
      return this.setAside(raw, `it was written in format ${kept.format} by a newer client`);
    }
    if (kept.room !== this.room || kept.path !== this.path) {
      return this.setAside(raw, `it was kept for room ${kept.room}${kept.path}, not ${this.room}${this.path}`);
    }
    if (kept.app !== this.app) return this.setAside(raw, `it was kept for the app "${kept.app}", not "${this.app}"`);
    if (session && kept.session !== session) {
      return this.setAside(raw, `it was kept for the session ${kept.session}, not ${session}`);
    }
    this.session = kept.session;
    this.seq = kept.seq;
    if (kept.synced) {
      this.state = kept.state;
      this.version = kept.version;
      this.epoch = kept.epoch;
      this.keptEpoch = kept.epoch;
    }
    // Their promises ended with the page that made them: they are answered silently.
    const reject = (error) => {
      if (error.code !== "closed") this.notify({ type: "error", code: error.code, message: error.message });
    };
    this.outbox = kept.outbox.map((message) => ({ message, resolve() {}, reject, kept: true }));
  }

  /** Keeps `raw` under another key, says why, and removes the room's entry: the client starts fresh. */
  setAside(raw, reason) {
    const aside = `${this.keptKey}:set-aside:${Date.now()}`;
    try {
      this.storage.setItem(aside, raw);
    } catch {
      // Full storage: the entry is dropped rather than kept aside.
    }
    this.storage.removeItem(this.keptKey);
    console.warn(`lockstep: kept room ${this.keptKey} set aside as ${aside}: ${reason}; starting fresh`);
  }

  /** Writes the kept room now: the session, every request not yet answered, the state and its version. */
  save() {
    if (!this.storage) return;
    clearTimeout(this.saveTimer);
    this.saveTimer = undefined;
    const kept = {
      format: KEPT_FORMAT, app: this.app, room: this.room, path: this.path, session: this.session,
      epoch: this.epoch, synced: this.version >= 0, version: Math.max(this.version, 0), seq: this.seq,
      outbox: this.outbox.map((entry) => entry.message), state: this.state,
    };
    try {
      this.storage.setItem(this.keptKey, JSON.stringify(kept));
    } catch (error) {
      console.warn(`lockstep: cannot keep the room ${this.keptKey}: ${error}`);
    }
  }

  /** Writes the kept room soon, once for many changes in a row (the state may be large). */
  scheduleSave() {
    if (!this.storage || this.saveTimer !== undefined) return;
    this.saveTimer = setTimeout(() => this.save(), 250);
  }

  open() {
    const url = new URL(this.urls[this.urlIndex]);
    url.searchParams.set("session", this.session);
    if (this.name) url.searchParams.set("name", this.name);
    if (this.token) url.searchParams.set("token", this.token);
    if (this.path) url.searchParams.set("path", this.path);
    if (this.version >= 0 && this.epoch) {
      url.searchParams.set("since", String(this.version));
      url.searchParams.set("epoch", this.epoch);
    }
    const socket = new WebSocket(url);
    this.socket = socket;
    // A new connection starts with no presence state on the server.
    this.presenceOwed = this.presence !== null;
    socket.onmessage = (event) => this.receive(JSON.parse(event.data));
    socket.onclose = (event) => {
      if (socket !== this.socket || this.closed) return;
      if (event.code === 1008 && this.version < 0) {
        this.closed = true;
        this.readyReject(new LockstepError("unauthorized", event.reason || "the server refused this client"));
        return;
      }
      this.setStatus("offline");
      this.urlIndex = (this.urlIndex + 1) % this.urls.length;
      if (event.code === GOING_AWAY && this.attempt === 0) {
        // The server drains and answered what it read: reconnect now (the next open resets `attempt` once synced).
        this.attempt = 1;
        this.retryTimer = setTimeout(() => this.open(), 0);
        return;
      }
      const delay = this.backoff(this.attempt);
      this.attempt += 1;
      this.retryTimer = setTimeout(() => this.open(), delay * (0.5 + Math.random() / 2));
    };
  }

  receive(message) {
    switch (message.type) {
      case "snapshot":
        if (this.keptEpoch && message.epoch && message.epoch !== this.keptEpoch) {
          // The room's history started over: the kept requests were numbered for one that is gone.
          const raw = this.storage.getItem(this.keptKey) ?? "";
          this.setAside(raw, `the room's history changed (epoch ${message.epoch})`);
          this.outbox = this.outbox.filter((entry) => !entry.kept);
        }
        this.keptEpoch = null;
        this.state = message.state;
        this.version = message.version;
        this.takeCounts(message);
        this.connected(message);
        break;
      case "resume":
        if (message.version !== this.version) return this.resynchronise();
        this.keptEpoch = null;
        this.connected(message);
        break;
      case "patch":
        if (this.versionsSkip ? message.version <= this.version : message.version !== this.version + 1) {
          return this.resynchronise();
        }
        try {
          this.state = applyPatch(this.state, message.ops);
        } catch {
          return this.resynchronise();
        }
        this.version = message.version;
        this.takeCounts(message);
        this.scheduleSave();
        this.notify(message);
        break;
      case "ack":
        this.refusals = 0;
        this.settle(message.id, (entry) => entry.resolve(message.version));
        break;
      case "scheduled":
        this.settle(message.id, (entry) => entry.resolve({ timer: message.timer, due: message.due }));
        break;
      case "error":
        if (message.id === undefined) {
          this.notify(message);
        } else if (message.code === "unavailable" && this.outbox.some((entry) => entry.message.id === message.id)) {
          // Not stored this time, though an earlier connection's copy may have been: it goes out again with its
          // `seq`, which the server recognises if so (sent as a new request it could be applied twice).
          this.notify(message);
          this.sendAgainLater(message.id);
        } else {
          this.settle(message.id, (entry) => entry.reject(new LockstepError(message.code, message.message)));
        }
        break;
      case "presence":
        if (Array.isArray(message.changed)) {
          // Only states changed: each entry replaces that peer's (a state of null was cleared).
          const changed = new Map(message.changed.map((entry) => [entry.client, withoutNullState(entry)]));
          this.peers = this.peers.map((peer) => changed.get(peer.client) ?? peer);
        } else {
          this.peers = message.peers;
          this.peerCount = message.count ?? message.peers.length;
        }
        this.notify(message);
        break;
    }
  }

  /** A snapshot or resume opened the room: drop what the server already has, send the rest again, in order. */
  connected(message) {
    this.you = message.you;
    if (message.epoch) this.epoch = message.epoch;
    this.attempt = 0;
    const mark = message.seq ?? 0;
    while (this.outbox.length > 0 && this.outbox[0].message.seq <= mark) {
      this.outbox.shift().resolve(this.version);
    }
    this.setStatus("open");
    this.scheduleSave();
    for (const entry of this.outbox) this.socket.send(JSON.stringify(entry.message));
    this.sendPresenceWhenDue();
    this.readyResolve(this);
    this.notify(message);
  }

  /** A gap or a patch that does not apply: reconnect without `since=` for a fresh snapshot. */
  resynchronise() {
    this.version = -1;
    this.epoch = null;
    this.socket.close(1000);
  }

  /** Sends the request `id` again on this connection after a wait (the next connection sends it anyway). */
  sendAgainLater(id) {
    this.refusals += 1;
    const delay = this.backoff(this.refusals - 1);
    const socket = this.socket;
    setTimeout(() => {
      const entry = this.outbox.find((waiting) => waiting.message.id === id);
      if (entry && this.socket === socket && this.status === "open") socket.send(JSON.stringify(entry.message));
    }, delay);
  }

  /** The wait after `failures` failures in a row: `reconnectDelay`, doubled for each, at most `maxReconnectDelay`. */
  backoff(failures) {
    return Math.min(this.maxReconnectDelay, this.reconnectDelay * 2 ** failures);
  }

  settle(id, settle) {
    const index = this.outbox.findIndex((entry) => entry.message.id === id);
    if (index < 0) return;
    const [entry] = this.outbox.splice(index, 1);
    this.scheduleSave();
    settle(entry);
  }

  takeCounts(message) {
    this.undoCount = message.undo;
    this.redoCount = message.redo;
  }

  setStatus(status) {
    if (this.status === status) return;
    this.status = status;
    this.notify({ type: "status", status });
  }

  notify(message) {
    for (const listener of this.listeners) listener(this, message);
  }
}

/** A `changed` presence entry as `peers` lists it: without `state` when the client cleared it. */
function withoutNullState(entry) {
  if (entry.state !== null) return entry;
  const { state: _cleared, ...rest } = entry;
  return rest;
}

/** A new session name: 22 random characters of `[A-Za-z0-9_-]`. */
function randomSession() {
  const alphabet = "ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz0123456789_-";
  const bytes = crypto.getRandomValues(new Uint8Array(22));
  return Array.from(bytes, (byte) => alphabet[byte % 64]).join("");
}

// MARK: - RFC 6902 JSON Patch

/**
 * Applies `ops` (RFC 6902) to `document` and returns the result; `document` is left as it was, and so are the
 * parts of it the patch does not touch, which the result shares. Throws on the first operation that fails.
 */
export function applyPatch(document, ops) {
  if (!Array.isArray(ops)) throw new Error("a patch is an array of operations");
  let result = document;
  for (const op of ops) result = applyOperation(result, op);
  return result;
}

function applyOperation(document, op) {
  if (op === null || typeof op !== "object") throw new Error("an operation is an object");
  const path = parsePointer(op.path);
  switch (op.op) {
    case "add":
      requireValue(op);
      return setAt(document, path, op.value, "add");
    case "remove":
      getAt(document, path);
      return setAt(document, path, undefined, "remove");
    case "replace":
      requireValue(op);
      getAt(document, path);
      return setAt(document, path, op.value, "replace");
    case "move": {
      const from = parsePointer(op.from);
      if (from.length < path.length && from.every((token, index) => token === path[index])) {
        throw new Error("cannot move a value into itself");
      }
      const value = getAt(document, from);
      return setAt(setAt(document, from, undefined, "remove"), path, value, "add");
    }
    case "copy":
      return setAt(document, path, getAt(document, parsePointer(op.from)), "add");
    case "test":
      requireValue(op);
      if (!deepEqual(getAt(document, path), op.value)) throw new Error(`test failed at ${op.path}`);
      return document;
    default:
      throw new Error(`unknown operation ${JSON.stringify(op.op)}`);
  }
}

function requireValue(op) {
  if (!("value" in op)) throw new Error(`${op.op} needs a value`);
}

/** RFC 6901: "" is the whole document; "/a~1b/~0c" is ["a/b", "~c"]. */
function parsePointer(pointer) {
  if (typeof pointer !== "string") throw new Error("a path is a string");
  if (pointer === "") return [];
  if (!pointer.startsWith("/")) throw new Error(`a path starts with "/": ${pointer}`);
  return pointer
    .slice(1)
    .split("/")
    .map((token) => {
      if (/~[^01]|~$/.test(token)) throw new Error(`bad escape in ${pointer}`);
      return token.replace(/~1/g, "/").replace(/~0/g, "~");
    });
}

function arrayIndex(array, token, forAdd) {
  if (forAdd && token === "-") return array.length;
  if (!/^(0|[1-9][0-9]*)$/.test(token)) throw new Error(`not an array index: ${token}`);
  const index = Number(token);
  if (index > array.length || (!forAdd && index === array.length)) throw new Error(`index ${index} out of range`);
  return index;
}

function getAt(document, path) {
  let node = document;
  for (const token of path) {
    if (Array.isArray(node)) {
      node = node[arrayIndex(node, token, false)];
    } else if (node !== null && typeof node === "object" && Object.prototype.hasOwnProperty.call(node, token)) {
      node = node[token];
    } else {
      throw new Error(`no value at /${path.join("/")}`);
    }
  }
  return node;
}

/** A copy of `document` with the value at `path` added, replaced or removed, copying only the containers on the way. */
function setAt(document, path, value, kind) {
  if (path.length === 0) {
    if (kind === "remove") throw new Error("cannot remove the whole document");
    return value;
  }
  const [token, ...rest] = path;
  if (Array.isArray(document)) {
    const copy = document.slice();
    if (rest.length > 0) {
      const index = arrayIndex(document, token, false);
      copy[index] = setAt(document[index], rest, value, kind);
    } else if (kind === "add") {
      copy.splice(arrayIndex(document, token, true), 0, value);
    } else {
      const index = arrayIndex(document, token, false);
      if (kind === "remove") copy.splice(index, 1);
      else copy[index] = value;
    }
    return copy;
  }
  if (document === null || typeof document !== "object") throw new Error(`no container at ${token}`);
  const copy = { ...document };
  if (rest.length > 0) {
    if (!Object.prototype.hasOwnProperty.call(document, token)) throw new Error(`no value at ${token}`);
    Object.defineProperty(copy, token, {
      value: setAt(document[token], rest, value, kind), writable: true, enumerable: true, configurable: true,
    });
  } else if (kind === "remove") {
    delete copy[token];
  } else {
    // Defined, not assigned: a key such as "__proto__" is data here, never the object's prototype.
    Object.defineProperty(copy, token, { value, writable: true, enumerable: true, configurable: true });
  }
  return copy;
}

/** JSON equality: numbers by value, objects whatever their key order. */
export function deepEqual(a, b) {
  if (a === b) return true;
  if (typeof a !== typeof b || a === null || b === null || typeof a !== "object") return false;
  if (Array.isArray(a) !== Array.isArray(b)) return false;
  if (Array.isArray(a)) return a.length === b.length && a.every((item, index) => deepEqual(item, b[index]));
  const keys = Object.keys(a);
  if (keys.length !== Object.keys(b).length) return false;
  return keys.every((key) => Object.prototype.hasOwnProperty.call(b, key) && deepEqual(a[key], b[key]));
}
