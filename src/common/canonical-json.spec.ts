import { canonicalJson, sha256Hex } from "./canonical-json.js";

describe("canonicalJson", () => {
  it("sorts object keys at every depth, by UTF-16 code unit, integer-like keys first as in any JS object", () => {
    const value = {
      b: 1,
      a: { "10": 1, "9": 2, z: [3, { y: 1, x: undefined }], d: new Date(0) },
      é: 1,
      E: 2,
    };
    expect(canonicalJson(value)).toBe(
      '{"E":2,"a":{"9":2,"10":1,"d":"1970-01-01T00:00:00.000Z","z":[3,{"y":1}]},"b":1,"é":1}',
    );
  });

  it("keeps a parsed `__proto__` key as a key", () => {
    expect(canonicalJson(JSON.parse('{"b":1,"__proto__":{"x":1},"a":{"__proto__":null}}'))).toBe(
      '{"__proto__":{"x":1},"a":{"__proto__":null},"b":1}',
    );
  });

  it("gives the same text for the same value whatever the key order", () => {
    expect(canonicalJson({ x: { b: [1, { d: 1, c: 2 }], a: null } })).toBe(
      canonicalJson({ x: { a: null, b: [1, { c: 2, d: 1 }] } }),
    );
  });
});

describe("sha256Hex", () => {
  it("is the hex SHA-256 of the UTF-8 text", () => {
    expect(sha256Hex("abc")).toBe("ba7816bf8f01cfea414140de5dae2223b00361a396177a9cb410ff61f20015ad");
    expect(sha256Hex("é")).toBe("4a99557e4033c3539de2eb65472017cad5f9557f7a0625a09f1c3f6e2ba69c4c");
  });
});
