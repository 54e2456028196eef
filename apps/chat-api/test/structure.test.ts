import { spawnSync } from "node:child_process";
import { existsSync, readFileSync, readdirSync } from "node:fs";
import path from "node:path";
import ts from "typescript";

/**
 * The shape of src/ (issue 49, docs/development.md): no module imports
 * itself back through others (no import circle), and the folders are the
 * layers, which ESLint's rules keep (eslint.config.mjs `chatLayers`).
 */
const SRC = path.join(__dirname, "../src");

/** Every TypeScript module of src/ but the generated clients. */
function modules(dir: string): string[] {
  return readdirSync(dir, { withFileTypes: true }).flatMap((entry) => {
    const full = path.join(dir, entry.name);
    if (entry.isDirectory()) return entry.name === "gen" ? [] : modules(full);
    return entry.name.endsWith(".ts") ? [full] : [];
  });
}

/** The modules of src/ that `file` imports (relative imports, types too). */
function importsOf(file: string): string[] {
  const { importedFiles } = ts.preProcessFile(readFileSync(file, "utf8"), true, true);
  return importedFiles.flatMap(({ fileName }) => {
    if (!fileName.startsWith(".")) return [];
    const target = path.resolve(path.dirname(file), fileName);
    const found = [`${target}.ts`, path.join(target, "index.ts")].find((f) => existsSync(f));
    return found === undefined || found.includes(`${path.sep}gen${path.sep}`) ? [] : [found];
  });
}

/** The import circles of `graph`: its strongly connected components of more than one module. */
function circles(graph: Map<string, string[]>): string[][] {
  const index = new Map<string, number>();
  const low = new Map<string, number>();
  const stack: string[] = [];
  const onStack = new Set<string>();
  const found: string[][] = [];
  let next = 0;
  const visit = (node: string): void => {
    index.set(node, next);
    low.set(node, next);
    next += 1;
    stack.push(node);
    onStack.add(node);
    for (const to of graph.get(node) ?? []) {
      if (!index.has(to)) {
        visit(to);
        low.set(node, Math.min(low.get(node) ?? 0, low.get(to) ?? 0));
      } else if (onStack.has(to)) low.set(node, Math.min(low.get(node) ?? 0, index.get(to) ?? 0));
    }
    if (low.get(node) !== index.get(node)) return;
    const component: string[] = [];
    let member: string | undefined;
    do {
      member = stack.pop();
      if (member === undefined) break;
      onStack.delete(member);
      component.push(path.relative(SRC, member));
    } while (member !== node);
    if (component.length > 1) found.push(component.sort());
  };
  for (const node of graph.keys()) if (!index.has(node)) visit(node);
  return found;
}

const graph = new Map(modules(SRC).map((file) => [file, importsOf(file)]));

it("reads the modules and their imports", () => {
  expect(graph.size).toBeGreaterThan(100);
  const hub = graph.get(path.join(SRC, "realtime/hub.ts")) ?? [];
  expect(hub).toContain(path.join(SRC, "realtime/polls.ts"));
});

it("has no import circle in src/", () => {
  expect(circles(graph)).toEqual([]);
});

it("finds a circle when there is one", () => {
  const a = path.join(SRC, "a.ts");
  const b = path.join(SRC, "b.ts");
  expect(
    circles(
      new Map([
        [a, [b]],
        [b, [a]],
      ]),
    ),
  ).toEqual([["a.ts", "b.ts"]]);
});

/** ESLint's findings (rule ids) for each text as if it were the module `file` of src/, in one ESLint run. */
function lintAs(modules: { file: string; text: string }[]): string[][] {
  const run = spawnSync(process.execPath, [path.join(__dirname, "../scripts/lint-as.mjs")], {
    input: JSON.stringify(modules),
    encoding: "utf8",
  });
  if (run.status !== 0) throw new Error(`scripts/lint-as.mjs failed: ${run.stderr}`);
  return JSON.parse(run.stdout) as string[][];
}

it("lets ESLint refuse an upward import and a statement outside src/db", () => {
  // An action that imports a route and runs its own statement: both refused.
  const action = [
    'import type { Tx } from "../db/kysely";',
    'import { userRoutes } from "../routes/users";',
    "export async function count(tx: Tx): Promise<number> {",
    "  return (await tx.prisma.user.count()) + userRoutes.length;",
    "}",
    "",
  ].join("\n");
  // The same statement in src/db/queries is where it belongs.
  const query = [
    'import type { Tx } from "../kysely";',
    "export function userCount(tx: Tx): Promise<number> {",
    "  return tx.prisma.user.count();",
    "}",
    "",
  ].join("\n");
  const [actionFindings, queryFindings] = lintAs([
    { file: "actions/drafts.ts", text: action },
    { file: "db/queries/users.ts", text: query },
  ]);
  expect(actionFindings?.sort()).toEqual(["no-restricted-imports", "no-restricted-syntax"]);
  expect(queryFindings).toEqual([]);
}, 60_000);
