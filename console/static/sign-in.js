// Signing in: with the organisation's OpenID provider, or with the admin key for the first setup.
import { api, setCsrf } from "./api.js";
import { html, useState } from "./html.js";

export function SignIn({ session, onSignedIn }) {
  const [key, setKey] = useState("");
  const [problem, setProblem] = useState(() => new URLSearchParams(location.search).get("sign_in_error") ?? "");
  const submit = async (event) => {
    event.preventDefault();
    try {
      const signedIn = await api("/console/sign-in", { method: "POST", body: { admin_key: key } });
      setCsrf(signedIn.csrf);
      onSignedIn();
    } catch (err) {
      setProblem(err.message);
    }
  };
  const { oidc, admin_key } = session.sign_in;
  return html`<section class="panel">
    <h1>Sign in</h1>
    ${problem && html`<p role="alert" class="error">${problem}</p>`}
    ${oidc && html`<p><a class="button" href="/console/sign-in/oidc">Sign in with your organisation's account</a></p>`}
    ${
      admin_key &&
      html`<form class="inline" onSubmit=${submit} aria-label="Sign in with the admin key">
        <label for="admin-key">Admin key (first setup)</label>
        <input
          id="admin-key"
          type="password"
          autocomplete="off"
          required
          value=${key}
          onInput=${(e) => setKey(e.currentTarget.value)}
        />
        <button type="submit">Sign in</button>
      </form>`
    }
    ${!oidc && !admin_key && html`<p>No sign-in method is configured for this console.</p>`}
  </section>`;
}
