export * from "./codes";
export * from "./errors";
export * from "./render";
