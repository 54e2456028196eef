import { readFileSync } from "node:fs";

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
