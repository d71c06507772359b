import { contactFromForm } from "./contact-fields.js";

describe("contactFromForm", () => {
  it("maps the fixture's fields and keeps the rest", () => {
    expect(
      contactFromForm({
        name: "Lena Vasquez",
        email: "lena.v@example.test",
        phone: "+1 512 555 0142",
        subject: "Quote request",
        message: "Need a quote for gutter cleaning, single story.",
      }),
    ).toEqual({
      contact: {
        name: "Lena Vasquez",
        email: "lena.v@example.test",
        phone: "+1 512 555 0142",
        message: "Need a quote for gutter cleaning, single story.",
      },
      rest: { subject: "Quote request" },
    });
  });

  it("ignores case and punctuation in field names", () => {
    expect(
      contactFromForm({ "E-Mail": "a@b.test", "Phone Number": "1", Your_Message: "hi", "Full Name": "Al" })
        .contact,
    ).toEqual({
      email: "a@b.test",
      phone: "1",
      message: "hi",
      name: "Al",
    });
  });

  it("builds a name from first and last name fields", () => {
    const { contact, rest } = contactFromForm({ first_name: "Omar", LastName: "Reyes", zip: 78704 });
    expect(contact).toEqual({ name: "Omar Reyes" });
    expect(rest).toEqual({ first_name: "Omar", LastName: "Reyes", zip: 78704 });
  });

  it("keeps non-text values out of contact fields", () => {
    expect(contactFromForm({ email: ["a", "b"], name: "" })).toEqual({
      contact: {},
      rest: { email: ["a", "b"], name: "" },
    });
  });
});
