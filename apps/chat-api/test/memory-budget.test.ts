import { totalmem } from "node:os";
import { nearestWithin, prefixWithin } from "../src/actions/message-fetch";
import { type MemoryFigures, MemoryBudget, defaultResidentBudget } from "../src/lib/memory-budget";

/** The budget's rule, on figures given in turn (the process's own are read by the server's test). */
describe("the memory budget", () => {
  const MB = 1024 * 1024;
  const figures: MemoryFigures[] = [];
  const read = (): MemoryFigures => figures.shift() ?? { rss: 0, heapUsed: 0 };

  it("refuses once over a limit, keeps refusing until below 90% of it, and samples every 250 ms", () => {
    const changes: boolean[] = [];
    const budget = new MemoryBudget(100 * MB, read, (over) => changes.push(over), 1000 * MB);
    figures.push({ rss: 90 * MB, heapUsed: 10 * MB });
    expect(budget.exceeded(0)).toBe(false);
    figures.push({ rss: 101 * MB, heapUsed: 10 * MB });
    // Within the sample's 250 ms, the last sample answers.
    expect(budget.exceeded(100)).toBe(false);
    expect(figures).toHaveLength(1);
    expect(budget.exceeded(250)).toBe(true);
    // 95 MB: under the budget but not under 90% of it.
    figures.push({ rss: 95 * MB, heapUsed: 10 * MB });
    expect(budget.exceeded(500)).toBe(true);
    figures.push({ rss: 89 * MB, heapUsed: 10 * MB });
    expect(budget.exceeded(750)).toBe(false);
    expect(changes).toEqual([true, false]);
  });

  it("counts V8's heap past 85% of its limit as over, whatever the resident memory", () => {
    const budget = new MemoryBudget(10_000 * MB, read, undefined, 1000 * MB);
    figures.push({ rss: 900 * MB, heapUsed: 851 * MB });
    expect(budget.exceeded(0)).toBe(true);
    figures.push({ rss: 900 * MB, heapUsed: 800 * MB });
    expect(budget.exceeded(1000)).toBe(true);
    figures.push({ rss: 900 * MB, heapUsed: 800 * MB });
    expect(budget.exceeded(2000)).toBe(true);
    figures.push({ rss: 900 * MB, heapUsed: 700 * MB });
    expect(budget.exceeded(3000)).toBe(false);
  });

  it("defaults to 85% of the memory the process may have", () => {
    const budget = defaultResidentBudget();
    expect(budget).toBeGreaterThan(0);
    const limit = process.constrainedMemory();
    const total = totalmem();
    expect(budget).toBe(Math.floor((limit > 0 && limit < total ? limit : total) * 0.85));
  });
});

describe("a fetch's byte budget", () => {
  const sizes = (...bytes: number[]) => bytes.map((b) => ({ bytes: b }));

  it("takes messages nearest the anchor first, alternately newer and older, and stops at the first that does not fit", () => {
    expect(nearestWithin(sizes(10, 10, 10), sizes(10, 10, 10), 45)).toEqual({ older: 2, newer: 2 });
    expect(nearestWithin(sizes(10, 10, 10), sizes(), 25)).toEqual({ older: 2, newer: 0 });
    expect(nearestWithin(sizes(), sizes(10, 50, 1), 55)).toEqual({ older: 0, newer: 1 });
    expect(nearestWithin(sizes(1, 1), sizes(1, 1), 100)).toEqual({ older: 2, newer: 2 });
  });

  it("keeps one message even when it alone is over the budget", () => {
    expect(nearestWithin(sizes(500), sizes(), 100)).toEqual({ older: 1, newer: 0 });
    expect(nearestWithin(sizes(500), sizes(400), 100)).toEqual({ older: 0, newer: 1 });
    expect(prefixWithin(sizes(500, 1), 100)).toBe(1);
  });

  it("takes the first messages of a list up to the budget (matches_narrow)", () => {
    expect(prefixWithin(sizes(10, 10, 10, 1), 25)).toBe(2);
    expect(prefixWithin(sizes(10, 10), 20)).toBe(2);
    expect(prefixWithin(sizes(), 20)).toBe(0);
  });
});
