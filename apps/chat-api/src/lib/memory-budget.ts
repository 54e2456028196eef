import { totalmem } from "node:os";
import { getHeapStatistics } from "node:v8";
import { ErrorCode, JsonableError } from "@repo/envelope";

/** The process's memory as the budget reads it, in bytes. */
export interface MemoryFigures {
  /** Resident memory (heap, buffers, PGlite's WebAssembly memory, code). */
  rss: number;
  /** V8's heap in use. */
  heapUsed: number;
}

/** Reads the process's own figures (cheap: no heap walk). */
export function processMemory(): MemoryFigures {
  const heap = getHeapStatistics();
  return { rss: process.memoryUsage.rss(), heapUsed: heap.used_heap_size };
}

/** How often the figures are read again at most: a request reads the last sample. */
const SAMPLE_MS = 250;
/** Once over, requests are admitted again below this share of each limit. */
const RESUME_SHARE = 0.9;
/** Share of V8's heap limit that counts as full: past it, a request could crash the process. */
const HEAP_SHARE = 0.85;
/** Share of the machine's (or the container's) memory the default budget takes. */
const DEFAULT_MEMORY_SHARE = 0.85;

/** The default resident budget: 85% of the container's limit, or of the machine's memory. */
export function defaultResidentBudget(): number {
  const constrained = process.constrainedMemory();
  const total = totalmem();
  const available = constrained > 0 && constrained < total ? constrained : total;
  return Math.floor(available * DEFAULT_MEMORY_SHARE);
}

/**
 * The replica's memory budget. While the process is over it (resident memory
 * past `residentBytes`, or V8's heap past 85% of its limit), new requests are
 * refused with 503 and `Retry-After` instead of being started: what is in
 * flight finishes and the memory it held is freed, so no burst of large
 * requests takes the process to the kernel's or V8's out-of-memory end.
 * Admitting resumes below 90% of each limit.
 */
export class MemoryBudget {
  private readonly heapBytes: number;
  private sampledAt = Number.NEGATIVE_INFINITY;
  private over = false;

  constructor(
    readonly residentBytes: number,
    private readonly read: () => MemoryFigures = processMemory,
    private readonly changed: (over: boolean, figures: MemoryFigures) => void = () => undefined,
    heapLimitBytes: number = getHeapStatistics().heap_size_limit,
  ) {
    this.heapBytes = heapLimitBytes * HEAP_SHARE;
  }

  /** Whether the process is over its budget now (sampled at most every 250 ms). */
  exceeded(now: number = Date.now()): boolean {
    if (now - this.sampledAt < SAMPLE_MS) return this.over;
    this.sampledAt = now;
    const figures = this.read();
    const share = this.over ? RESUME_SHARE : 1;
    const over =
      figures.rss > this.residentBytes * share || figures.heapUsed > this.heapBytes * share;
    if (over !== this.over) {
      this.over = over;
      this.changed(over, figures);
    }
    return over;
  }

  /** The answer to a request refused while over budget. */
  static refusal(): JsonableError {
    return new JsonableError(
      "Service unavailable: the server is short of memory; try again shortly",
      ErrorCode.SERVICE_UNAVAILABLE,
      503,
      {},
      { "Retry-After": "2" },
    );
  }
}
