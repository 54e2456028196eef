import { existsSync, readFileSync } from "node:fs";
import { join } from "node:path";
import { REPO_ROOT, checkDockerfile, parseDockerfile, stagesOf } from "../src/dockerfile";

const APPS = ["chat-api", "scoreboard"];
const dockerfile = (app: string) =>
  readFileSync(join(REPO_ROOT, "apps", app, "Dockerfile"), "utf8");

describe.each(APPS)("the %s Dockerfile", (app) => {
  it("follows every rule of the deployment", () => {
    expect(checkDockerfile(app, dockerfile(app))).toEqual([]);
  });

  it("runs, as a non-root user, what the build produces", () => {
    const final = stagesOf(parseDockerfile(dockerfile(app))).at(-1);
    const entrypoint = final?.instructions.find((i) => i.keyword === "ENTRYPOINT")?.args;
    // `node`, the app's Node flags, the build. Which flags: apps/<app>/src/node-flags.ts,
    // whose test checks them against this ENTRYPOINT.
    const [command, ...rest] = JSON.parse(entrypoint ?? "[]") as string[];
    expect(command).toBe("node");
    expect(rest.at(-1)).toBe("dist/index.js");
    expect(rest.slice(0, -1).filter((arg) => !arg.startsWith("--"))).toEqual([]);
    expect(existsSync(join(REPO_ROOT, "apps", app, "src/index.ts"))).toBe(true);
  });
});

it("the build context ignores installed and built files", () => {
  const ignored = readFileSync(join(REPO_ROOT, ".dockerignore"), "utf8").split("\n");
  expect(ignored).toEqual(expect.arrayContaining(["**/node_modules", "**/dist", ".git"]));
});

describe("the Dockerfile rules catch what they are for", () => {
  const good = dockerfile("scoreboard");

  it("a root user, or none", () => {
    expect(checkDockerfile("scoreboard", good.replace("USER 1000:1000", "USER root"))).toEqual([
      "scoreboard: the final stage does not run as a numeric non-root user (USER root)",
    ]);
    expect(checkDockerfile("scoreboard", good.replace("USER 1000:1000", "USER 0"))).toHaveLength(1);
  });

  it("an install before the patched dependencies' patches are there", () => {
    expect(checkDockerfile("scoreboard", good.replace("COPY patches ./patches\n", ""))).toEqual([
      expect.stringMatching(/installs before the patches folder is copied in$/) as string,
    ]);
  });

  it("a COPY of a path that does not exist", () => {
    expect(
      checkDockerfile("scoreboard", good.replace("COPY proto ./proto", "COPY protos ./proto")),
    ).toEqual([expect.stringMatching(/copies protos, which does not exist$/) as string]);
  });

  it("a start script whose environment the image does not set", () => {
    const chat = dockerfile("chat-api");
    expect(chat).toMatch(/^ENV .*MALLOC_ARENA_MAX=2/m);
    expect(checkDockerfile("chat-api", chat.replace(" MALLOC_ARENA_MAX=2", ""))).toEqual([
      "chat-api: the start script sets MALLOC_ARENA_MAX=2, which the image's ENV does not",
    ]);
    expect(
      checkDockerfile("chat-api", chat.replace("MALLOC_ARENA_MAX=2", "MALLOC_ARENA_MAX=8")),
    ).toHaveLength(1);
  });

  it("a shell-form entrypoint, another base image, build tools in the final stage", () => {
    const bad = good
      .replace(/^ENTRYPOINT \[.*\]$/m, "ENTRYPOINT node dist/index.js")
      .replace("ARG NODE_IMAGE=node:22-bookworm-slim", "ARG NODE_IMAGE=node:22")
      .replace("ENV NODE_ENV=production", "ENV NODE_ENV=production\nRUN apt-get install -y make");
    const problems = checkDockerfile("scoreboard", bad);
    expect(problems).toEqual(
      expect.arrayContaining([
        expect.stringMatching(/entrypoint is not the exec form/) as string,
        expect.stringMatching(/is not based on Node 22 slim/) as string,
        "scoreboard: the final stage installs packages or runs build tools",
      ]),
    );
  });
});
