// One flat config for the whole monorepo; each package runs `eslint .` against it.
import js from "@eslint/js";
import tseslint from "typescript-eslint";

export default tseslint.config(
  {
    ignores: ["**/dist/**", "**/src/gen/**", "**/coverage/**", "**/node_modules/**", "**/.data/**"],
  },
  js.configs.recommended,
  ...tseslint.configs.strictTypeChecked,
  {
    languageOptions: {
      parserOptions: { projectService: true, tsconfigRootDir: import.meta.dirname },
    },
    rules: {
      "@typescript-eslint/restrict-template-expressions": ["error", { allowNumber: true }],
      "@typescript-eslint/no-unused-vars": [
        "error",
        { argsIgnorePattern: "^_", varsIgnorePattern: "^_", ignoreRestSiblings: true },
      ],
      "@typescript-eslint/no-confusing-void-expression": ["error", { ignoreArrowShorthand: true }],
    },
  },
  // chat-api's layers (docs/development.md): routes declare endpoints and call
  // actions; only actions (and the event system) reach the database; actions
  // take typed values and know nothing of HTTP.
  // One data layer: a statement Prisma's query builder cannot express is a typed
  // Kysely statement in src/db/queries/<resource>.ts, not raw SQL in an action.
  {
    files: ["apps/chat-api/src/**/*.ts"],
    ignores: ["apps/chat-api/src/db/**", "apps/chat-api/src/gen/**"],
    rules: {
      "no-restricted-syntax": [
        "error",
        {
          selector:
            "MemberExpression[property.name=/^\\$(queryRaw|executeRaw|queryRawUnsafe|executeRawUnsafe)$/]",
          message:
            "Write the statement in src/db/queries/<resource>.ts with Kysely (typed from schema.prisma).",
        },
        {
          selector: "MemberExpression[property.name='$transaction']",
          message: "Open transactions with db.transaction: its Tx runs Prisma and Kysely in it.",
        },
        {
          selector:
            "ObjectExpression:has(> Property[key.name='equals']):has(> Property[key.name='mode']:matches([value.value='insensitive'], [value.expression.value='insensitive']))",
          message:
            "Prisma writes this as ILIKE with % and _ as wildcards: use caselessEquals(value) (src/db/queries/text.ts).",
        },
        {
          selector:
            "MemberExpression[object.property.name='sql'][property.name=/^(query|run|exec|transaction|withSession)$/]",
          message:
            "db.sql is for migrations and LISTEN; statements are Kysely's (src/db/queries) or Prisma's.",
        },
      ],
    },
  },
  {
    files: ["apps/chat-api/src/routes/**/*.ts", "apps/chat-api/src/urls.ts"],
    rules: {
      "no-restricted-imports": [
        "error",
        {
          patterns: [
            {
              group: ["**/db/*", "**/gen/prisma/*"],
              message: "Routes call actions; only actions reach the database.",
            },
          ],
        },
      ],
      "no-restricted-syntax": [
        "error",
        {
          selector:
            "MemberExpression[object.type='MemberExpression'][object.property.name=/^(prisma|sql|q)$/]",
          message: "Routes call actions; only actions query the database (pass `db` to one).",
        },
        {
          selector: "MemberExpression[property.name='transaction']",
          message: "Routes call actions; actions open transactions.",
        },
      ],
    },
  },
  {
    files: [
      "apps/chat-api/src/actions/**/*.ts",
      "apps/chat-api/src/events/**/*.ts",
      "apps/chat-api/src/push/**/*.ts",
      "apps/chat-api/src/db/**/*.ts",
    ],
    rules: {
      "no-restricted-imports": [
        "error",
        {
          paths: [{ name: "express", message: "Actions know nothing of HTTP." }],
          patterns: [
            {
              group: [
                "**/lib/params",
                "**/lib/typed-endpoint",
                "**/lib/multipart",
                "**/routes/*",
                "**/urls",
              ],
              message: "Actions receive typed values; parsing belongs to the endpoint layer.",
            },
          ],
        },
      ],
    },
  },
  {
    files: ["**/*.js", "**/*.mjs", "**/*.cjs"],
    ...tseslint.configs.disableTypeChecked,
  },
  {
    files: ["**/*.cjs", "**/jest.config.js", "**/jest.*.config.js"],
    languageOptions: {
      sourceType: "commonjs",
      globals: {
        module: "writable",
        require: "readonly",
        __dirname: "readonly",
        process: "readonly",
      },
    },
    rules: { "@typescript-eslint/no-require-imports": "off" },
  },
  {
    files: ["**/scripts/*.mjs"],
    languageOptions: { globals: { process: "readonly", console: "readonly" } },
  },
);
