// Runs `prisma generate` on machines that cannot download Prisma's schema
// engine: generate never runs it, but the CLI insists that one exists, so point
// it at an executable that does (node itself) unless the caller chose one.
//
// Then it changes how the generated client loads its query compiler: Prisma's
// code imports a module whose source is the compiler's WebAssembly in base64,
// and Node's module loader keeps that source and the module's string for the
// life of the process (4.4 MB of heap for the small build, 8.7 MB for the fast
// one, found in a heap snapshot of an idle server). Reading the file and
// decoding it keeps neither. The step fails if Prisma's code changes shape.
const { spawnSync } = require("node:child_process");
const { readFileSync, writeFileSync } = require("node:fs");
const { join } = require("node:path");

const env = { ...process.env };
env.PRISMA_SCHEMA_ENGINE_BINARY ??= process.execPath;
env.PRISMA_HIDE_UPDATE_MESSAGE = "1";
env.CHECKPOINT_DISABLE = "1";
const result = spawnSync("prisma", ["generate", "--schema", "prisma/schema.prisma"], {
  stdio: "inherit",
  env,
  shell: process.platform === "win32",
});
if (result.status !== 0) process.exit(result.status ?? 1);

const classFile = join(__dirname, "..", "src", "gen", "prisma", "internal", "class.ts");
const generated = readFileSync(classFile, "utf8");
const importOfWasm =
  /const \{ wasm \} = await import\(("@prisma\/client\/runtime\/query_compiler_[\w.]+\.wasm-base64\.js")\)\n(\s*)return await decodeBase64AsWasm\(wasm\)/;
const found = importOfWasm.exec(generated);
if (found === null) {
  process.stderr.write(
    `prisma-generate: ${classFile} no longer imports the query compiler as expected; update scripts/prisma-generate.cjs\n`,
  );
  process.exit(1);
}
const [, specifier, indent] = found;
writeFileSync(
  classFile,
  generated.replace(
    importOfWasm,
    [
      `// chat-api (scripts/prisma-generate.cjs): read, not imported, so that no module keeps the text.`,
      `${indent}const { readFile } = await import("node:fs/promises")`,
      `${indent}const source = await readFile(require.resolve(${specifier}), "latin1")`,
      `${indent}return await decodeBase64AsWasm(source.slice(source.indexOf('"') + 1, source.lastIndexOf('"')))`,
    ].join("\n"),
  ),
);
