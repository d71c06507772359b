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

/** The definition: JSON.stringify with every object's keys copied into a fresh object in sorted order. */
function reference(value: unknown): string {
  return JSON.stringify(value, (_key, item: unknown) => {
    if (item === null || typeof item !== "object" || Array.isArray(item)) return item;
    const sorted = Object.create(null) as Record<string, unknown>;
    for (const key of Object.keys(item).sort()) sorted[key] = (item as Record<string, unknown>)[key];
    return sorted;
  });
}

/** A random JSON-like value: keys that are indices, near-indices, unicode, `__proto__`; undefined, dates. */
function randomValue(random: () => number, depth = 0): unknown {
  const pick = <T>(items: T[]): T => items[Math.floor(random() * items.length)]!;
  const scalars = [
    () => pick(["", "a", "é", "\u0001", '"q"', "\\", "😀", "\u2028"]),
    () => pick([0, -0, 1, -1.5, 1e21, 1e-7, 2 ** 53, NaN, Infinity]),
    () => pick([true, false, null, undefined]),
    () => new Date(Math.floor(random() * 2e12)),
  ];
  if (depth > 3 || random() < 0.4) return pick(scalars)();
  if (random() < 0.3)
    return Array.from({ length: Math.floor(random() * 4) }, () => randomValue(random, depth + 1));
  const keys = [
    "0",
    "1",
    "9",
    "10",
    "01",
    "-1",
    "4294967294",
    "4294967295",
    "a",
    "B",
    "é",
    "__proto__",
    "x y",
  ];
  const object: Record<string, unknown> = {};
  for (let n = Math.floor(random() * 6); n > 0; n--) {
    Object.defineProperty(object, pick(keys), {
      value: randomValue(random, depth + 1),
      enumerable: true,
      writable: true,
      configurable: true,
    });
  }
  return object;
}

describe("canonicalJson against its definition", () => {
  it("writes the same text as JSON.stringify of sorted copies, for 5,000 random values", () => {
    // mulberry32: a seeded generator in 32-bit integer arithmetic (no precision lost, no short cycle).
    let seed = 42;
    const random = () => {
      seed = (seed + 0x6d2b79f5) | 0;
      let t = Math.imul(seed ^ (seed >>> 15), 1 | seed);
      t = (t + Math.imul(t ^ (t >>> 7), 61 | t)) ^ t;
      return ((t ^ (t >>> 14)) >>> 0) / 2 ** 32;
    };
    const texts = new Set<string>();
    for (let n = 0; n < 5_000; n++) {
      const value = randomValue(random);
      const text = reference(value);
      expect(canonicalJson(value)).toBe(text);
      texts.add(String(text));
    }
    expect(texts.size).toBeGreaterThan(2_500); // thousands of distinct values (scalars repeat)
  });

  it.each([
    ["an object whose toJSON answers an object", { a: { toJSON: () => ({ z: 1, b: [2] }) } }],
    [
      "an array whose toJSON answers an object",
      { a: Object.assign([1], { toJSON: () => ({ z: 1, b: 2 }) }) },
    ],
    ["boxed primitives", { s: Object("ab") as unknown, n: Object(1) as unknown, b: Object(true) as unknown }],
    ["a sparse array", { list: [1, , 3] }], // eslint-disable-line no-sparse-arrays
    [
      "undefined, a symbol, a function, nested",
      { a: [undefined, Symbol("s"), () => 1], b: { c: undefined } },
    ],
    ["a lone surrogate in a value and in a key", { "\ud800k": "v\udc00" }],
    [
      "keys listed out of order (a proxy)",
      new Proxy({ "10": 1, "9": 2, a: 3 }, { ownKeys: () => ["10", "a", "9"] }),
    ],
    [
      "integer-like keys listed in code-unit order (a proxy)",
      new Proxy({ "10": 1, "9": 2 }, { ownKeys: () => ["10", "9"] }),
    ],
    [
      "an object of 20 keys out of order, some integer-like",
      Object.fromEntries(
        Array.from({ length: 20 }, (_, n) => [(n * 7) % 20 < 3 ? String(n) : `k${(n * 7) % 20}`, n]),
      ),
    ],
    [
      "parsed JSON, keys in and out of order at every depth",
      JSON.parse('{"a":{"b":[{"d":1,"c":{"y":2,"x":[]}}],"a":null},"z":"\\u00e9","10":true,"b":1.5}'),
    ],
  ])("writes the same text as its definition for %s", (_, value) => {
    expect(canonicalJson(value)).toBe(reference(value));
  });
});

describe("sha256Hex", () => {
  it("is the hex SHA-256 of the UTF-8 text", () => {
    expect(sha256Hex("abc")).toBe("ba7816bf8f01cfea414140de5dae2223b00361a396177a9cb410ff61f20015ad");
    expect(sha256Hex("é")).toBe("4a99557e4033c3539de2eb65472017cad5f9557f7a0625a09f1c3f6e2ba69c4c");
  });
});
