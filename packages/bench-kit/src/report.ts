import { execFileSync } from "node:child_process";
import { readFileSync, writeFileSync } from "node:fs";
import os from "node:os";

/** The first line `command args` prints (a tool's version), or "not installed". */
export function toolVersion(command: string, args: string[]): string {
  try {
    return execFileSync(command, args, { encoding: "utf8" }).split("\n")[0]?.trim() ?? "";
  } catch {
    return "not installed";
  }
}

/** The machine and runtime a run was measured on, and the load tools' versions, as one Markdown line. */
export function machine(tools: readonly string[] = [toolVersion("h2load", ["--version"])]): string {
  const cpu = os.cpus()[0]?.model.trim() ?? "unknown CPU";
  return [
    `${os.cpus().length} x ${cpu}`,
    `${(os.totalmem() / 2 ** 30).toFixed(0)} GiB`,
    `Linux ${os.release()}`,
    `Node ${process.version}`,
    ...tools,
  ].join(", ");
}

/**
 * Replaces the part of `file` between `<!-- NAME:begin -->` and
 * `<!-- NAME:end -->` with `markdown` (appends the markers when missing), so
 * each benchmark rewrites only its own section of docs/benchmarks.md.
 */
export function writeSection(file: string, name: string, markdown: string): void {
  const begin = `<!-- ${name}:begin -->`;
  const end = `<!-- ${name}:end -->`;
  let text: string;
  try {
    text = readFileSync(file, "utf8");
  } catch {
    text = "# Benchmarks\n";
  }
  const block = `${begin}\n\n${markdown.trim()}\n\n${end}`;
  const from = text.indexOf(begin);
  const to = text.indexOf(end);
  text =
    from >= 0 && to > from
      ? text.slice(0, from) + block + text.slice(to + end.length)
      : `${text.trimEnd()}\n\n${block}\n`;
  writeFileSync(file, text);
}

/** A Markdown table from a header row and rows of cells. */
export function table(header: readonly string[], rows: readonly (readonly string[])[]): string {
  const line = (cells: readonly string[]) => `| ${cells.join(" | ")} |`;
  return [line(header), line(header.map(() => "---")), ...rows.map(line)].join("\n");
}
