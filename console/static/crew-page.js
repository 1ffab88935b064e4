// One crew, with its tabs: Run (the kickoff form) and Executions (the list, or one execution live).
import { api, crewPath } from "./api.js";
import { AppsTab } from "./apps-tab.js";
import { ExecutionView } from "./execution-view.js";
import { ExecutionsTab } from "./executions-tab.js";
import { html, useEffect, useState } from "./html.js";
import { RunTab } from "./run-tab.js";
import { StatusTab } from "./status-tab.js";

const tabs = [
  { id: "run", label: "Run" },
  { id: "executions", label: "Executions" },
  // Tokens and service accounts: org admins only (the admin API refuses everyone else).
  { id: "status", label: "Status", admin: true },
  // The signed-in user's connected apps, which agents use when this user kicks off.
  { id: "apps", label: "Apps" },
];

export function CrewPage({ crew: name, tab, execution, admin, traceUrl }) {
  const [crew, setCrew] = useState(undefined);
  const [problem, setProblem] = useState("");
  useEffect(() => {
    api("/crews")
      .then((body) => {
        const found = body.crews.find((c) => c.name === name);
        if (found) setCrew(found);
        else setProblem(`No crew named "${name}" that you may use.`);
      })
      .catch((err) => setProblem(err.message));
  }, [name]);

  if (problem) return html`<p role="alert" class="error">${problem}</p>`;
  if (!crew) return html`<p class="loading">Loading…</p>`;
  let content;
  if (tab === "executions" && execution)
    content = html`<${ExecutionView} crew=${crew} id=${execution} traceUrl=${traceUrl} />`;
  else if (tab === "executions") content = html`<${ExecutionsTab} crew=${crew} />`;
  else if (tab === "status" && admin) content = html`<${StatusTab} crew=${crew} />`;
  else if (tab === "apps") content = html`<${AppsTab} />`;
  else content = html`<${RunTab} crew=${crew} />`;
  return html`<section>
    <h1>${crew.name}</h1>
    ${crew.description && html`<p>${crew.description}</p>`}
    <nav class="tabs" aria-label="Crew">
      ${tabs
        .filter((t) => admin || !t.admin)
        .map(
          (t) =>
            html`<a href=${`#${crewPath(crew.name)}/${t.id}`} aria-current=${t.id === tab ? "page" : undefined}
              >${t.label}</a
            >`,
        )}
    </nav>
    ${content}
  </section>`;
}
