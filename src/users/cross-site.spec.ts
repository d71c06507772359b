import { AppError } from "../common/app-error.js";
import { refuseCrossSite } from "./cross-site.js";

const BASE = "https://leads.example.com";
const refused = (headers: Record<string, string>) => {
  try {
    refuseCrossSite(headers, BASE);
    return undefined;
  } catch (error) {
    return error instanceof AppError ? [error.status, error.code] : error;
  }
};

describe("refuseCrossSite", () => {
  it("passes Leadgate's own pages and clients that are no browser", () => {
    expect(refused({ origin: BASE, "sec-fetch-site": "same-origin" })).toBeUndefined();
    expect(refused({})).toBeUndefined();
    expect(refused({ "sec-fetch-site": "none" })).toBeUndefined(); // typed into the address bar
    // Reached by another name than PUBLIC_BASE_URL's: the page's origin is the host it was sent to.
    expect(refused({ origin: "http://10.0.0.5:3000", host: "10.0.0.5:3000" })).toBeUndefined();
  });

  it("refuses another site, a sibling subdomain, another origin or an opaque one", () => {
    expect(refused({ "sec-fetch-site": "cross-site" })).toEqual([403, "cross_site_request"]);
    expect(refused({ "sec-fetch-site": "same-site" })).toEqual([403, "cross_site_request"]);
    expect(refused({ origin: "https://evil.example" })).toEqual([403, "cross_site_request"]);
    expect(refused({ origin: "http://leads.example.com" })).toEqual([403, "cross_site_request"]);
    expect(refused({ origin: "null" })).toEqual([403, "cross_site_request"]);
    expect(refused({ origin: "https://evil.example", host: "leads.example.com" })).toEqual([
      403,
      "cross_site_request",
    ]);
  });
});
