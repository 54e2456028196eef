export * from "./history";
