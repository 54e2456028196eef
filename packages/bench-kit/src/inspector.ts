import { WebSocket } from "undici";
import { z } from "zod";

const targets = z.array(z.object({ webSocketDebuggerUrl: z.string() }));
const evaluated = z.object({ result: z.object({ result: z.object({ value: z.string() }) }) });
const memoryUsage = z.object({ heapUsed: z.number(), rss: z.number(), external: z.number() });

/** A process's memory, in bytes (Node's `process.memoryUsage()`). */
export type MemoryUsage = z.infer<typeof memoryUsage>;

/**
 * The heap a process started with `--inspect=127.0.0.1:PORT` holds right after
 * a full garbage collection, in bytes: what it keeps, not what it has not yet
 * collected (see {@link memoryAfterGc}).
 */
export async function heapAfterGc(inspectPort: number): Promise<number> {
  return (await memoryAfterGc(inspectPort)).heapUsed;
}

/**
 * The memory of a process started with `--inspect=127.0.0.1:PORT` right after
 * a full garbage collection: its heap then, and its resident set. Asks through
 * the inspector protocol (HeapProfiler.collectGarbage, then
 * process.memoryUsage()).
 */
export async function memoryAfterGc(inspectPort: number): Promise<MemoryUsage> {
  const list = targets.parse(
    await (await fetch(`http://127.0.0.1:${inspectPort}/json/list`)).json(),
  );
  const url = list[0]?.webSocketDebuggerUrl;
  if (url === undefined) throw new Error(`no inspector target on port ${inspectPort}`);
  const socket = new WebSocket(url);
  await new Promise((resolve, reject) => {
    socket.addEventListener("open", resolve, { once: true });
    socket.addEventListener("error", reject, { once: true });
  });
  try {
    const answers = new Map<number, (value: unknown) => void>();
    socket.addEventListener("message", (event) => {
      const message = JSON.parse(String(event.data)) as { id?: number };
      if (message.id !== undefined) answers.get(message.id)?.(message);
    });
    let next = 0;
    const send = (method: string, params: Record<string, unknown> = {}) =>
      new Promise<unknown>((resolve) => {
        const id = ++next;
        answers.set(id, resolve);
        socket.send(JSON.stringify({ id, method, params }));
      });
    await send("HeapProfiler.enable");
    await send("HeapProfiler.collectGarbage");
    const answer = evaluated.parse(
      await send("Runtime.evaluate", {
        expression: "JSON.stringify(process.memoryUsage())",
        returnByValue: true,
      }),
    );
    return memoryUsage.parse(JSON.parse(answer.result.result.value));
  } finally {
    socket.close();
  }
}
