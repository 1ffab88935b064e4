// Signing in when no session exists: with the admin key, for the first setup.
import { api, setCsrf } from "./api.js";
import { html, useState } from "./html.js";

export function SignIn({ session, onSignedIn }) {
  const [key, setKey] = useState("");
  const [problem, setProblem] = useState("");
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
  if (!session.sign_in.admin_key) {
    return html`<section>
      <h1>Sign in</h1>
      <p>No sign-in method is configured for this console.</p>
    </section>`;
  }
  return html`<section>
    <h1>Sign in</h1>
    <form onSubmit=${submit}>
      <label for="admin-key">Admin key</label>
      <input
        id="admin-key"
        type="password"
        autocomplete="off"
        required
        value=${key}
        onInput=${(e) => setKey(e.currentTarget.value)}
      />
      <button type="submit">Sign in</button>
      ${problem && html`<p role="alert" class="error">${problem}</p>`}
    </form>
  </section>`;
}
