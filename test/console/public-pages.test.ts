// The console's pages that need no session, in a real browser (Chromium through playwright-core):
// the sign-in page (labelled fields, keyboard order, visible focus, 375 px wide), a deep link sent
// to sign-in and back, the invitation page without a token, and no script error on the way.
import { newPage, useBrowser } from "../support/browser.js";
import { useApp } from "../support/harness.js";

describe("console in a browser: pages before sign-in", () => {
  const browser = useBrowser();
  const app = useApp({});

  it("the sign-in page: labelled fields in keyboard order, a visible focus ring, no script error", async () => {
    const { context, page } = await newPage(browser());
    const errors: string[] = [];
    page.on("pageerror", (error) => errors.push(String(error)));
    await page.goto(`${app.url}/console/sign-in`);
    await page.getByRole("heading", { name: "Sign in to Leadgate" }).waitFor();
    const email = page.getByLabel("E-mail");
    await email.focus();
    await page.keyboard.press("Tab");
    expect(await page.getByLabel("Password").evaluate((el) => el === el.ownerDocument.activeElement)).toBe(
      true,
    );
    await page.keyboard.press("Tab");
    const button = page.getByRole("button", { name: "Sign in" });
    expect(await button.evaluate((el) => el === el.ownerDocument.activeElement)).toBe(true);
    const outline = await page.evaluate<string>("getComputedStyle(document.activeElement).outlineStyle");
    expect(outline).not.toBe("none");
    expect(errors).toEqual([]);
    await context.close();
  });

  it("375 px wide: nothing scrolls sideways", async () => {
    const { context, page } = await newPage(browser(), 375);
    await page.goto(`${app.url}/console/sign-in`);
    await page.getByLabel("E-mail").waitFor();
    expect(await page.evaluate<number>("document.documentElement.scrollWidth")).toBeLessThanOrEqual(375);
    await context.close();
  });

  it("a deep link without a session lands on sign-in, keeping where it was going", async () => {
    const { context, page } = await newPage(browser());
    await page.goto(`${app.url}/console/failures?status=blocked`);
    await page.getByRole("heading", { name: "Sign in to Leadgate" }).waitFor();
    const url = new URL(page.url());
    expect(url.pathname).toBe("/console/sign-in");
    expect(url.searchParams.get("next")).toBe("/failures?status=blocked");
    await context.close();
  });

  it("a wrong password is refused on the page, in api.md's words", async () => {
    const { context, page } = await newPage(browser());
    await page.goto(`${app.url}/console/sign-in`);
    await page.getByLabel("E-mail").fill("nobody@example.test");
    await page.getByLabel("Password").fill("not-the-password-1234");
    await page.getByRole("button", { name: "Sign in" }).click();
    await page.getByRole("alert").filter({ hasText: "invalid_credentials" }).waitFor();
    expect(new URL(page.url()).pathname).toBe("/console/sign-in");
    await context.close();
  });

  it("the invitation page without a token says so", async () => {
    const { context, page } = await newPage(browser());
    await page.goto(`${app.url}/console/accept-invitation`);
    await page.getByRole("alert").filter({ hasText: "no invitation token" }).waitFor();
    await context.close();
  });
});
