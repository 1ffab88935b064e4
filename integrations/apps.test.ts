import { describe, expect, it } from "vitest";
import { appCatalogue, appNames } from "../core/apps.ts";
import { findProviderDefinition, providerRegistry } from "./providers.ts";

describe("apps on the provider registry", () => {
  it("maps every app onto a provider and product of integrations/providers.ts", () => {
    for (const app of appNames) {
      const { provider, product } = appCatalogue[app];
      expect(findProviderDefinition(provider)?.products[product], `${app} → ${provider}/${product}`).toBeDefined();
    }
  });

  it("leaves no product of the registry without its app", () => {
    const mapped = new Set(appNames.map((app) => `${appCatalogue[app].provider}/${appCatalogue[app].product}`));
    for (const provider of providerRegistry)
      for (const product of Object.keys(provider.products)) expect(mapped).toContain(`${provider.id}/${product}`);
  });
});
