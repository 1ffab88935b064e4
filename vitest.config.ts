import { defineConfig } from "vitest/config";

// Six projects: pure unit tests next to the code, integration suites against real local servers
// (redis-server, oidc-provider, nginx, HTTP fixtures), suites against a real Kubernetes control plane, and a real model.
export default defineConfig({
  test: {
    projects: [
      {
        test: {
          name: "unit",
          include: ["{core,platform,kube,api,console,controller,runner,integrations,dev,cli,hack}/**/*.test.ts"],
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
      {
        // A real control plane and the local node (hack/local-cluster.sh), one per run, or TEST_KUBECONFIG's cluster.
        test: {
          name: "cluster",
          include: ["test/cluster/**/*.test.ts", "test/e2e/**/*.test.ts"],
          globalSetup: ["test/support/cluster-global-setup.ts"],
          testTimeout: 180_000,
          hookTimeout: 120_000,
          fileParallelism: false,
        },
      },
      {
        // The web console in a real browser: Debian's chromium driven by playwright-core, against kubecrew dev.
        test: {
          name: "browser",
          include: ["test/browser/**/*.test.ts"],
          // redis-server for the integrations service behind the Apps tab.
          globalSetup: ["test/support/redis-global-setup.ts"],
          testTimeout: 60_000,
          hookTimeout: 60_000,
          // One chromium and one kubecrew dev at a time: the machines running npm test have 2 cores.
          fileParallelism: false,
        },
      },
      {
        // A real model (SmolLM2-135M on llama.cpp, the local provider) running crews in kubecrew dev. One file at a
        // time, each model on one thread: it shares 2 cores with the other projects' workers.
        test: {
          name: "model",
          include: ["test/model/**/*.test.ts"],
          globalSetup: ["test/support/model-global-setup.ts"],
          testTimeout: 600_000,
          hookTimeout: 120_000,
          fileParallelism: false,
        },
      },
      {
        // The Helm chart and the image build, without a cluster: helm lint, helm template under the main value
        // combinations, the Dockerfile against the sources the CLI loads.
        test: {
          name: "chart",
          include: ["test/chart/**/*.test.ts"],
          testTimeout: 60_000,
          hookTimeout: 60_000,
        },
      },
    ],
  },
});
