import "vitest";
import type { TestProject } from "vitest/node";
import { startRedis } from "./redis.ts";

declare module "vitest" {
  export interface ProvidedContext {
    redisUrl: string;
  }
}

/** One shared redis-server per run; tests that stop Redis start their own with startRedis(). */
export default async function setup(project: TestProject) {
  const redis = await startRedis();
  project.provide("redisUrl", redis.url);
  return () => redis.stop();
}
