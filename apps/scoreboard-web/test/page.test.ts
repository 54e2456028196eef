import { existsSync, mkdtempSync, readFileSync, rmSync, writeFileSync } from "node:fs";
import { type Server, createServer } from "node:http";
import type { AddressInfo } from "node:net";
import { tmpdir } from "node:os";
import { extname, join, normalize } from "node:path";
import { type Browser, type Page, chromium } from "playwright-core";
// The real scoreboard listener, started in process as the scoreboard's own tests do.
import { SnapshotStore } from "../../scoreboard/src/snapshot/store";
import {
  type Row,
  type Running,
  rows,
  snapshotOf,
  startServer,
} from "../../scoreboard/test/helpers";

/** Debian's Chromium; `.ci/run` installs it. */
const CHROMIUM = "/usr/bin/chromium";
const ROOT = join(__dirname, "..");

const TYPES: Record<string, string> = {
  ".html": "text/html; charset=utf-8",
  ".js": "text/javascript",
  ".css": "text/css",
};

/** Serves the built page from `dir` on a loopback port (another origin than the scoreboard's). */
async function serveStatic(dir: string): Promise<{ server: Server; origin: string }> {
  const server = createServer((req, res) => {
    const path = normalize(new URL(req.url ?? "/", "http://x").pathname).replace(
      /^(\.\.[/\\])+/,
      "",
    );
    const file = join(dir, path === "/" ? "index.html" : path);
    if (!file.startsWith(dir) || !existsSync(file)) {
      res.writeHead(404).end();
      return;
    }
    res.writeHead(200, { "content-type": TYPES[extname(file)] ?? "application/octet-stream" });
    res.end(readFileSync(file));
  });
  await new Promise<void>((resolve) => server.listen(0, "127.0.0.1", resolve));
  return { server, origin: `http://127.0.0.1:${(server.address() as AddressInfo).port}` };
}

/** 120 entries; rank 73 has a mixed-case name. */
function board(): Row[] {
  return rows(120).map((row) =>
    row.rank === 73 ? { ...row, username: "OpheliaDane", profile_path: "/u/OpheliaDane" } : row,
  );
}

let outDir: string;
let site: { server: Server; origin: string };
let scoreboard: Running;
let empty: Running;
let browser: Browser;
let page: Page;

async function notModifiedCount(): Promise<number> {
  const metric = await scoreboard.metrics.requests.get();
  return metric.values
    .filter((v) => v.labels.code === "NOT_MODIFIED")
    .reduce((sum, v) => sum + v.value, 0);
}

beforeAll(async () => {
  if (!existsSync(CHROMIUM))
    throw new Error(`${CHROMIUM} is missing: install Debian's chromium (apt-get install chromium)`);
  outDir = mkdtempSync(join(tmpdir(), "scoreboard-web-"));
  const vite = await import("vite");
  await vite.build({ root: ROOT, logLevel: "silent", build: { outDir, emptyOutDir: true } });
  site = await serveStatic(outDir);
  const store = new SnapshotStore();
  store.swap(await snapshotOf(board(), 1_767_225_600n));
  store.nextRefreshAt = Date.now() + 300_000;
  scoreboard = await startServer(store, { corsOrigins: [site.origin] });
  empty = await startServer(new SnapshotStore(), { corsOrigins: [site.origin] });
  browser = await chromium.launch({ executablePath: CHROMIUM, args: ["--no-sandbox"] });
  page = await browser.newPage({ timezoneId: "Asia/Tokyo", locale: "en-US" });
});

afterAll(async () => {
  await browser.close();
  await Promise.all([scoreboard.shutdown(), empty.shutdown()]);
  await new Promise((resolve) => site.server.close(resolve));
  rmSync(outDir, { recursive: true, force: true });
});

const open = (api: string) => page.goto(`${site.origin}/?api=${encodeURIComponent(api)}`);
const ranks = () =>
  page
    .locator("#rows tr")
    .evaluateAll((trs) => trs.map((tr) => Number((tr as HTMLElement).dataset.rank)));

describe("the scoreboard page in Chromium", () => {
  it("renders the first page of 50, with the fetch time in the reader's time zone", async () => {
    await open(scoreboard.baseUrl);
    await page.locator("#page", { hasText: "Ranks 1–50 of 120" }).waitFor();
    const shown = await ranks();
    expect(shown).toHaveLength(50);
    expect(shown[0]).toBe(1);
    expect(await page.locator("#rows tr").first().textContent()).toContain("user1");
    // 2026-01-01T00:00:00Z is 09:00 in Tokyo.
    expect(await page.locator("#fetched time").getAttribute("datetime")).toBe(
      "2026-01-01T00:00:00.000Z",
    );
    expect(await page.locator("#fetched").textContent()).toMatch(/Jan 1, 2026, 9:00\s?AM GMT\+9/);
    expect(await page.locator("#previous").isDisabled()).toBe(true);
    const shot = join(outDir, "first-page.png");
    await page.screenshot({ path: shot, fullPage: true });
    expect(readFileSync(shot).subarray(1, 4).toString()).toBe("PNG");
    if (process.env.UPDATE_SCREENSHOT === "1")
      writeFileSync(join(ROOT, "../../docs/scoreboard-web.png"), readFileSync(shot));
  });

  it("pages forward and back", async () => {
    await page.click("#next");
    await page.locator("#page", { hasText: "Ranks 51–100 of 120" }).waitFor();
    expect((await ranks())[0]).toBe(51);
    await page.click("#next");
    await page.locator("#page", { hasText: "Ranks 101–120 of 120" }).waitFor();
    expect(await ranks()).toHaveLength(20);
    expect(await page.locator("#next").isDisabled()).toBe(true);
    await page.click("#previous");
    await page.locator("#page", { hasText: "Ranks 51–100 of 120" }).waitFor();
  });

  it("finds a mixed-case name typed in another case, and jumps to a rank", async () => {
    await page.fill("#username", "opheliadane");
    await page.click("#search");
    await page.locator("#rows tr.found", { hasText: "OpheliaDane" }).waitFor();
    expect(await page.locator("#rows tr.found").getAttribute("data-rank")).toBe("73");
    await page.fill("#rank", "7");
    await page.click("#jump");
    await page.locator("#page", { hasText: "Ranks 1–50 of 120" }).waitFor();
    expect(await page.locator("#rows tr.found").getAttribute("data-rank")).toBe("7");
  });

  it("says clearly when a name or a rank is not on the board", async () => {
    await page.fill("#username", "nobody");
    await page.click("#search");
    await page.locator("#message", { hasText: 'No user named "nobody".' }).waitFor();
    await page.fill("#rank", "500");
    await page.click("#jump");
    await page.locator("#message", { hasText: "No entry has rank 500." }).waitFor();
  });

  it("says clearly when the service has no board yet (UNAVAILABLE)", async () => {
    await open(empty.baseUrl);
    await page
      .locator("#message", { hasText: "The scoreboard is not available right now" })
      .waitFor();
    expect(await ranks()).toEqual([]);
  });

  it("is answered 304 by the service on a second load of the same page", async () => {
    await open(scoreboard.baseUrl);
    await page.locator("#page", { hasText: "Ranks 1–50 of 120" }).waitFor();
    const before = await notModifiedCount();
    await page.reload();
    await page.locator("#page", { hasText: "Ranks 1–50 of 120" }).waitFor();
    expect(await notModifiedCount()).toBeGreaterThan(before);
    expect(await ranks()).toHaveLength(50);
  });
});
