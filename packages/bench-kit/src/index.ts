export { type H2loadOptions, type LoadResult, ensureH2load, h2load, windowed } from "./h2load";
export { type Served, freePort, serve, waitForPort } from "./process";
export { machine, table, writeSection } from "./report";
export { type Summary, quantile, summarize } from "./stats";
