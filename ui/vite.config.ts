// Vite builds the web UI into ui/dist, which Tauri serves from its own origin.
// The same file configures Vitest (jsdom) for the unit tests in ui/tests.
import { defineConfig } from "vitest/config";
import { svelte } from "@sveltejs/vite-plugin-svelte";
import { svelteTesting } from "@testing-library/svelte/vite";

export default defineConfig({
  plugins: [svelte(), svelteTesting()],
  clearScreen: false,
  server: {
    port: 1420,
    strictPort: true,
  },
  build: {
    outDir: "dist",
    emptyOutDir: true,
    // Webviews support <link rel="modulepreload">; the polyfill is not needed.
    modulePreload: { polyfill: false },
  },
  test: {
    environment: "jsdom",
    include: ["tests/**/*.test.ts"],
    setupFiles: ["tests/setup.ts"],
    // The core's test server, for the tests that run the window against the real core.
    globalSetup: ["tests/global-backend.ts"],
    // Four files at once, whatever the cores: the window's tests mostly wait on the real core
    // and its peers (processes of their own), so on two cores one file at a time (Vitest's
    // default there) left them idle half the time: 235 s → 126 s.
    maxWorkers: 4,
    // A test waits up to 10 s for the page (tests/setup.ts); it may take more than one such wait.
    testTimeout: 30_000,
  },
});
