/**
 * A render pool's worker thread (lib/render-pool.ts): renders one content
 * with its realm lookups and answers with plain data. The only code that runs
 * Markdown, KaTeX and linkifiers in the server; the pool terminates this
 * thread when a render passes its time limit.
 */
import { RENDER_TIMEOUT_MESSAGE, type RenderContext, renderMarkdown } from "./markdown";

/** One render, as the pool posts it. */
export interface RenderTask {
  content: string;
  context: RenderContext;
  /** The render's time limit: checked between rendering steps here, enforced by the pool. */
  timeLimitMs: number;
  /** The longest HTML, in UTF-8 bytes, a render may give. */
  maxHtmlBytes: number;
  /** Where the thread stamps when it takes the task up (Date.now()), for the pool's timer. */
  started: BigInt64Array;
}

/** What a render gives back: its HTML and mentions, or why it gave none. */
export type RenderReply =
  | {
      kind: "rendered";
      html: string;
      mentionedUserIds: number[];
      mentionedGroupIds: number[];
      wildcard: "channel" | "topic" | undefined;
    }
  | { kind: "refused"; reason: "time" | "size" };

/** Renders a task (piscina calls the module's default export). */
export default function renderTask(task: RenderTask): RenderReply {
  Atomics.store(task.started, 0, BigInt(Date.now()));
  let result;
  try {
    result = renderMarkdown(task.content, task.context, task.timeLimitMs);
  } catch (error) {
    if (error instanceof Error && error.message === RENDER_TIMEOUT_MESSAGE)
      return { kind: "refused", reason: "time" };
    throw error;
  }
  // Cheap before exact: a UTF-8 byte is at least one UTF-16 unit, at most three.
  if (
    result.html.length > task.maxHtmlBytes ||
    (result.html.length * 3 > task.maxHtmlBytes &&
      Buffer.byteLength(result.html) > task.maxHtmlBytes)
  )
    return { kind: "refused", reason: "size" };
  return {
    kind: "rendered",
    html: result.html,
    mentionedUserIds: [...result.mentionedUserIds],
    mentionedGroupIds: [...result.mentionedGroupIds],
    wildcard: result.wildcard,
  };
}
