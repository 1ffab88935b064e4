// The crew's Status tab (org admins): its bearer tokens and service accounts through the admin API. A new token or
// client secret is shown once, right after it is made; afterwards only its id is known.
import { api } from "./api.js";
import { when } from "./format.js";
import { html, useEffect, useState } from "./html.js";

const forCrew = (crew) => (record) => record.crews === "*" || record.crews.includes(crew);

function ShownOnce({ label, fields, onDone }) {
  return html`<div class="shown-once" role="status">
    <p><strong>${label}</strong> Copy it now: it is shown only this once.</p>
    <dl>
      ${fields.map(
        ([name, value]) =>
          html`<dt>${name}</dt>
            <dd><code class="secret">${value}</code></dd>`,
      )}
    </dl>
    <button type="button" onClick=${onDone}>Done</button>
  </div>`;
}

/**
 * One admin collection of a crew (`/admin/tokens`, `/admin/clients`): its records, creating one (the answer, with its
 * secret, kept to be shown once) and revoking one; a failure becomes the panel's problem line.
 */
function useAdminRecords(path, key, crew) {
  const [records, setRecords] = useState([]);
  const [created, setCreated] = useState(undefined);
  const [problem, setProblem] = useState("");
  const load = () =>
    api(path)
      .then((body) => setRecords(body[key].filter(forCrew(crew.name))))
      .catch((err) => setProblem(err.message));
  useEffect(() => void load(), [crew.name]);
  const attempt = async (request) => {
    try {
      await request();
      await load();
      return true;
    } catch (err) {
      setProblem(err.message);
      return false;
    }
  };
  return {
    records,
    created,
    problem,
    done: () => setCreated(undefined),
    create: (body) => {
      setProblem("");
      return attempt(async () => setCreated(await api(path, { method: "POST", body })));
    },
    revoke: (id) => attempt(() => api(`${path}/${encodeURIComponent(id)}`, { method: "DELETE" })),
  };
}

function Tokens({ crew }) {
  const {
    records: tokens,
    created,
    problem,
    done,
    create: post,
    revoke,
  } = useAdminRecords("/admin/tokens", "tokens", crew);
  const [form, setForm] = useState({ kind: "user", user: "", ttlDays: "" });

  const create = async (event) => {
    event.preventDefault();
    const body = {
      kind: form.kind,
      crews: [crew.name],
      ...(form.kind === "user" ? { user: form.user } : {}),
      ...(form.ttlDays ? { ttl_seconds: Math.round(Number(form.ttlDays) * 86400) } : {}),
    };
    if (await post(body)) setForm({ ...form, user: "" });
  };

  return html`<section aria-labelledby="tokens-title" class="panel">
    <h2 id="tokens-title">Bearer tokens</h2>
    <form class="inline" onSubmit=${create} aria-label="New token">
      <label for="token-kind">Kind</label>
      <select id="token-kind" value=${form.kind} onChange=${(e) => setForm({ ...form, kind: e.currentTarget.value })}>
        <option value="user">user: kickoff and its own executions</option>
        <option value="org">org: full operations on ${crew.name}</option>
      </select>
      ${
        form.kind === "user" &&
        html`<label for="token-user">User</label>
          <input
            id="token-user"
            required
            value=${form.user}
            onInput=${(e) => setForm({ ...form, user: e.currentTarget.value })}
          />`
      }
      <label for="token-ttl">Lifetime in days (optional)</label>
      <input
        id="token-ttl"
        type="number"
        min="0.01"
        max="3650"
        step="any"
        value=${form.ttlDays}
        onInput=${(e) => setForm({ ...form, ttlDays: e.currentTarget.value })}
      />
      <button type="submit">Create token</button>
    </form>
    ${
      created &&
      html`<${ShownOnce}
        label=${`New ${created.kind} token ${created.id}.`}
        fields=${[["Token", created.token]]}
        onDone=${done}
      />`
    }
    ${problem && html`<p role="alert" class="error">${problem}</p>`}
    <table class="records">
      <caption>
        Tokens valid for ${crew.name}
      </caption>
      <thead>
        <tr>
          <th scope="col">Id</th>
          <th scope="col">Kind</th>
          <th scope="col">Subject</th>
          <th scope="col">Crews</th>
          <th scope="col">Created</th>
          <th scope="col">Expires</th>
          <th scope="col"></th>
        </tr>
      </thead>
      <tbody>
        ${tokens.map(
          (t) =>
            html`<tr key=${t.id} data-token-id=${t.id}>
              <td><code>${t.id}</code></td>
              <td>${t.kind}</td>
              <td>${t.subject}</td>
              <td>${t.crews === "*" ? "every crew" : t.crews.join(", ")}</td>
              <td>${when(t.created)}</td>
              <td>${t.expires ? when(t.expires) : "never"}</td>
              <td>
                <button type="button" class="danger" onClick=${() => revoke(t.id)} aria-label=${`Revoke token ${t.id}`}>
                  Revoke
                </button>
              </td>
            </tr>`,
        )}
      </tbody>
    </table>
  </section>`;
}

function Clients({ crew }) {
  const {
    records: clients,
    created,
    problem,
    done,
    create: post,
    revoke,
  } = useAdminRecords("/admin/clients", "clients", crew);
  const [form, setForm] = useState({ role: "org", name: "" });

  const create = async (event) => {
    event.preventDefault();
    const body = { role: form.role, crews: [crew.name], ...(form.name ? { name: form.name } : {}) };
    if (await post(body)) setForm({ ...form, name: "" });
  };

  return html`<section aria-labelledby="clients-title" class="panel">
    <h2 id="clients-title">Service accounts</h2>
    <p>
      A service account exchanges its client id and secret at <code>POST /oauth/token</code> (client credentials) for
      access tokens.
    </p>
    <form class="inline" onSubmit=${create} aria-label="New service account">
      <label for="client-role">Role</label>
      <select id="client-role" value=${form.role} onChange=${(e) => setForm({ ...form, role: e.currentTarget.value })}>
        <option value="org">org</option>
        <option value="user">user</option>
      </select>
      <label for="client-name">Name (optional)</label>
      <input id="client-name" value=${form.name} onInput=${(e) => setForm({ ...form, name: e.currentTarget.value })} />
      <button type="submit">Create service account</button>
    </form>
    ${
      created &&
      html`<${ShownOnce}
        label="New service account."
        onDone=${done}
        fields=${[
          ["Client id", created.client_id],
          ["Client secret", created.client_secret],
        ]}
      />`
    }
    ${problem && html`<p role="alert" class="error">${problem}</p>`}
    <table class="records">
      <caption>
        Service accounts of ${crew.name}
      </caption>
      <thead>
        <tr>
          <th scope="col">Client id</th>
          <th scope="col">Role</th>
          <th scope="col">Name</th>
          <th scope="col">Crews</th>
          <th scope="col">Created</th>
          <th scope="col"></th>
        </tr>
      </thead>
      <tbody>
        ${clients.map(
          (c) =>
            html`<tr key=${c.client_id} data-client-id=${c.client_id}>
              <td><code>${c.client_id}</code></td>
              <td>${c.role}</td>
              <td>${c.name ?? ""}</td>
              <td>${c.crews === "*" ? "every crew" : c.crews.join(", ")}</td>
              <td>${when(c.created)}</td>
              <td>
                <button
                  type="button"
                  class="danger"
                  onClick=${() => revoke(c.client_id)}
                  aria-label=${`Revoke service account ${c.client_id}`}
                >
                  Revoke
                </button>
              </td>
            </tr>`,
        )}
      </tbody>
    </table>
  </section>`;
}

export function StatusTab({ crew }) {
  return html`<div><${Tokens} crew=${crew} /><${Clients} crew=${crew} /></div>`;
}
