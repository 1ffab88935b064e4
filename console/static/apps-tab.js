// The Apps tab: the signed-in user's connected apps (Gmail, Outlook, Salesforce, …) with Connect and Disconnect,
// through the crew API's /connections and the integrations service's connect sessions.
import { api } from "./api.js";
import { html, useEffect, useState } from "./html.js";

const label = { connected: "connected", not_connected: "not connected", reauthorization_required: "connect again" };

export function AppsTab() {
  const [connections, setConnections] = useState(undefined);
  const [problem, setProblem] = useState(() => {
    const status = new URLSearchParams(location.search).get("status");
    return status === "error" ? "The app could not be connected." : "";
  });
  const load = () =>
    api("/connections")
      .then((body) => setConnections(body.connections))
      .catch((err) => setProblem(err.message));
  useEffect(() => void load(), []);

  const connect = async (app) => {
    try {
      // Back to this tab afterwards: the integrations service appends status=connected or status=error.
      const returnUrl = `${location.origin}/console/${location.hash}`;
      const { url } = await api(`/connections/${encodeURIComponent(app)}`, { method: "POST", body: { returnUrl } });
      location.href = url;
    } catch (err) {
      setProblem(err.message);
    }
  };
  const disconnect = async (app) => {
    try {
      await api(`/connections/${encodeURIComponent(app)}`, { method: "DELETE" });
      await load();
    } catch (err) {
      setProblem(err.message);
    }
  };

  return html`<section class="panel" aria-labelledby="apps-title">
    <h2 id="apps-title">Your connected apps</h2>
    <p>Agents that declare an app act with your account when you kick off.</p>
    ${problem && html`<p role="alert" class="error">${problem}</p>`}
    ${
      connections &&
      html`<table class="records">
        <caption>
          Apps
        </caption>
        <thead>
          <tr>
            <th scope="col">App</th>
            <th scope="col">Status</th>
            <th scope="col">Account</th>
            <th scope="col"></th>
          </tr>
        </thead>
        <tbody>
          ${connections.map(
            (c) =>
              html`<tr key=${c.app} data-app=${c.app}>
                <td>${c.app}</td>
                <td class="connection-status">${label[c.status] ?? c.status}</td>
                <td>${c.account?.email ?? ""}</td>
                <td>
                  ${
                    c.connected
                      ? html`<button
                          type="button"
                          class="danger"
                          onClick=${() => disconnect(c.app)}
                          aria-label=${`Disconnect ${c.app}`}
                        >
                          Disconnect
                        </button>`
                      : html`<button type="button" onClick=${() => connect(c.app)} aria-label=${`Connect ${c.app}`}>
                          Connect
                        </button>`
                  }
                </td>
              </tr>`,
          )}
        </tbody>
      </table>`
    }
  </section>`;
}
