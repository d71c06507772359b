import fc from "fast-check";
import {
  checkTemplate,
  LONGEST_FIELD_VALUE,
  MAX_REPLY_LENGTH,
  MERGE_FIELDS,
  type MergeValues,
  renderTemplate,
} from "./template.js";

const anyText = fc.string({ unit: "binary", maxLength: 1500 });
/** Text made mostly of the grammar's own characters, so that the parser's edges are reached. */
const bracey = fc
  .array(fc.constantFrom("{", "}", "{{", "}}", "|", " ", "\n", "lead.name", "provider", "x", "lead."), {
    maxLength: 40,
  })
  .map((parts) => parts.join(""));
const field = fc.constantFrom(...MERGE_FIELDS);
const noBraces = (max: number) =>
  fc.string({ unit: "binary", maxLength: max }).filter((s) => !s.includes("{") && !s.includes("}"));
const values = (maxLength: number) =>
  fc.dictionary(field, noBraces(maxLength), { maxKeys: MERGE_FIELDS.length }) as fc.Arbitrary<MergeValues>;
/** Templates that may pass the check: text without braces, fields with and without fallbacks. */
const template = fc
  .array(
    fc.oneof(
      noBraces(60),
      field.map((f) => `{{${f}}}`),
      fc
        .tuple(
          field,
          noBraces(20).filter((s) => !s.includes("|")),
        )
        .map(([f, d]) => `{{ ${f} | ${d} }}`),
    ),
    { maxLength: 12 },
  )
  .map((parts) => parts.join(""));

describe("checkTemplate", () => {
  it("accepts every merge field, with and without fallbacks and inner whitespace", () => {
    expect(checkTemplate("Hi {{lead.firstName}}, thanks for asking {{business.name}}!")).toBeUndefined();
    expect(
      checkTemplate("{{ lead.name }} {{lead.service|your project}} {{ provider | the app }}"),
    ).toBeUndefined();
    expect(checkTemplate("{ single braces } are text")).toBeUndefined();
  });

  it.each([
    [
      "Thanks for {{lead.email}}",
      11,
      'unknown merge field "lead.email" at position 11; known: lead.firstName',
    ],
    ["Hi {{constructor}}", 3, 'unknown merge field "constructor"'],
    ["Hi {{__proto__}}", 3, 'unknown merge field "__proto__"'],
    ["Hi {{lead.constructor|x}}", 3, 'unknown merge field "lead.constructor"'],
    ["Hi {{LEAD.NAME}}", 3, 'unknown merge field "LEAD.NAME"'],
    ["Hi {{}} there", 3, "empty merge field at position 3"],
    ["Hi {{ |friend}}", 3, "empty merge field"],
    ["Hi {{lead.name", 3, 'unbalanced braces: "{{" at position 3 is not closed'],
    ["Hi lead.name}} there", 12, 'unbalanced braces: "}}" at position 12 has no "{{"'],
    ["{{lead.name}} and }}", 18, 'unbalanced braces: "}}" at position 18'],
    ["Hi {{lead.name {{provider}}", 15, 'unbalanced braces: "{" at position 15 inside a merge field'],
    ["Hi {{lead.name|a}b}}", 16, 'unbalanced braces: "}" at position 16 inside a merge field'],
    ["", 0, "the template is empty"],
    [" \n\t ", 0, "the template is empty"],
  ])("refuses %j at position %i", (text, position, message) => {
    const error = checkTemplate(text);
    expect(error?.position).toBe(position);
    expect(error?.message).toContain(message);
  });

  it("refuses a template whose longest rendering passes the limit, at the position where it does", () => {
    expect(checkTemplate("a".repeat(MAX_REPLY_LENGTH))).toBeUndefined();
    expect(checkTemplate("a".repeat(MAX_REPLY_LENGTH + 1))).toEqual({
      message: expect.stringContaining("longest rendering is 1001 characters"),
      position: MAX_REPLY_LENGTH,
    });
    // 920 + 80 = 1000 fits; one more character of text does not.
    expect(checkTemplate(`${"a".repeat(920)}{{lead.name}}`)).toBeUndefined();
    expect(checkTemplate(`${"a".repeat(920)}{{lead.name}}!`)?.position).toBe(933);
    // The field itself is where 921 + 80 passes 1000.
    expect(checkTemplate(`${"a".repeat(921)}{{lead.name}}`)?.position).toBe(921);
    // A fallback longer than the longest value counts at its own length.
    const long = "f".repeat(LONGEST_FIELD_VALUE + 10);
    expect(checkTemplate(`${"a".repeat(910)}{{provider|${long}}}`)).toBeUndefined();
    expect(checkTemplate(`${"a".repeat(911)}{{provider|${long}}}`)?.position).toBe(911);
  });

  it("never throws, on any text", () => {
    fc.assert(fc.property(fc.oneof(anyText, bracey), (text) => void checkTemplate(text)));
  });
});

describe("renderTemplate", () => {
  const lead: MergeValues = { "lead.firstName": "Marta", "lead.name": "Marta K.", provider: "Yelp" };

  it("fills fields, takes fallbacks for missing or empty values", () => {
    expect(renderTemplate("Hi {{lead.firstName}}, via {{ provider }}.", lead)).toBe("Hi Marta, via Yelp.");
    expect(renderTemplate("About {{lead.service|your project}}.", lead)).toBe("About your project.");
    expect(renderTemplate("About {{lead.service|your project}}.", { "lead.service": "" })).toBe(
      "About your project.",
    );
    expect(renderTemplate("About {{lead.service | your project }}.", { "lead.service": " " })).toBe(
      "About your project.",
    );
    expect(renderTemplate("About {{lead.service|x}}.", { "lead.service": "Roofing" })).toBe("About Roofing.");
  });

  it.each([
    ["Hi {{lead.firstName}}, thanks", "Hi, thanks"],
    ["Hi {{lead.firstName}} thanks", "Hi thanks"],
    ["Hi {{lead.firstName}}!", "Hi!"],
    ["{{lead.firstName}} thanks", "thanks"],
    ["  {{lead.firstName}}, thanks", ", thanks"],
    ["Thanks {{lead.firstName}}", "Thanks"],
    ["Thanks {{lead.firstName}} \n", "Thanks"],
    ["Hi {{lead.firstName}} {{lead.service}}, thanks", "Hi, thanks"],
    ["Hi{{lead.firstName}}there", "Hithere"],
    ["Hi,{{lead.firstName}} there", "Hi, there"],
    ["Hi {{lead.firstName}}\nThanks", "Hi\nThanks"],
    ["Hello\n{{lead.firstName}}\nBye", "Hello\nBye"],
    ["Hello\n\n{{lead.name}}\n{{lead.service}}\n\nBye", "Hello\n\nBye"],
    ["Keep   these  {{lead.name}} spaces\n\n  and lines ", "Keep   these  spaces\n\n  and lines "],
  ])("a missing field without a fallback collapses the whitespace around it: %j", (text, expected) => {
    expect(renderTemplate(text, {})).toBe(expected);
  });

  it("inserts values as they are: never escaped, never parsed again", () => {
    expect(renderTemplate("Hi {{lead.name}}", { "lead.name": "{{provider}} <b>&amp;" })).toBe(
      "Hi {{provider}} <b>&amp;",
    );
    fc.assert(
      fc.property(fc.string({ unit: "binary", maxLength: 200 }), field, (value, f) => {
        fc.pre(value.trim() !== "");
        expect(renderTemplate(`<{{${f}}}>`, { [f]: value })).toBe(`<${value}>`);
      }),
    );
  });

  it("sends a text that does not parse literally (cut to the limit)", () => {
    expect(renderTemplate("Hi {{name}}, {{lead.name}}", lead)).toBe("Hi {{name}}, {{lead.name}}");
    expect(renderTemplate("Hi {{lead.name", lead)).toBe("Hi {{lead.name");
    const cut = renderTemplate(`{{x}} ${"word ".repeat(300)}`, lead);
    expect(cut).toBe(`{{x}} ${"word ".repeat(198)}word`);
    expect(cut).toHaveLength(MAX_REPLY_LENGTH);
  });

  it("cuts a long rendering at the last word boundary at or before the limit, without a trailing space", () => {
    const words = "abcd ".repeat(300); // a space at every fifth character
    expect(renderTemplate(words, {})).toBe("abcd ".repeat(200).trimEnd());
    expect(renderTemplate(`${"a".repeat(999)} b`, {})).toBe("a".repeat(999));
    expect(renderTemplate(`${"a".repeat(1000)} b`, {})).toBe("a".repeat(1000));
    expect(renderTemplate(`${"a".repeat(999)}   b`, {})).toBe("a".repeat(999));
    expect(renderTemplate("a".repeat(1200), {})).toBe("a".repeat(1000));
    expect(renderTemplate(`Hi {{lead.name}} ${"x".repeat(995)}`, { "lead.name": "Ann" })).toBe("Hi Ann");
  });

  it("renders any text without {{ or }} to itself", () => {
    const plain = fc
      .string({ unit: "binary", maxLength: MAX_REPLY_LENGTH / 2 }) // a code point is at most 2 units
      .filter((s) => !s.includes("{{") && !s.includes("}}"));
    fc.assert(fc.property(plain, (text) => expect(renderTemplate(text, lead)).toBe(text)));
  });

  it("never renders more than the limit, and never throws", () => {
    fc.assert(
      fc.property(fc.oneof(anyText, bracey, template), values(300), (text, vals) => {
        expect(renderTemplate(text, vals).length).toBeLessThanOrEqual(MAX_REPLY_LENGTH);
      }),
    );
  });

  it("renders a checked template with values of plausible length to text without {{", () => {
    fc.assert(
      fc.property(fc.oneof(template, bracey), values(LONGEST_FIELD_VALUE), (text, vals) => {
        fc.pre(checkTemplate(text) === undefined);
        expect(renderTemplate(text, vals)).not.toContain("{{");
      }),
    );
  });
});
