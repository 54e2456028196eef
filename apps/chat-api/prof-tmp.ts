import { renderMarkdown } from "./src/lib/markdown";
import { DEFAULT_RENDER_SETTINGS, RenderPool } from "./src/lib/render-pool";
const context = { people: Array.from({ length: 50 }, (_, i) => ({ id: i + 1, full_name: `Person ${String(i)}` })), groups: [{ id: 1, name: "support" }], channels: [{ id: 1, name: "Denmark" }], linkifiers: [{ pattern: "#(?P<id>[0-9]+)", url_template: "https://github.com/zulip/zulip/issues/{id}" }] };
const text = "Hi @**Person 3** about **this** and :smile: ".repeat(25);
async function main() {
  for (let i = 0; i < 500; i++) renderMarkdown(text, context);
  let t = performance.now();
  for (let i = 0; i < 2000; i++) renderMarkdown(text, context);
  console.log("in thread µs", ((performance.now() - t) * 1000 / 2000).toFixed(0));
  const pool = new RenderPool(DEFAULT_RENDER_SETTINGS);
  for (let i = 0; i < 500; i++) await pool.render(text, context, 1);
  const elu = performance.eventLoopUtilization();
  t = performance.now();
  const cpu = process.cpuUsage();
  for (let i = 0; i < 2000; i++) await pool.render(text, context, 1);
  const d = performance.eventLoopUtilization(elu);
  const c = process.cpuUsage(cpu);
  console.log("pool wall µs", ((performance.now() - t) * 1000 / 2000).toFixed(0), "main active µs", (d.active * 1000 / 2000).toFixed(0), "process cpu µs", ((c.user + c.system) / 2000).toFixed(0));
  await pool.close();
}
void main();
