import { mkdtemp, readdir, readFile, rm, writeFile } from "node:fs/promises";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { afterEach, beforeEach, describe, expect, it } from "vitest";
import { AssignmentError, FileTaskIO, writeFileAtomically } from "./io.ts";
import { testAssignment } from "./test-assignment.ts";

let dir: string;
beforeEach(async () => {
  dir = await mkdtemp(join(tmpdir(), "kubecrew-io-"));
});
afterEach(async () => {
  await rm(dir, { recursive: true, force: true });
});

describe("FileTaskIO", () => {
  it("reads the assignment and writes the outcome as JSON", async () => {
    const io = new FileTaskIO({ assignment: join(dir, "a.json"), outcome: join(dir, "o.json") });
    await writeFile(io.assignmentPath, JSON.stringify(testAssignment()));
    expect(await io.readAssignment()).toEqual(testAssignment());
    const outcome = {
      taskName: "write",
      taskIndex: 1,
      agent: "Senior Writer",
      output: "done",
      executionTime: 1.5,
      tokenUsage: { inputTokens: 3, outputTokens: 1, totalTokens: 4 },
      model: "mock/mock",
      attempt: 1,
    };
    await io.reportOutcome(outcome);
    expect(JSON.parse(await readFile(io.outcomePath, "utf8"))).toEqual(outcome);
    expect(await readdir(dir)).toEqual(["a.json", "o.json"]);
  });

  it("names the file and the field of a bad assignment", async () => {
    const io = new FileTaskIO({ assignment: join(dir, "a.json"), outcome: join(dir, "o.json") });
    await writeFile(io.assignmentPath, JSON.stringify({ ...testAssignment(), task: { name: "x" } }));
    await expect(io.readAssignment()).rejects.toThrow(AssignmentError);
    await expect(io.readAssignment()).rejects.toThrow(/a\.json is invalid: task\.index: /);
    await writeFile(io.assignmentPath, "{not json");
    await expect(io.readAssignment()).rejects.toThrow(/a\.json is not JSON/);
    await expect(new FileTaskIO({ assignment: join(dir, "none.json"), outcome: "x" }).readAssignment()).rejects.toThrow(
      /Cannot read assignment .*none\.json/,
    );
  });
});

describe("writeFileAtomically", () => {
  it("replaces the file whole and leaves no temporary file", async () => {
    const path = join(dir, "out.json");
    await writeFileAtomically(path, "old");
    await writeFileAtomically(path, "new contents");
    expect(await readFile(path, "utf8")).toBe("new contents");
    expect(await readdir(dir)).toEqual(["out.json"]);
  });

  it("fails when the directory does not exist, leaving nothing behind", async () => {
    await expect(writeFileAtomically(join(dir, "missing", "out.json"), "x")).rejects.toThrow(/ENOENT/);
    expect(await readdir(dir)).toEqual([]);
  });
});
