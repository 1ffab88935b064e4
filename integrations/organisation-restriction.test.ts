import { describe, expect, it } from "vitest";
import { organisationViolation } from "./organisation-restriction.ts";
import { resolveProviderSettings } from "./provider-settings.ts";

const tenant = "11111111-2222-3333-4444-555555555555";
const providers = resolveProviderSettings({
  KUBECREW_GOOGLE_HOSTED_DOMAIN: "example.com",
  KUBECREW_MICROSOFT_TENANT_ID: tenant,
});

describe("organisation restriction", () => {
  it("lets a Google account of the hosted domain through and stops others", () => {
    const google = providers.get("google")!;
    expect(organisationViolation(google, { hd: "Example.com" })).toBeUndefined();
    expect(organisationViolation(google, { hd: "other.org" })).toMatch(
      /belongs to other.org; only accounts of example.com/,
    );
    expect(organisationViolation(google, {})).toMatch(/not an account of example.com/);
    expect(organisationViolation(google, undefined)).toBeDefined();
  });

  it("lets a Microsoft account of the tenant through and stops others", () => {
    const microsoft = providers.get("microsoft")!;
    expect(organisationViolation(microsoft, { tid: tenant.toUpperCase() })).toBeUndefined();
    expect(organisationViolation(microsoft, { tid: "99999999-2222-3333-4444-555555555555" })).toMatch(
      /not in the allowed directory/,
    );
  });

  it("does not restrict providers without a restriction configured", () => {
    expect(organisationViolation(resolveProviderSettings({}).get("google")!, { hd: "any.org" })).toBeUndefined();
  });
});
