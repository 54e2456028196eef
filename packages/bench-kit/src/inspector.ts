import { WebSocket } from "undici";
import { z } from "zod";

const targets = z.array(z.object({ webSocketDebuggerUrl: z.string() }));
const evaluated = z.object({ result: z.object({ result: z.object({ value: z.number() }) }) });

/**
 * The heap a process started with `--inspect=127.0.0.1:PORT` holds right after
 * a full garbage collection, in bytes: what it keeps, not what it has not yet
 * collected. Asks through the inspector protocol (HeapProfiler.collectGarbage,
 * then process.memoryUsage()).
 */
export async function heapAfterGc(inspectPort: number): Promise<number> {
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
        expression: "process.memoryUsage().heapUsed",
        returnByValue: true,
      }),
    );
    return answer.result.result.value;
  } finally {
    socket.close();
  }
}
