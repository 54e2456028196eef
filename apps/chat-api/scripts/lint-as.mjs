// ESLint's findings for texts as if they were modules of src/, from one ESLint
// (its type-aware setup, most of a run's 10-15 s, is made once for them all):
//
//   echo '[{"file":"actions/drafts.ts","text":"..."}]' | node scripts/lint-as.mjs
//
// `file` is a path inside src/; writes each text's rule ids (`fatal` for a
// parse error) as a JSON array of arrays, in order. test/structure.test.ts
// runs it. ESLint and its configuration are the workspace root's.
import { readFileSync } from "node:fs";
import { createRequire } from "node:module";
import { dirname, join } from "node:path";
import { fileURLToPath } from "node:url";

const app = join(dirname(fileURLToPath(import.meta.url)), "..");
const root = join(app, "../..");
const { ESLint } = createRequire(join(root, "package.json"))("eslint");
const eslint = new ESLint({ cwd: root });

const findings = [];
for (const { file, text } of JSON.parse(readFileSync(0, "utf8"))) {
  const [report] = await eslint.lintText(text, { filePath: join(app, "src", file) });
  findings.push((report?.messages ?? []).map((m) => m.ruleId ?? "fatal"));
}
process.stdout.write(JSON.stringify(findings));
