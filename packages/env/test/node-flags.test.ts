import { missingNodeFlags } from "@repo/env";

describe("missingNodeFlags", () => {
  it("names the expected flags the process was started without, in their order", () => {
    expect(missingNodeFlags(["--a", "--b=64", "--c"], ["--c", "--inspect"])).toEqual([
      "--a",
      "--b=64",
    ]);
  });

  it("wants a flag's exact form: another value does not count", () => {
    expect(missingNodeFlags(["--b=64"], ["--b=16"])).toEqual(["--b=64"]);
    expect(missingNodeFlags(["--b=64"], ["--b=64"])).toEqual([]);
  });

  it("reads this process's own flags by default", () => {
    expect(missingNodeFlags(process.execArgv)).toEqual([]);
  });
});
