// Every flow the signed-in user may use (declarative CrewAI flows, served at /flows/{flow}/): what it does, its
// inputs and methods.
import { api, ApiFailure } from "./api.js";
import { html, useEffect, useState } from "./html.js";

export const flowPath = (flow, rest = "") => `/flows/${encodeURIComponent(flow)}${rest}`;

/** The flows the API serves; none when it serves no flows at all (a 404: no flow in the crews folder). */
export const loadFlows = () =>
  api("/flows").then(
    (body) => body.flows,
    (err) => {
      if (err instanceof ApiFailure && err.status === 404) return [];
      throw err;
    },
  );

export function FlowsPage() {
  const [flows, setFlows] = useState(undefined);
  const [problem, setProblem] = useState("");
  useEffect(() => {
    loadFlows()
      .then(setFlows)
      .catch((err) => setProblem(err.message));
  }, []);
  return html`<section>
    <h1>Flows</h1>
    ${problem && html`<p role="alert" class="error">${problem}</p>`}
    ${flows && !flows.length && html`<p>No flows you may use.</p>`}
    ${flows?.map(
      (flow) =>
        html`<article class="crew" key=${flow.name} aria-labelledby=${`flow-${flow.name}`}>
          <h2 id=${`flow-${flow.name}`}><a href=${`#${flowPath(flow.name)}`}>${flow.name}</a></h2>
          ${flow.description && html`<p>${flow.description}</p>`}
          <p>Inputs: ${flow.inputs.length ? flow.inputs.map((i) => html`<code>${i}</code> `) : "none"}</p>
          <p>Methods: ${flow.methods.join(", ")}</p>
        </article>`,
    )}
  </section>`;
}
