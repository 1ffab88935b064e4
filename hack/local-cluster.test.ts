import { execFile } from "node:child_process";
import { readFileSync } from "node:fs";
import { join } from "node:path";
import { promisify } from "node:util";
import { describe, expect, it } from "vitest";

const repo = join(import.meta.dirname, "..");

/** The ports hack/local-cluster.sh would give etcd, kube-apiserver and kube-scheduler, drawn without starting them. */
async function drawPorts(count: number): Promise<number[]> {
  const { stdout } = await promisify(execFile)("bash", ["-c", `source hack/local-cluster.sh && free_ports ${count}`], {
    cwd: repo,
  });
  return stdout.trim().split("\n").map(Number);
}

/** The kernel's ephemeral range: where outgoing connections (and listen(0)) take their local ports. */
function ephemeralRange(): [number, number] {
  const [low, high] = readFileSync("/proc/sys/net/ipv4/ip_local_port_range", "utf8").trim().split(/\s+/).map(Number);
  return [low!, high!];
}

describe("the ports hack/local-cluster.sh chooses", () => {
  it("are distinct, free, and outside the kernel's ephemeral range (an outgoing connection could take them)", async () => {
    const [low, high] = ephemeralRange();
    for (let draw = 0; draw < 3; draw++) {
      const ports = await drawPorts(4);
      expect(ports).toHaveLength(4);
      expect(new Set(ports).size).toBe(4);
      for (const port of ports) {
        expect(Number.isInteger(port) && port > 0 && port < 65536, String(port)).toBe(true);
        expect(port >= low && port <= high, `${port} is in the ephemeral range ${low}–${high}`).toBe(false);
      }
    }
  });
});
