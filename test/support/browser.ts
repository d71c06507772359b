// The browser of the console tests (docs/testing.md "Browser tests"): Debian's Chromium driven by
// playwright-core, one browser per test file. Without Chromium the file fails with the one line
// that says how to get it: never a silent skip.
import { existsSync, mkdirSync } from "node:fs";
import { createServer, type Server, type Socket, connect } from "node:net";
import { tmpdir } from "node:os";
import { pathToFileURL } from "node:url";
import { type Browser, type BrowserContext, chromium, type Page } from "playwright-core";

export const CHROMIUM_PATH = process.env.CHROMIUM_PATH ?? "/usr/bin/chromium";
/**
 * Where screenshots go: docs/console-screenshots/ (the pictures of docs/console.md) with
 * SCREENSHOTS=docs, else a temporary folder, so a test run leaves the working tree clean.
 */
export const SCREENSHOTS =
  process.env.SCREENSHOTS === "docs"
    ? new URL("../../docs/console-screenshots/", import.meta.url)
    : pathToFileURL(`${tmpdir()}/leadgate-console-screenshots-${process.pid}/`);

/** Launches Chromium in beforeAll (closed in afterAll); `browser()` gives it to the tests. */
export function useBrowser(): () => Browser {
  let browser: Browser | undefined;
  beforeAll(async () => {
    if (!existsSync(CHROMIUM_PATH))
      throw new Error(`No Chromium at ${CHROMIUM_PATH}: apt-get install -y chromium`);
    browser = await chromium.launch({ executablePath: CHROMIUM_PATH, args: ["--no-sandbox"] });
  });
  afterAll(async () => {
    await browser?.close();
  });
  return () => browser!;
}

/** A new context (own cookies) and page; `width` 375 for the phone layout. */
export async function newPage(
  browser: Browser,
  width = 1280,
): Promise<{ context: BrowserContext; page: Page }> {
  const context = await browser.newContext({ viewport: { width, height: 900 } });
  const page = await context.newPage();
  page.setDefaultTimeout(10_000);
  return { context, page };
}

export async function screenshot(page: Page, name: string): Promise<void> {
  mkdirSync(SCREENSHOTS, { recursive: true });
  await page.screenshot({ path: new URL(`${name}.png`, SCREENSHOTS).pathname, fullPage: true });
}

/**
 * A loopback origin chosen before the app starts, forwarding every connection to the app once it
 * listens: the app's PUBLIC_BASE_URL, so invitation links, OAuth callbacks and returnUrls all name
 * the origin the browser uses. Declare it before `useApp`, then call `forwardTo(app.url)`.
 */
export function usePublicOrigin() {
  let server: Server | undefined;
  let target: URL | undefined;
  const sockets = new Set<Socket>();
  const state = { url: "" };
  beforeAll(async () => {
    server = createServer((socket) => {
      sockets.add(socket);
      const upstream = connect(Number(target!.port), target!.hostname);
      sockets.add(upstream);
      socket.pipe(upstream).pipe(socket);
      const end = () => {
        socket.destroy();
        upstream.destroy();
      };
      socket.on("error", end).on("close", end);
      upstream.on("error", end).on("close", end);
    });
    await new Promise<void>((resolve) => server!.listen(0, "127.0.0.1", resolve));
    const address = server.address() as { port: number };
    state.url = `http://127.0.0.1:${address.port}`;
  });
  afterAll(async () => {
    for (const socket of sockets) socket.destroy();
    await new Promise((resolve) => server?.close(resolve));
  });
  return {
    get url() {
      return state.url;
    },
    forwardTo(url: string) {
      target = new URL(url);
    },
  };
}
