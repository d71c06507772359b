// Static Forms sends whatever fields the agency's form has: they become contact fields by name.
import type { JsonObject } from "../provider-event.js";
import type { Contact } from "../provider-inbox.js";

/** Form field names by meaning, compared without case or punctuation ("E-mail", "your_email" ...). */
type FormField = Exclude<keyof Contact, "firstName">;
const FIELDS: Record<FormField, string[]> = {
  name: ["name", "fullname", "yourname", "contactname"],
  email: ["email", "emailaddress", "youremail", "mail"],
  phone: ["phone", "phonenumber", "tel", "telephone", "mobile", "cell", "yourphone"],
  message: ["message", "comments", "comment", "yourmessage", "inquiry", "enquiry", "details", "body"],
};

const squash = (key: string) => key.toLowerCase().replace(/[^a-z0-9]/g, "");

/**
 * Maps a web form's fields to the lead's contact fields; everything else is kept in `rest`.
 * First and last name fields make a name when there is no name field.
 */
export function contactFromForm(formData: JsonObject): { contact: Contact; rest: JsonObject } {
  const contact: Contact = {};
  const rest: JsonObject = {};
  const byKey = new Map<string, string>();
  for (const [key, value] of Object.entries(formData)) {
    const squashed = squash(key);
    const field = (Object.keys(FIELDS) as FormField[]).find((name) => FIELDS[name].includes(squashed));
    if (field && typeof value === "string" && contact[field] === undefined && value.trim() !== "") {
      contact[field] = value.trim();
    } else {
      rest[key] = value;
      if (typeof value === "string") byKey.set(squashed, value.trim());
    }
  }
  if (contact.name === undefined) {
    const name = [byKey.get("firstname"), byKey.get("lastname")].filter(Boolean).join(" ");
    if (name !== "") contact.name = name;
  }
  return { contact, rest };
}
