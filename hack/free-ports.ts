// `node hack/free-ports.ts <count>`: that many distinct loopback ports nothing listens on, one a line, drawn as the
// tests draw theirs (test/support/ports.ts: at random, below the kernel's ephemeral range, where no outgoing
// connection takes one before the server binds it). hack/local-cluster.sh picks etcd's and the apiserver's here.
import { freePort } from "../test/support/ports.ts";

const count = Number(process.argv[2] ?? "1");
if (!Number.isInteger(count) || count < 1 || count > 20) {
  console.error("usage: node hack/free-ports.ts <count, 1 to 20>");
  process.exit(2);
}
const ports = new Set<number>();
while (ports.size < count) ports.add(await freePort());
console.log([...ports].join("\n"));
