/**
 * The long-polls of a replica (`src/events/polls.ts`): a wake reaches every
 * poll whose queue asked for the event's type, a slice of polls per turn of
 * the event loop, so that a message to a thousand queues lets other work run
 * between the slices.
 */
import { Polls } from "../src/events/polls";

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
