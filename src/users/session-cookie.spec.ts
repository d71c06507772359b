import { checkNewPassword } from "./passwords.js";
import { clearedSessionCookie, sessionCookie, sessionCookieName, sessionTokenOf } from "./session-cookie.js";

describe("the session cookie", () => {
  it.each([
    ["leadgate_session=abc", "abc"],
    ["other=1; leadgate_session=abc; more=2", "abc"],
    ["leadgate_session_x=abc", undefined],
    ["leadgate_session=", undefined],
    ["", undefined],
  ])("%s ⇒ %s", (header, token) => {
    expect(sessionTokenOf(header, "leadgate_session")).toBe(token);
  });

  it("is Secure and named __Host- only behind https", () => {
    expect(sessionCookie("t", "https://leadgate.example")).toBe(
      "__Host-leadgate_session=t; Path=/; Max-Age=604800; HttpOnly; SameSite=Lax; Secure",
    );
    expect(sessionCookie("t", "http://localhost:3000")).toBe(
      "leadgate_session=t; Path=/; Max-Age=604800; HttpOnly; SameSite=Lax",
    );
    expect(clearedSessionCookie("http://localhost:3000")).toContain("Max-Age=0");
    expect(clearedSessionCookie("https://leadgate.example")).toMatch(
      /^__Host-leadgate_session=; .*Max-Age=0/,
    );
  });

  it("behind https, a cookie under the plain name (one a sibling subdomain could plant) is not read", () => {
    const name = sessionCookieName("https://leadgate.example");
    expect(sessionTokenOf("leadgate_session=planted", name)).toBeUndefined();
    expect(sessionTokenOf("leadgate_session=planted; __Host-leadgate_session=own", name)).toBe("own");
  });
});

describe("a new password", () => {
  it.each([
    ["eleven char", "must be at least 12 characters"],
    ["ana@example.com", "must not be the e-mail address"],
    [" ANA@example.com ", "must not be the e-mail address"],
    [42, "must be a string"],
  ])("%s is refused: %s", (password, problem) => {
    expect(() => checkNewPassword(password, "ana@example.com")).toThrow(
      expect.objectContaining({ status: 400, details: { password: [problem] } }) as Error,
    );
  });

  it("of 12 characters or more, not the e-mail, is taken", () => {
    expect(checkNewPassword("twelve chars", "ana@example.com")).toBe("twelve chars");
  });
});
