import { execFileSync } from "node:child_process";
import { readFileSync, writeFileSync } from "node:fs";
import { dirname, join } from "node:path";

/** A project as CrewAI's own CLI writes it, generated from the installed package (none of its texts is committed). */
export interface CrewaiProject {
  /** The project's folder (`<dir>/<name>`). */
  root: string;
  /** What goes on PYTHONPATH (or is installed into the image): the folder holding the package `<name>`. */
  src: string;
  /** The package's folder (`src/<name>`). */
  pkg: string;
}

/**
 * `crewai create crew <name> --classic --skip-provider` from the crewai runtime's virtual environment, into `dir`, with
 * its telemetry off; then its custom tool filled in (it answers with the text it was given, upper-cased, so a test can
 * tell its output from the model's).
 */
export function createCrewaiProject(python: string, dir: string, name: string): CrewaiProject {
  execFileSync(join(dirname(python), "crewai"), ["create", "crew", name, "--classic", "--skip-provider"], {
    cwd: dir,
    stdio: ["ignore", "ignore", "pipe"],
    env: {
      ...process.env,
      CREWAI_DISABLE_TELEMETRY: "true",
      OTEL_SDK_DISABLED: "true",
      GIT_CONFIG_GLOBAL: "/dev/null",
    },
    timeout: 60_000,
  });
  const root = join(dir, name);
  const pkg = join(root, "src", name);
  const toolFile = join(pkg, "tools", "custom_tool.py");
  const tool = readFileSync(toolFile, "utf8");
  const filled = tool.replace(
    /(def _run\(self, argument: str\) -> str:\n)[^\n]*\n/,
    (_whole, head: string) => `${head}        return f"TOOL SAYS {argument.upper()}"\n`,
  );
  if (filled === tool) throw new Error(`${toolFile}: the CLI's template changed; its _run(self, argument) is gone`);
  writeFileSync(toolFile, filled);
  return { root, src: join(root, "src"), pkg };
}

/**
 * The CLI's template defines its custom tool but gives it to no agent: gives it to the researcher, as a user filling
 * in the template would (`tools=[MyCustomTool()]` in crew.py).
 */
export function giveToolToResearcher(project: CrewaiProject, name: string): void {
  const crewFile = join(project.pkg, "crew.py");
  const source = readFileSync(crewFile, "utf8");
  const wired = source
    .replace(
      "from crewai.project import",
      `from ${name}.tools.custom_tool import MyCustomTool\nfrom crewai.project import`,
    )
    .replace(
      "config=self.agents_config['researcher'], # type: ignore[index]",
      "config=self.agents_config['researcher'], tools=[MyCustomTool()],  # type: ignore[index]",
    );
  if (wired === source || !wired.includes("tools=[MyCustomTool()]"))
    throw new Error(`${crewFile}: the CLI's crew.py changed`);
  writeFileSync(crewFile, wired);
}
