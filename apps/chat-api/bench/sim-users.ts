/**
 * The simulated users of bench/simulate.ts: each registers a queue, keeps a
 * long-poll open, acts at random and reports its presence every minute;
 * what they do and see is noted in {@link tally}.
 */
import { setTimeout as sleep } from "node:timers/promises";
import { Client } from "undici";
import { NO_ANSWER, type User, call, now, timedOut } from "./load-realm";

/** How often a user reports its presence, as Zulip's clients do. */
export const PRESENCE_SECONDS = 60;
/** How long a request (not a long-poll) may take before it counts as timed out. */
export const REQUEST_TIMEOUT_MS = 10_000;

/** One request of a simulated user (long-polls excepted); times in Unix ms ({@link now}). */
export interface Done {
  at: number;
  ms: number;
  kind: string;
  /** HTTP status; 0: no answer (a connection error or a time-out). */
  status: number;
}

/** What the simulated users did and saw, for the run under way ({@link resetTally} between runs). */
export const tally = {
  requests: [] as Done[],
  /** Each delivered message event: message, receiving user (index), arrival. */
  arrivals: [] as { message: number; user: number; at: number }[],
  /**
   * Each message sent: when its send began, and its audience (user indexes,
   * whether registered or not: who registered before `at` must receive it).
   */
  sends: new Map<number, { at: number; audience: readonly number[] }>(),
  /** Polls that failed since the last step's count. */
  pollFailures: 0,
  failures: new Set<string>(),
  /** Set when the simulation ends (what fails after is not counted). */
  stopping: false,
  /** Sends under way. */
  sendsInFlight: 0,
};
const stopped = (): boolean => tally.stopping;

/** Clears {@link tally} for a new run. */
export function resetTally(): void {
  tally.requests.length = 0;
  tally.arrivals.length = 0;
  tally.sends.clear();
  tally.failures.clear();
  tally.pollFailures = 0;
  tally.stopping = false;
  tally.sendsInFlight = 0;
}

/** A simulated user as the others see it: who, and since when (Unix ms; Infinity: not yet). */
export interface Member {
  readonly index: number;
  readonly user: User;
  readonly registeredAt: number;
}

/** A simulated user: its queue, what it received, its next actions. */
export class SimUser implements Member {
  queue = "";
  /** When its registration answered (it receives what is sent after). */
  registeredAt = Infinity;
  lastEventId = -1;
  disordered = 0;
  unread: number[] = [];
  private readonly timers = new Set<NodeJS.Timeout>();

  constructor(
    readonly index: number,
    readonly user: User,
    private readonly port: number,
    private readonly world: World,
  ) {}

  private async request(
    kind: string,
    method: "GET" | "POST",
    path: string,
    form: Record<string, string>,
  ): Promise<{ status: number; json: Record<string, unknown> }> {
    const at = now();
    const reply = await call(this.port, this.user, method, path, form, REQUEST_TIMEOUT_MS).catch(
      (error: unknown) => {
        if (!stopped())
          tally.failures.add(`${kind}: ${timedOut(error) ? "timed out" : String(error)}`);
        return NO_ANSWER;
      },
    );
    if (stopped()) return reply;
    tally.requests.push({ at, ms: now() - at, kind, status: reply.status });
    if (reply.status !== 200 && reply.status !== 0)
      tally.failures.add(`${kind}: HTTP ${String(reply.status)} ${JSON.stringify(reply.json)}`);
    return reply;
  }

  async start(): Promise<void> {
    const reply = await this.request("register", "POST", "/register", {
      event_types: '["message","update_message_flags"]',
    });
    if (reply.status !== 200) return;
    this.queue = String(reply.json.queue_id);
    this.registeredAt = now();
    this.world.registered(this);
    void this.poll();
    void this.presence();
    this.schedule();
  }

  /** Set by {@link stop}: no more actions (the long-poll goes on). */
  private quiet = false;

  stop(): void {
    this.quiet = true;
    for (const timer of this.timers) clearTimeout(timer);
    this.timers.clear();
  }

  /** Runs `task` after `ms` unless the simulation stops first. */
  private after(ms: number, task: () => Promise<void>): void {
    if (this.quiet) return;
    const timer = setTimeout(() => {
      this.timers.delete(timer);
      if (!stopped()) void task();
    }, ms);
    this.timers.add(timer);
  }

  private schedule(): void {
    const pause = -Math.log(1 - Math.random()) * this.world.actionSeconds * 1000;
    this.after(pause, async () => {
      await this.act();
      this.schedule();
    });
  }

  /** The last presence change this user has heard of (a modern client's `last_update_id`). */
  private presenceSeen = -1;

  private async presence(): Promise<void> {
    const reply = await this.request("presence", "POST", "/users/me/presence", {
      status: "active",
      new_user_input: "true",
      slim_presence: "true",
      last_update_id: String(this.presenceSeen),
    });
    const seen = reply.json.presence_last_update_id;
    if (typeof seen === "number") this.presenceSeen = seen;
    this.after(PRESENCE_SECONDS * 1000, () => this.presence());
  }

  /** One action, chosen at random with Mattermost-like weights. */
  private async act(): Promise<void> {
    const channels = this.world.subscriptions[this.index] ?? [];
    const channel = channels[Math.floor(Math.random() * channels.length)] ?? 0;
    const roll = Math.random() * 9;
    if (roll < 4 && this.unread.length > 0) {
      const ids = this.unread.splice(0, 100);
      await this.request("mark read", "POST", "/messages/flags", {
        messages: JSON.stringify(ids),
        op: "add",
        flag: "read",
      });
    } else if (roll < 6) {
      await this.request("fetch history", "GET", "/messages", {
        anchor: "newest",
        num_before: "20",
        num_after: "0",
        narrow: JSON.stringify([
          { operator: "channel", operand: this.world.channels[channel] ?? 0 },
        ]),
      });
    } else if (roll < 8) {
      await this.send(this.world.membersOf(channel), {
        type: "stream",
        to: String(this.world.channels[channel] ?? 0),
        topic: `topic ${String(Math.floor(Math.random() * 5))}`,
        content: `A message from **${this.user.email}** to channel ${String(channel)}.`,
      });
    } else {
      const others = this.world.active();
      const other = others[Math.floor(Math.random() * others.length)] ?? this;
      await this.send(other.index === this.index ? [this.index] : [this.index, other.index], {
        type: "direct",
        to: JSON.stringify([other.user.id]),
        content: "A direct message.",
      });
    }
  }

  /**
   * Sends to `audience` (user indexes, registered or not: each one registered
   * before the send began must receive it, and no one else may).
   */
  private async send(audience: readonly number[], form: Record<string, string>): Promise<void> {
    const at = now();
    tally.sendsInFlight += 1;
    const reply = await this.request(`send ${form.type ?? ""}`, "POST", "/messages", form);
    tally.sendsInFlight -= 1;
    if (reply.status === 200) tally.sends.set(Number(reply.json.id), { at, audience });
  }

  private async poll(): Promise<void> {
    // The long-poll's own connection, as a client's.
    const connection = new Client(`http://127.0.0.1:${String(this.port)}`, {
      pipelining: 1,
      keepAliveTimeout: 120_000,
    });
    try {
      await this.pollOn(connection);
    } finally {
      await connection.destroy();
    }
  }

  private async pollOn(connection: Client): Promise<void> {
    while (!stopped()) {
      const reply = await call(
        this.port,
        this.user,
        "GET",
        "/events",
        { queue_id: this.queue, last_event_id: String(this.lastEventId) },
        undefined,
        connection,
      ).catch((error: unknown) => {
        if (!stopped()) tally.failures.add(`poll: ${String(error)}`);
        return NO_ANSWER;
      });
      if (stopped()) return;
      if (reply.status !== 200) {
        tally.pollFailures += 1;
        if (reply.status !== 0)
          tally.failures.add(`poll: HTTP ${String(reply.status)} ${JSON.stringify(reply.json)}`);
        await sleep(1000);
        continue;
      }
      const arrived = now();
      for (const event of (reply.json.events ?? []) as {
        id: number;
        type: string;
        message?: { id: number };
      }[]) {
        if (event.id <= this.lastEventId) this.disordered += 1;
        this.lastEventId = Math.max(this.lastEventId, event.id);
        if (event.type !== "message" || event.message === undefined) continue;
        tally.arrivals.push({ message: event.message.id, user: this.index, at: arrived });
        this.unread.push(event.message.id);
        if (this.unread.length > 1000) this.unread.splice(0, this.unread.length - 1000);
      }
    }
  }
}

/**
 * Who has registered, shared by the load's threads (bench/sim-worker.ts):
 * each user's registration time by index (Unix ms; Infinity: not yet), and
 * a counter bumped at every registration.
 */
export interface SharedRoster {
  registeredAt: Float64Array;
  version: Int32Array;
  /** Every user of the realm, by index. */
  people: readonly User[];
}

/** A roster of `people`, on shared memory, with nobody registered yet. */
export function sharedRoster(people: readonly User[]): SharedRoster {
  const registeredAt = new Float64Array(new SharedArrayBuffer(8 * people.length));
  registeredAt.fill(Infinity);
  return { registeredAt, version: new Int32Array(new SharedArrayBuffer(4)), people };
}

/**
 * The simulated users and what they share. `users` are this thread's; with a
 * {@link SharedRoster}, the others are the other threads' users who have
 * registered, read from it.
 */
export class World {
  readonly users: SimUser[] = [];
  private activeCache: readonly Member[] | undefined;
  private activeVersion = -1;

  constructor(
    readonly channels: number[],
    readonly subscriptions: number[][],
    /** Mean pause between one user's actions. */
    readonly actionSeconds: number,
    private readonly roster?: SharedRoster,
  ) {}

  private readonly members = new Map<number, readonly number[]>();

  /** Channel `channel`'s members (user indexes, registered or not). */
  membersOf(channel: number): readonly number[] {
    let found = this.members.get(channel);
    if (found === undefined) {
      found = this.subscriptions.flatMap((channels, index) =>
        channels.includes(channel) ? [index] : [],
      );
      this.members.set(channel, found);
    }
    return found;
  }

  /** Users whose queue is registered (in every thread, with a roster). */
  active(): readonly Member[] {
    const { roster } = this;
    if (roster === undefined) {
      this.activeCache ??= this.users.filter((u) => u.queue !== "");
      return this.activeCache;
    }
    const version = Atomics.load(roster.version, 0);
    if (this.activeCache === undefined || version !== this.activeVersion) {
      const members: Member[] = [];
      roster.registeredAt.forEach((registeredAt, index) => {
        const user = roster.people[index];
        if (registeredAt !== Infinity && user !== undefined)
          members.push({ index, user, registeredAt });
      });
      this.activeCache = members;
      this.activeVersion = version;
    }
    return this.activeCache;
  }

  /** Notes that `user` registered. */
  registered(user: SimUser): void {
    this.activeCache = undefined;
    if (this.roster === undefined) return;
    this.roster.registeredAt[user.index] = user.registeredAt;
    Atomics.add(this.roster.version, 0, 1);
  }
}
