// TypeScript declarations for Lockstep's JavaScript client, served beside it at /lockstep.d.ts.
//
//   import { connectRoom, type Room } from "http://127.0.0.1:8080/lockstep.js";
//   const room: Room<{ count: number }> = await connectRoom("ws://127.0.0.1:8080/rooms/demo");
//
// Deno finds them from the module's `X-TypeScript-Types` header; for TypeScript, save both files side by side.
// `State` is the type of the followed value (the whole room, or the value at `path`).

/** Any JSON value. */
export type JSONValue = null | boolean | number | string | JSONValue[] | { [key: string]: JSONValue };

/** One RFC 6902 operation; paths are RFC 6901 JSON Pointers. */
export type PatchOperation =
  | { op: "add" | "replace" | "test"; path: string; value: JSONValue }
  | { op: "remove"; path: string }
  | { op: "move" | "copy"; from: string; path: string };

/** Why a version exists: who sent what, and when (`at`, milliseconds since the Unix epoch). */
export interface Cause {
  kind: "action" | "undo" | "redo" | "effect" | "revert";
  /** The sender's client id (absent for an effect). */
  client?: string;
  /** The request's id, when it had one. */
  id?: string;
  /** The action, for `action` and `effect`. */
  action?: JSONValue;
  /** The version undone or redone. */
  of?: number;
  /** The version a revert went back to. */
  to?: number;
  /** True on an undo or redo of the sender's own change. */
  mine?: boolean;
  at?: number;
  /** The sender's display name, when it gave one. */
  name?: string;
  /** The subject of the sender's token, when it has one. */
  sub?: string;
}

/** A connected client of the room. */
export interface Peer {
  client: string;
  name: string;
  /** The subject of its token, when it has one. */
  sub?: string;
  /** What it says it is doing (its `setPresence`), once it set something. */
  state?: JSONValue;
}

/** What the server sends; listeners get each of these, and `status` changes, after the room has taken them in. */
export type ServerMessage =
  | {
      type: "snapshot";
      room: string;
      you: string;
      version: number;
      state: JSONValue;
      undo: number;
      redo: number;
      epoch?: string;
      seq?: number;
    }
  | { type: "resume"; room: string; you: string; version: number; epoch?: string; seq?: number }
  | { type: "patch"; version: number; ops: PatchOperation[]; cause: Cause; undo: number; redo: number }
  | { type: "presence"; peers: Peer[]; count?: number }
  /** Only presence states changed: these peers, each whole (`state: null` when cleared); `peers` is updated. */
  | { type: "presence"; changed: (Peer & { state: JSONValue })[] }
  | { type: "error"; id?: string; code: string; message: string }
  | { type: "status"; status: RoomStatus };

/** `connecting` until the first snapshot, `open` while connected, `offline` between attempts, `closed` for good. */
export type RoomStatus = "connecting" | "open" | "offline" | "closed";

export interface RoomOptions {
  /** The display name others see in presence and causes. */
  name?: string;
  /** The session under which requests are applied exactly once; a random one by default. */
  session?: string;
  /** A token (`lockstep token`), for servers that require one. */
  token?: string;
  /** A JSON Pointer: follow only the value there. */
  path?: string;
  /** Requests that may wait for an answer at once (default 1000); more reject with `outbox_full`. */
  maxPending?: number;
  /** First reconnection delay in milliseconds (default 100), doubled up to `maxReconnectDelay` (default 5000). */
  reconnectDelay?: number;
  maxReconnectDelay?: number;
  /**
   * Keep the session, the requests not yet answered and the last state across page loads: `true` for
   * `localStorage`, or any storage with `getItem`, `setItem` and `removeItem`. A kept room's `ready` resolves at
   * once, with the kept state (or none yet), before any network is there.
   */
  keep?: boolean | KeptStorage;
  /** What the room holds, recorded with a kept room: one kept for another app is set aside, not shown. */
  app?: string;
  /** Shortest time between two presence states sent, in milliseconds (default 50); states in between are merged. */
  presenceInterval?: number;
}

/** Where a room is kept: `localStorage`, `sessionStorage`, or an object with the same three methods. */
export interface KeptStorage {
  getItem(key: string): string | null;
  setItem(key: string, value: string): void;
  removeItem(key: string): void;
}

/** Why a request failed: the server's error code (`rejected`, `conflict`, `nothing_to_undo`, ...) and message. */
export class LockstepError extends Error {
  constructor(code: string, message: string);
  readonly code: string;
}

/** Connects to one address, or to the first of several servers sharing the room; resolves with its state loaded. */
export function connectRoom<State = JSONValue>(url: string | string[], options?: RoomOptions): Promise<Room<State>>;

/** One room, kept in step with the server. */
export class Room<State = JSONValue> {
  constructor(url: string | string[], options?: RoomOptions);
  /** Resolves once the first snapshot has arrived; rejects with `unauthorized` when the server refuses the client. */
  readonly ready: Promise<Room<State>>;
  readonly urls: string[];
  readonly path: string;
  readonly name?: string;
  readonly session: string;
  /** The state at `version` (the value at `path`); null before the first snapshot. */
  readonly state: State | null;
  /** -1 before the first snapshot. */
  readonly version: number;
  readonly epoch: string | null;
  /** This connection's client id. */
  readonly you: string | null;
  /** Who is in the room, each with its presence state once it has one; `peerCount` in all. */
  readonly peers: Peer[];
  readonly peerCount: number;
  /** What this client says it is doing (`setPresence`); null for nothing. */
  readonly presence: JSONValue;
  readonly undoCount: number;
  readonly redoCount: number;
  readonly status: RoomStatus;
  /** Requests not yet answered, kept ones included. */
  readonly pendingCount: number;

  /** Calls `listener` after every change of state, presence or status; returns a function that unsubscribes. */
  subscribe(listener: (room: Room<State>, message: ServerMessage) => void): () => void;
  /**
   * Resolves with the version that includes the action once the server acknowledged it. One answered `unavailable`
   * is sent again with its `seq` (listeners see the error), not rejected.
   */
  send(action: JSONValue): Promise<number>;
  /** The room's latest change, or with `{mine: true}` this client's own latest change still in effect. */
  undo(options?: { mine?: boolean }): Promise<number>;
  redo(options?: { mine?: boolean }): Promise<number>;
  /** Takes the room back to the state it had at `version`, as one new change. */
  revert(version: number): Promise<number>;
  /** Has the server apply `action` after `after` ms as this client's change; `timer` names it. */
  schedule(action: JSONValue, options: { after: number; timer?: string }): Promise<{ timer: string; due: number }>;
  /** Cancels the room's pending timer `timer`. */
  cancel(timer: string): Promise<{ timer: string; due: null }>;
  /**
   * Says what this client is doing (at most the server's `--presence-limit` bytes), or null for nothing: others see it
   * in `peers`. Sent at most once per `presenceInterval`, the latest state winning, and again after a reconnection.
   */
  setPresence(state: JSONValue): void;
  /** Closes for good; pending requests reject with `closed` (kept ones stay kept for the next load). */
  close(): void;
}

/** Applies `ops` to `document` and returns the result, leaving `document` as it was; throws on a failing operation. */
export function applyPatch<T extends JSONValue>(document: T, ops: PatchOperation[]): JSONValue;

/** JSON equality: numbers by value, objects whatever their key order. */
export function deepEqual(a: JSONValue, b: JSONValue): boolean;
