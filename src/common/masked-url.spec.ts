import { isMasked, maskQuery } from "./masked-url.js";

describe("maskQuery", () => {
  it.each([
    ["https://hooks.example/x?token=abc&b=2", "https://hooks.example/x?…"],
    ["https://hooks.example/x?", "https://hooks.example/x?…"],
    ["https://crm.example.com:8443/a/b?key=s#frag", "https://crm.example.com:8443/a/b?…"],
    ["https://hooks.example/x", "https://hooks.example/x"],
    ["https://hooks.example/x#a?b", "https://hooks.example/x#a?b"],
  ])("%s ⇒ %s", (url, shown) => {
    expect(maskQuery(url)).toBe(shown);
  });

  it("leaves null alone", () => {
    expect(maskQuery(null)).toBeNull();
  });
});

describe("isMasked", () => {
  it("recognises the mark, plain or percent-encoded, and nothing else", () => {
    expect(isMasked("https://hooks.example/x?…")).toBe(true);
    expect(isMasked("https://hooks.example/x?%e2%80%a6")).toBe(true);
    expect(isMasked("https://hooks.example/x?token=...")).toBe(false);
    expect(isMasked("https://hooks.example/x")).toBe(false);
  });
});
