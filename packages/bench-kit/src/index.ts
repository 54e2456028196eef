export {
  type AutocannonOptions,
  type HttpLoadResult,
  autocannon,
  autocannonArgs,
  autocannonVersion,
} from "./autocannon";
export { type H2loadOptions, type LoadResult, ensureH2load, h2load, windowed } from "./h2load";
export {
  type Served,
  type StartedService,
  connectionRefused,
  freePort,
  serve,
  startService,
  waitForPort,
} from "./process";
export { machine, table, toolVersion, writeSection } from "./report";
export { type Summary, quantile, summarize } from "./stats";
export { type PrivatePostgres, privatePostgres } from "./private-postgres";
export { type MemoryUsage, heapAfterGc, memoryAfterGc } from "./inspector";
export { JIFFIES, pairedCpus, pinToCpus, processSeconds, processStat } from "./cpu";
export { until } from "./wait";
