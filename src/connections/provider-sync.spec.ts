import { bullJobId } from "../jobs/operations.js";
import { actionOf, providerSyncKey } from "./provider-sync.js";

describe("provider-sync job keys", () => {
  const connection = "0b5e6f0e-8f0a-4a53-9f3e-6c1f2d3a4b5c";

  it("name the connection, the action and the request's number, and give it back", () => {
    const key = providerSyncKey(connection, "rotate", 7);
    expect(key).toBe(`provider-sync:${connection}:rotate:7`);
    expect(actionOf(key)).toBe("rotate");
    expect(providerSyncKey(connection, "sync", 8)).not.toBe(providerSyncKey(connection, "sync", 9));
  });

  it("make a valid BullMQ job id (no ':', not all digits)", () => {
    expect(bullJobId(providerSyncKey(connection, "remove", 1))).toBe(`provider-sync.${connection}.remove.1`);
  });

  it("refuse a key of another operation", () => {
    expect(() => actionOf("crm-delivery:abc")).toThrow("not a provider-sync job key");
  });
});
