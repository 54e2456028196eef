import { execFile } from "node:child_process";
import { readFileSync } from "node:fs";
import { availableParallelism } from "node:os";
import { promisify } from "node:util";

/** Linux's clock ticks per second (USER_HZ), in which /proc reports CPU time. */
export const JIFFIES = 100;

/** The command name and CPU seconds (user and system) of process `pid`, or undefined once it is gone. */
export function processStat(pid: string): { name: string; seconds: number } | undefined {
  let stat: string;
  try {
    stat = readFileSync(`/proc/${pid}/stat`, "utf8");
  } catch {
    return undefined;
  }
  // The fields after the command name (which may hold spaces), from field 3 on.
  const fields = stat.slice(stat.lastIndexOf(")") + 2).split(" ");
  return {
    name: stat.slice(stat.indexOf("(") + 1, stat.lastIndexOf(")")),
    seconds: (Number(fields[11]) + Number(fields[12])) / JIFFIES,
  };
}

/** CPU seconds used so far by process `pid` (0 when there is none). */
export function processSeconds(pid: number | undefined): number {
  return pid === undefined ? 0 : (processStat(String(pid))?.seconds ?? 0);
}

/**
 * Pins every thread of process `pid` (and the threads it starts later) to
 * the CPUs in `cpus` (taskset's list, e.g. "1"), with util-linux's taskset.
 */
export async function pinToCpus(pid: number, cpus: string): Promise<void> {
  await promisify(execFile)("taskset", ["--all-tasks", "--cpu-list", "--pid", cpus, String(pid)]);
}

/**
 * CPUs for a paired measurement: the servers compared share the last CPU
 * and their load generators the others; undefined on a one-CPU machine.
 */
export function pairedCpus(): { servers: string; load: string } | undefined {
  const count = availableParallelism();
  if (count < 2) return undefined;
  return { servers: String(count - 1), load: count === 2 ? "0" : `0-${String(count - 2)}` };
}
