/**
 * What rendering one message costs (issues 28 and 46): Zulip-flavoured
 * Markdown (src/lib/markdown.ts, with mentions, channel links, emoji and two
 * linkifiers) on a 1,000-character message, against markdown-it alone
 * (CommonMark with the same linkify, bare-address and breaks options) on the same text in
 * the same run: the floor of any renderer built on it. Then the same render
 * as the server makes it, on the render pool's threads (src/lib/render-pool.ts):
 * from the request's thread, the whole round trip (the task posted, rendered on
 * a thread, the result back). Each render is timed alone; p50 and p99 over
 * ROUNDS x RENDERS renders. Run with `pnpm --filter chat-api bench:render`
 * (part of `pnpm bench`).
 */
import { join } from "node:path";
import { machine, quantile, table, writeSection } from "@repo/bench-kit";
import MarkdownIt from "markdown-it";
import { type RenderContext, renderMarkdown } from "../src/lib/markdown";
import { DEFAULT_RENDER_SETTINGS, RenderPool } from "../src/lib/render-pool";

const DOCS = join(__dirname, "../../../docs/benchmarks.md");
const ROUNDS = Number(process.env.BENCH_ROUNDS ?? 5);
const RENDERS = Number(process.env.BENCH_RENDERS ?? 2000);

const context: RenderContext = {
  people: Array.from({ length: 50 }, (_, i) => ({ id: i + 1, full_name: `Person ${String(i)}` })),
  groups: [{ id: 1, name: "support" }],
  channels: [
    { id: 1, name: "Denmark" },
    { id: 2, name: "core team" },
  ],
  linkifiers: [
    { pattern: "#(?P<id>[0-9]+)", url_template: "https://github.com/zulip/zulip/issues/{id}" },
    { pattern: "RFC(?P<rfc>[0-9]+)", url_template: "https://www.rfc-editor.org/rfc/rfc{rfc}" },
  ],
  customEmoji: [],
  translateEmoticons: false,
};

/** A message of exactly 1,000 characters with most of what people write. */
function message(): string {
  const parts = [
    "Hi @**Person 3** and @*support*, about #**Denmark>release plans**: ",
    "the build in #1234 **fails** on *some* machines, see RFC2119 and https://example.com/logs?id=7. ",
    ":octopus: 🎉 Steps:\n\n1. run `make test`\n2. open the log\n3. look for `ERROR`\n\n",
    "```python\ndef check(x):\n    return x > 1\n```\n\n> quoted from @_**Person 7**\n\n",
    "| a | b |\n|---|---|\n| 1 | 2 |\n\n",
  ];
  let text = parts.join("");
  const filler =
    " More words about ~~nothing~~ much, with a [link](https://zulip.com) and :smile:.";
  while (text.length < 1000) text += filler;
  return text.slice(0, 1000);
}

function timings(render: () => string, n: number): number[] {
  const out: number[] = [];
  for (let i = 0; i < n; i++) {
    const start = process.hrtime.bigint();
    render();
    out.push(Number(process.hrtime.bigint() - start) / 1000);
  }
  return out;
}

async function pooledTimings(pool: RenderPool, text: string, n: number): Promise<number[]> {
  const out: number[] = [];
  for (let i = 0; i < n; i++) {
    const start = process.hrtime.bigint();
    await pool.render(text, context, 1);
    out.push(Number(process.hrtime.bigint() - start) / 1000);
  }
  return out;
}

async function main(): Promise<void> {
  const text = message();
  // The library alone with the same built-in options (links found in text, line breaks).
  const plain = new MarkdownIt({ linkify: true, breaks: true });
  // Bare addresses (`example.com`) are links in Zulip's syntax: the same linkify setting.
  plain.linkify.set({ fuzzyLink: true });
  const zulip = () => renderMarkdown(text, context).html;
  const reference = () => plain.render(text);
  // Warm up both (JIT), then interleave rounds so drift hits both alike.
  timings(zulip, 500);
  timings(reference, 500);
  const ours: number[] = [];
  const theirs: number[] = [];
  for (let round = 0; round < ROUNDS; round++) {
    ours.push(...timings(zulip, RENDERS));
    theirs.push(...timings(reference, RENDERS));
  }
  const pool = new RenderPool(DEFAULT_RENDER_SETTINGS);
  await pooledTimings(pool, text, 500);
  const pooled: number[] = [];
  // The server's own thread's busy time per render (its event loop's utilization).
  const busy = performance.eventLoopUtilization();
  for (let round = 0; round < ROUNDS; round++)
    pooled.push(...(await pooledTimings(pool, text, RENDERS)));
  const threadUs = (performance.eventLoopUtilization(busy).active * 1000) / pooled.length;
  await pool.close();
  const sort = (v: number[]) => [...v].sort((a, b) => a - b);
  const [o, t, p] = [sort(ours), sort(theirs), sort(pooled)];
  const fmt = (us: number) => `${us.toFixed(0)} µs`;
  const row = (name: string, v: number[], ref: number[]) => [
    name,
    fmt(quantile(v, 0.5)),
    fmt(quantile(v, 0.99)),
    `${(quantile(v, 0.5) / quantile(ref, 0.5)).toFixed(2)}x`,
    `${(quantile(v, 0.99) / quantile(ref, 0.99)).toFixed(2)}x`,
  ];
  const markdown = [
    "## chat-api: rendering a message (issues 28 and 46)",
    "",
    `One 1,000-character message (mentions, a group, a channel topic link, two linkifiers, emoji, a list, code, a quote, a table), rendered ${String(ROUNDS * RENDERS)} times one at a time; the reference is markdown-it alone (CommonMark, with the same linkify, bare-address and breaks options) on the same text in the same run. The server renders on the render pool (${String(DEFAULT_RENDER_SETTINGS.threads)} threads here): its row is the round trip from the request's thread. ${machine([])}.`,
    "",
    table(
      ["renderer", "p50", "p99", "p50 / reference", "p99 / reference"],
      [
        row("chat-api on the render pool (as the server renders)", p, t),
        row("chat-api in the calling thread", o, t),
        row("markdown-it alone (reference)", t, t),
      ],
    ),
    "",
    `On the pool, the server's own thread is busy ${threadUs.toFixed(0)} µs per render (its event loop's utilization over the pooled renders), against the whole render in the calling thread.`,
    "",
    "A send renders once, before its transaction's writes; the fan-out sends the stored HTML.",
  ].join("\n");
  writeSection(DOCS, "chat-render", markdown);
  console.log(markdown);
}

void main();
