import { defineConfig } from "vitest/config";

// Three projects: pure unit tests next to the code, integration suites against real local servers
// (redis-server, oidc-provider, nginx, HTTP fixtures), and suites against a real Kubernetes control plane.
export default defineConfig({
  test: {
    projects: [
      {
        test: {
          name: "unit",
          include: ["{core,api,controller,runner,integrations,hack}/**/*.test.ts"],
        },
      },
      {
        test: {
          name: "integration",
          include: ["test/integration/**/*.test.ts"],
          globalSetup: ["test/support/redis-global-setup.ts"],
          testTimeout: 30_000,
          hookTimeout: 60_000,
        },
      },
    ],
  },
});
