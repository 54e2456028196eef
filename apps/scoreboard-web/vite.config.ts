import { defaultClientConditions, defineConfig } from "vite";

const scoreboard = process.env.SCOREBOARD_URL ?? "http://127.0.0.1:50051";

export default defineConfig({
  // The generated client is a workspace package: use its TypeScript sources.
  resolve: { conditions: ["@repo/source", ...defaultClientConditions] },
  build: { target: "es2022", outDir: "dist", emptyOutDir: true },
  // Same-origin calls in development: the service's paths go to the local scoreboard
  // (SCOREBOARD_URL to point elsewhere), so no CORS set-up is needed to try it.
  server: { proxy: { "/scoreboard.v1.ScoreboardService": scoreboard } },
  preview: {
    port: 5173,
    strictPort: true,
    proxy: { "/scoreboard.v1.ScoreboardService": scoreboard },
  },
});
