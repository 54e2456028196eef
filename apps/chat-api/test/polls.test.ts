/**
 * The long-polls of a replica (`src/realtime/polls.ts`): a wake reaches every
 * poll whose queue asked for the event's type, a slice of polls per turn of
 * the event loop, so that a message to a thousand queues lets other work run
 * between the slices.
 */
import { type GoneListener, Polls } from "../src/realtime/polls";

/** Resolves after the event loop's next check phase (what setImmediate queued before runs first). */
const nextTurn = () => new Promise<void>((resolve) => setImmediate(resolve));

describe("Polls.wake", () => {
  it("wakes a thousand polls over several turns of the event loop, each once", async () => {
    const polls = new Polls();
    polls.open();
    const woken: number[] = [];
    const waits = Array.from({ length: 1000 }, (_, i) =>
      polls
        .watch(i + 1, `queue-${String(i)}`, new Set(["message"]))
        .until(60_000)
        .then((value) => {
          if (value) woken.push(i);
          return value;
        }),
    );
    polls.wake([
      { user_ids: Array.from({ length: 1000 }, (_, i) => i + 1), event_type: "message" },
    ]);
    expect(woken).toEqual([]);
    await nextTurn();
    // One slice has run, not all of them: the loop was free again in between.
    expect(woken.length).toBeGreaterThan(0);
    expect(woken.length).toBeLessThan(1000);
    expect(await Promise.all(waits)).toEqual(Array.from({ length: 1000 }, () => true));
    expect(new Set(woken).size).toBe(1000);
    // In the order their recipients were listed.
    expect(woken).toEqual([...woken].sort((a, b) => a - b));
  });

  it("leaves polls of other users and of other event types waiting", async () => {
    const polls = new Polls();
    polls.open();
    const other = polls.watch(2, "q2", undefined);
    const typed = polls.watch(1, "q1", new Set(["presence"]));
    const all = polls.watch(1, "q1-all", undefined);
    polls.wake([{ user_ids: [1], event_type: "message" }]);
    expect(await all.until(60_000)).toBe(true);
    expect(await typed.until(20)).toBe(false);
    expect(await other.until(20)).toBe(false);
  });
});

describe("Polls' deadlines and clients", () => {
  /** A client the test can make go away, as the dispatcher's exchange does. */
  const client = () => ({ gone: false, onGone: undefined as GoneListener | undefined });

  it("ends a wait after its time-out, never before, with one timer for all", async () => {
    const polls = new Polls();
    polls.open();
    const started = Date.now();
    const ends = await Promise.all(
      [150, 150, 300].map((ms, i) =>
        polls
          .watch(i + 1, `q${String(i)}`, undefined)
          .until(ms)
          .then((woken) => ({ woken, after: Date.now() - started })),
      ),
    );
    expect(ends.map((end) => end.woken)).toEqual([false, false, false]);
    expect(ends[0]?.after).toBeGreaterThanOrEqual(150);
    expect(ends[2]?.after).toBeGreaterThanOrEqual(300);
    // At most one tick (100 ms) late, with room for a busy machine.
    expect(ends[2]?.after).toBeLessThan(1000);
  });

  it("ends a wait when its client goes away, and lets go of the client", async () => {
    const polls = new Polls();
    polls.open();
    const gone = client();
    const waiting = polls.watch(1, "q1", undefined).until(60_000, gone);
    expect(gone.onGone).toBeDefined();
    gone.gone = true;
    gone.onGone?.clientGone();
    expect(await waiting).toBe(false);
    expect(gone.onGone).toBeUndefined();
    // A wake afterwards finds nothing to wake.
    polls.wake([{ user_ids: [1], event_type: "message" }]);
    await nextTurn();
  });

  it("answers at once for a client already gone, and after a wake that came first", async () => {
    const polls = new Polls();
    polls.open();
    expect(await polls.watch(1, "q1", undefined).until(60_000, { ...client(), gone: true })).toBe(
      false,
    );
    const early = polls.watch(1, "q1", undefined);
    polls.wake([{ user_ids: [1], event_type: "message" }]);
    await nextTurn();
    expect(await early.until(60_000)).toBe(true);
  });

  it("keeps each user's other polls when one ends", async () => {
    const polls = new Polls();
    polls.open();
    const [a, b, c] = ["qa", "qb", "qc"].map((queue) => polls.watch(7, queue, undefined));
    const waits = [a, b, c].map((watch) => watch?.until(60_000));
    b?.cancel();
    expect(await waits[1]).toBe(false);
    polls.wake([{ user_ids: [7], event_type: "message" }]);
    expect(await Promise.all([waits[0], waits[2]])).toEqual([true, true]);
  });

  it("releases every waiting poll when the replica stops, and later ones at once", async () => {
    const polls = new Polls();
    polls.open();
    const waiting = polls.watch(1, "q1", undefined).until(60_000);
    polls.close();
    expect(await waiting).toBe(true);
    expect(await polls.watch(2, "q2", undefined).until(60_000)).toBe(false);
  });
});
