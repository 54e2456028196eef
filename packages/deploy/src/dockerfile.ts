import { existsSync, readFileSync } from "node:fs";
import { join } from "node:path";

/** The repository root (the Docker build context). */
export const REPO_ROOT = join(__dirname, "../../..");

/** One Dockerfile instruction, continuation lines joined. */
export interface Instruction {
  keyword: string;
  args: string;
  line: number;
}

/** A build stage: its FROM and what follows it. */
export interface Stage {
  image: string;
  name: string | undefined;
  instructions: Instruction[];
}

/** Parses a Dockerfile into instructions (comments dropped, `\` continuations joined). */
export function parseDockerfile(text: string): Instruction[] {
  const instructions: Instruction[] = [];
  let pending = "";
  let start = 0;
  text.split("\n").forEach((raw, index) => {
    const line = raw.trim();
    if (pending === "" && (line === "" || line.startsWith("#"))) return;
    if (pending === "") start = index + 1;
    pending += (pending === "" ? "" : " ") + line.replace(/\\$/, "").trim();
    if (line.endsWith("\\")) return;
    const [keyword = "", ...rest] = pending.split(/\s+/);
    instructions.push({ keyword: keyword.toUpperCase(), args: rest.join(" "), line: start });
    pending = "";
  });
  return instructions;
}

/** The stages of a Dockerfile, with `ARG` defaults declared before the first FROM substituted. */
export function stagesOf(instructions: readonly Instruction[]): Stage[] {
  const args = new Map<string, string>();
  const stages: Stage[] = [];
  for (const instruction of instructions) {
    if (instruction.keyword === "ARG" && stages.length === 0) {
      const [name = "", value = ""] = instruction.args.split("=");
      args.set(name, value);
    } else if (instruction.keyword === "FROM") {
      const [image = "", as, name] = instruction.args.split(/\s+/);
      const resolved = image.replace(/\$\{?(\w+)\}?/g, (_, arg: string) => args.get(arg) ?? "");
      stages.push({
        image: resolved,
        name: as?.toUpperCase() === "AS" ? name : undefined,
        instructions: [],
      });
    } else stages.at(-1)?.instructions.push(instruction);
  }
  return stages;
}

/**
 * A `pnpm install` that runs before the workspace's patch folder is copied in:
 * with `patchedDependencies` set, pnpm refuses to install without the patches.
 */
function unpatchedInstalls(app: string, build: Stage[]): string[] {
  const problems: string[] = [];
  for (const stage of build) {
    let patched = false;
    for (const instruction of stage.instructions) {
      if (instruction.keyword === "COPY" && /(^|\s)patches(\/|\s)/.test(instruction.args))
        patched = true;
      if (instruction.keyword === "RUN" && /pnpm install/.test(instruction.args) && !patched)
        problems.push(
          `${app}: line ${instruction.line} installs before the patches folder is copied in`,
        );
    }
  }
  return problems;
}

/** The `--flag=value` options and the plain arguments of a COPY. */
function copyParts(args: string): { from: string | undefined; sources: string[] } {
  const words = args.split(/\s+/);
  const from = words.find((w) => w.startsWith("--from="))?.slice("--from=".length);
  const plain = words.filter((w) => !w.startsWith("--"));
  return { from, sources: plain.slice(0, -1) };
}

/**
 * The deployment rules of an app's Dockerfile, as problems (empty when it
 * follows them all): multi-stage on Node 22 LTS slim; every COPY from the
 * build context names a path that exists; a build stage that deploys only
 * production dependencies; a final stage with NODE_ENV=production, a numeric
 * non-root USER, no package installs or build tools, only the deployed app
 * copied in, the image title of the app, and an exec-form entrypoint running
 * the file `pnpm build` produces.
 */
export function checkDockerfile(app: string, text: string, root = REPO_ROOT): string[] {
  const problems: string[] = [];
  const stages = stagesOf(parseDockerfile(text));
  const final = stages.at(-1);
  if (stages.length < 2 || final === undefined) return [`${app}: not a multi-stage build`];
  for (const stage of stages) {
    if (!/^node:22(\.[\d.]+)?(-[a-z]+)?-slim$/.test(stage.image))
      problems.push(
        `${app}: stage ${stage.name ?? "?"} is not based on Node 22 slim (${stage.image})`,
      );
    for (const copy of stage.instructions.filter((i) => i.keyword === "COPY")) {
      const { from, sources } = copyParts(copy.args);
      if (from !== undefined) continue;
      for (const source of sources) {
        if (!existsSync(join(root, source)))
          problems.push(`${app}: line ${copy.line} copies ${source}, which does not exist`);
      }
    }
  }
  const build = stages.slice(0, -1);
  problems.push(...unpatchedInstalls(app, build));
  if (!build.some((s) => s.instructions.some((i) => /\bdeploy\b.*--prod\b/.test(i.args))))
    problems.push(`${app}: no build stage deploys the app with only its production dependencies`);

  const env = final.instructions.filter((i) => i.keyword === "ENV").map((i) => i.args);
  if (!env.some((e) => /(^|\s)NODE_ENV=production(\s|$)/.test(e)))
    problems.push(`${app}: the final stage does not set NODE_ENV=production`);
  const user = final.instructions.filter((i) => i.keyword === "USER").at(-1)?.args;
  const uid = user?.split(":")[0];
  if (uid === undefined || !/^\d+$/.test(uid) || Number(uid) === 0)
    problems.push(
      `${app}: the final stage does not run as a numeric non-root user (USER ${user ?? "unset"})`,
    );
  if (
    final.instructions.some(
      (i) => i.keyword === "RUN" && /apt-get|apk |npm |pnpm |gcc|make/.test(i.args),
    )
  )
    problems.push(`${app}: the final stage installs packages or runs build tools`);
  for (const copy of final.instructions.filter((i) => i.keyword === "COPY")) {
    const { from } = copyParts(copy.args);
    if (from === undefined || !build.some((s) => s.name === from))
      problems.push(
        `${app}: the final stage copies from outside the build stages (line ${copy.line})`,
      );
  }
  const title = /org\.opencontainers\.image\.title="([^"]+)"/.exec(
    final.instructions
      .filter((i) => i.keyword === "LABEL")
      .map((i) => i.args)
      .join(" "),
  )?.[1];
  if (title !== app) problems.push(`${app}: the image title is ${title ?? "unset"}, not ${app}`);

  const entrypoint = final.instructions.filter((i) => i.keyword === "ENTRYPOINT").at(-1)?.args;
  let command: unknown;
  try {
    command = entrypoint === undefined ? undefined : JSON.parse(entrypoint);
  } catch {
    command = undefined;
  }
  if (!Array.isArray(command) || command[0] !== "node") {
    problems.push(
      `${app}: the entrypoint is not the exec form ["node", ...] (so node would not get SIGTERM)`,
    );
  } else {
    // The first argument that is not a Node flag (`--single-threaded-gc`).
    const entry = String(command.find((arg, i) => i > 0 && !String(arg).startsWith("-")));
    const built = builtFile(app, root, entry, command.map(String).join(" "), env);
    if (built !== undefined) problems.push(`${app}: ${built}`);
  }
  return problems;
}

/**
 * Whether `pnpm build` of the app produces `entry` (`dist/x.js` from
 * `src/x.ts`, as the app's tsconfig.build.json maps them), and `pnpm start`
 * runs the same `command`, flags included, with the same environment: the
 * `NAME=value` settings it starts with must each be set by the final stage's
 * `ENV` lines (`env`); a problem, or undefined.
 */
function builtFile(
  app: string,
  root: string,
  entry: string,
  command: string,
  env: readonly string[],
): string | undefined {
  const dir = join(root, "apps", app);
  const config = JSON.parse(readFileSync(join(dir, "tsconfig.build.json"), "utf8")) as {
    compilerOptions?: { rootDir?: string; outDir?: string };
  };
  const outDir = config.compilerOptions?.outDir ?? "";
  const rootDir = config.compilerOptions?.rootDir ?? "";
  if (!entry.startsWith(`${outDir}/`) || !entry.endsWith(".js"))
    return `the entrypoint ${entry} is not under the build's outDir ${outDir}`;
  const source = join(dir, rootDir, entry.slice(outDir.length + 1).replace(/\.js$/, ".ts"));
  if (!existsSync(source)) return `the entrypoint ${entry} has no source ${source}`;
  const start = (
    JSON.parse(readFileSync(join(dir, "package.json"), "utf8")) as {
      scripts?: Record<string, string>;
    }
  ).scripts?.start;
  // The `NAME=value` words the command starts with, as the shell reads them.
  const words = (start ?? "").split(/\s+/);
  const firstCommandWord = words.findIndex((word) => !/^[A-Z_][A-Z0-9_]*=/.test(word));
  const settings = words.slice(0, firstCommandWord === -1 ? words.length : firstCommandWord);
  const run = words.slice(settings.length).join(" ");
  if (start === undefined || run !== command)
    return `the entrypoint runs ${command}, the start script ${start ?? "nothing"}`;
  const imageEnv = new Set(env.flatMap((line) => line.split(/\s+/)));
  const unset = settings.filter((setting) => !imageEnv.has(setting));
  if (unset.length > 0)
    return `the start script sets ${unset.join(" ")}, which the image's ENV does not`;
  return undefined;
}
