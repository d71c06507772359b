import { DUMMY_HASH, hashPassword, passwordMatches } from "./passwords.js";

/** `$argon2id$v=19$m=…,t=…,p=…`: what a verify against the hash costs. */
const parameters = (hash: string) => hash.split("$").slice(1, 4).join("$");

describe("console passwords", () => {
  it("the dummy hash an unknown e-mail is verified against has the parameters of every new hash (the same cost)", async () => {
    const made = await hashPassword("a password of the right length");
    expect(parameters(made)).toMatch(/^argon2id\$v=19\$m=\d+,t=\d+,p=\d+$/);
    expect(parameters(DUMMY_HASH)).toBe(parameters(made));
  });

  it("without a stored hash nothing matches, not even a guess of the dummy's password", async () => {
    expect(await passwordMatches(null, "leadgate-dummy-password")).toBe(false);
    expect(await passwordMatches(null, "")).toBe(false);
  });

  it("a stored hash matches its password only", async () => {
    const stored = await hashPassword("correct horse battery");
    expect(await passwordMatches(stored, "correct horse battery")).toBe(true);
    expect(await passwordMatches(stored, "correct horse battery!")).toBe(false);
  });
});
