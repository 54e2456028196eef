import { z } from "zod";
import { ConfigError, loadEnv } from "@repo/env";

const schema = z.object({
  PORT: z.coerce.number().int().min(0).max(65535).default(8080),
  NAME: z.string().default("svc"),
  MODE: z.enum(["a", "b"]).optional(),
});

describe("loadEnv", () => {
  it("applies defaults, and treats empty variables as unset", () => {
    expect(loadEnv(schema, { NAME: "", UNRELATED: "x" })).toEqual({ PORT: 8080, NAME: "svc" });
  });

  it("reads and converts what is set", () => {
    expect(loadEnv(schema, { PORT: "91", MODE: "b" })).toEqual({
      PORT: 91,
      NAME: "svc",
      MODE: "b",
    });
  });

  it("names every bad variable in one error", () => {
    const read = () => loadEnv(schema, { PORT: "http", MODE: "c" });
    expect(read).toThrow(ConfigError);
    expect(read).toThrow(/PORT: .*\n {2}MODE: /);
  });
});
