// One flat config for the whole monorepo; each package runs `eslint .` against it.
import js from "@eslint/js";
import tseslint from "typescript-eslint";

/** The top-level wiring modules of chat-api's src/: only the layers' callers. */
const WIRING = ["app", "server", "urls", "dispatch", "poll-lane", "services", "index", "dev-start"];

/**
 * chat-api's folders, top to bottom (docs/development.md). Each may import the
 * folders after it, never one before it.
 */
const LAYERS = [
  "cli",
  "routes",
  "pages",
  "http",
  "register",
  "push",
  "actions",
  "realtime",
  "caches",
  "db",
  "lib",
];

/** The folders (from `http` down) that know nothing of Express. */
const BELOW_HTTP = LAYERS.slice(LAYERS.indexOf("register"));

/**
 * ESLint configs that keep chat-api's layers: for each folder, the folders
 * above it and the wiring modules it may not import, and below `http`,
 * Express.
 */
function chatLayers() {
  return LAYERS.slice(1).map((folder) => {
    const above = LAYERS.slice(0, LAYERS.indexOf(folder));
    return {
      files: [`apps/chat-api/src/${folder}/**/*.ts`],
      rules: {
        "no-restricted-imports": [
          "error",
          {
            paths: BELOW_HTTP.includes(folder)
              ? [{ name: "express", message: "Below http/, nothing knows of Express." }]
              : [],
            patterns: [
              {
                group: above.map((name) => `**/${name}/*`),
                message: `src/${folder} is below ${above.join(", ")}: imports run down only (docs/development.md).`,
              },
              {
                group: WIRING.map((name) => `**/../${name}`),
                message: "The wiring modules of src/ call the layers, not the other way round.",
              },
            ],
          },
        ],
      },
    };
  });
}

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
          selector: "MemberExpression[property.name=/^(prisma|q)$/]",
          message:
            "Every statement is a named function of src/db/queries/<resource>.ts; call it with the Tx.",
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
  // chat-api's folders are its layers, top to bottom (LAYERS above): an
  // import runs down only, and below http/ nothing knows of Express.
  ...chatLayers(),
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
