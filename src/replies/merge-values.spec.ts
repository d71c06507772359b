import { mergeValues } from "./merge-values.js";

describe("mergeValues", () => {
  it("maps the stored lead and its connection to the merge fields", () => {
    expect(
      mergeValues(
        { firstName: "Marta", name: "Marta K.", service: "Roof repair" },
        { displayName: "Acme Roofing", provider: "yelp" },
      ),
    ).toEqual({
      "lead.firstName": "Marta",
      "lead.name": "Marta K.",
      "lead.service": "Roof repair",
      "business.name": "Acme Roofing",
      provider: "Yelp",
    });
  });

  it("leaves out what the lead lacks (null or blank), so the template's fallback applies", () => {
    expect(
      mergeValues(
        { firstName: null, name: "  ", service: null },
        { displayName: "Acme", provider: "thumbtack" },
      ),
    ).toEqual({ "business.name": "Acme", provider: "Thumbtack" });
  });
});
