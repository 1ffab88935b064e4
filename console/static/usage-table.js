// What a finished execution's LLM calls used: each task's tokens (every attempt; /status gives them for a completed
// execution) and the whole execution's (the stream's final event), with their cost when the operator priced the
// models (KUBECREW_LLM_PRICES).
import { html } from "./html.js";

const count = (n) => n.toLocaleString("en-US");

// Costs are often fractions of a cent: enough digits to tell them apart.
export const dollars = (usd) => `$${usd < 0.01 ? usd.toPrecision(2) : usd.toFixed(usd < 1 ? 4 : 2)}`;

function Row({ label, usage, total }) {
  return html`<tr class=${total ? "total" : undefined} data-usage=${label}>
    <th scope="row">${label}</th>
    <td>${count(usage.input_tokens)}</td>
    <td>${count(usage.output_tokens)}</td>
    <td>${count(usage.total_tokens)}</td>
    <td>${usage.cost_usd !== undefined ? dollars(usage.cost_usd) : "—"}</td>
  </tr>`;
}

/** `tasks`: [name, usage] of the tasks that reported tokens; `total`: the execution's. */
export function UsageTable({ tasks, total }) {
  if (tasks.length === 0 && !total) return null;
  return html`<table class="records usage">
    <caption>
      Token usage
    </caption>
    <thead>
      <tr>
        <th scope="col">Task</th>
        <th scope="col">Input tokens</th>
        <th scope="col">Output tokens</th>
        <th scope="col">Total tokens</th>
        <th scope="col">Cost (USD)</th>
      </tr>
    </thead>
    <tbody>
      ${tasks.map(([name, usage]) => html`<${Row} key=${name} label=${name} usage=${usage} />`)}
      ${total && html`<${Row} label="Total" usage=${total} total=${true} />`}
    </tbody>
  </table>`;
}
