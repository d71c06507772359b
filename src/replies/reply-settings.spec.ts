import type { BusinessHours } from "./business-hours.js";
import {
  type AutoResponse,
  DEFAULT_RESPONSE_TARGET,
  effectiveSettings,
  plannedReply,
} from "./reply-settings.js";

const hours: BusinessHours = { timezone: "America/New_York", weekly: { tue: [["08:00", "18:00"]] } };
const reply: AutoResponse = { enabled: true, text: "Hi {{lead.firstName}}!" };

describe("effectiveSettings", () => {
  it("takes each setting whole from the connection, else the tenant, else the default", () => {
    const tenantReply: AutoResponse = { enabled: false, text: "Tenant text", delaySeconds: 60 };
    const settings = effectiveSettings(
      { autoResponse: reply },
      { client: {}, tenant: { autoResponse: tenantReply, businessHours: hours } },
    );
    expect(settings).toEqual({
      autoResponse: reply,
      businessHours: hours,
      responseTarget: DEFAULT_RESPONSE_TARGET,
      source: { autoResponse: "connection", businessHours: "tenant", responseTarget: "default" },
    });
  });

  it("the client's defaults come between the connection's own and the tenant's, each setting whole", () => {
    const tenant = { autoResponse: reply, businessHours: hours, responseTarget: { seconds: 900 } };
    const client = {
      businessHours: { timezone: "Europe/Paris", weekly: {} },
      responseTarget: { seconds: 120 },
    };
    const settings = effectiveSettings({ responseTarget: { seconds: 60 } }, { client, tenant });
    expect(settings).toEqual({
      autoResponse: reply,
      businessHours: client.businessHours,
      responseTarget: { seconds: 60 },
      source: { autoResponse: "tenant", businessHours: "client", responseTarget: "connection" },
    });
    expect(effectiveSettings({}, { client, tenant: null }).source.responseTarget).toBe("client");
  });

  it("without a tenant or any setting: no reply, always open, the default target", () => {
    for (const tenant of [null, undefined, {}]) {
      expect(effectiveSettings({}, { client: tenant, tenant })).toEqual({
        autoResponse: null,
        businessHours: null,
        responseTarget: { seconds: 300 },
        source: { autoResponse: "default", businessHours: "default", responseTarget: "default" },
      });
    }
  });

  it("a connection's own target wins over the tenant's", () => {
    const settings = effectiveSettings(
      { responseTarget: { seconds: 60 } },
      { client: undefined, tenant: { responseTarget: { seconds: 900 } } },
    );
    expect(settings.responseTarget).toEqual({ seconds: 60 });
    expect(settings.source.responseTarget).toBe("connection");
  });
});

describe("plannedReply", () => {
  const open = new Date("2026-12-01T15:00:00Z"); // Tuesday 10:00 in New York
  const closed = new Date("2026-12-02T15:00:00Z"); // Wednesday
  const withAfterHours: AutoResponse = {
    ...reply,
    afterHoursText: "We're closed, {{lead.firstName|friend}}.",
  };

  it("inside business hours: the text, rendered", () => {
    expect(plannedReply(withAfterHours, hours, { "lead.firstName": "Marta" }, open)).toEqual({
      text: "Hi Marta!",
      variant: "business-hours",
    });
  });

  it("outside: the after-hours text, else the text", () => {
    expect(plannedReply(withAfterHours, hours, {}, closed)).toEqual({
      text: "We're closed, friend.",
      variant: "after-hours",
    });
    expect(plannedReply(reply, hours, {}, closed)).toEqual({ text: "Hi!", variant: "after-hours" });
  });

  it("without business hours: always the business-hours variant", () => {
    expect(plannedReply(withAfterHours, null, { "lead.firstName": "Ann" }, closed)).toEqual({
      text: "Hi Ann!",
      variant: "business-hours",
    });
  });
});
