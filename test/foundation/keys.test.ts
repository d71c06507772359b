// The keys of `docker compose up` (scripts/keys.mjs, the one-shot `keys` service) and the image's
// entrypoint that reads them (scripts/docker-entrypoint.sh), run as processes on a temp dir as
// compose runs them. Container logs are kept (`docker compose logs keys`, a logging driver): no key
// may be printed while they are written, only on demand by `docker compose run --rm keys show`.
import { spawnSync } from "node:child_process";
import { mkdtempSync, readFileSync, rmSync, statSync, writeFileSync } from "node:fs";
import { tmpdir } from "node:os";
import { join, resolve } from "node:path";

const SCRIPTS = resolve("scripts");

/** Each test's own temp dir, also the scripts' cwd: a relative path never writes into the checkout. */
let dir: string;
beforeEach(() => {
  dir = mkdtempSync(join(tmpdir(), "leadgate-keys-"));
});
afterEach(() => rmSync(dir, { recursive: true, force: true }));

const COMPOSE_KEYS = ["LEADGATE_ENCRYPTION_KEY", "LEADGATE_BOOTSTRAP_OPERATOR_KEY", "METRICS_TOKEN"];

/** `node scripts/keys.mjs <args>` with exactly `env` (and PATH): its exit code and all it printed. */
function keys(args: string[], env: Record<string, string> = {}) {
  const run = spawnSync(process.execPath, [join(SCRIPTS, "keys.mjs"), ...args], {
    cwd: dir,
    env: { PATH: process.env.PATH ?? "", ...env },
    encoding: "utf8",
  });
  return { status: run.status, output: `${run.stdout}${run.stderr}`, stdout: run.stdout };
}

/** The NAME=value lines of an env file. */
function entries(path: string): Record<string, string> {
  const lines = readFileSync(path, "utf8").split("\n");
  return Object.fromEntries(
    lines
      .filter((line) => /^[A-Z_]+=/.test(line))
      .map((line): [string, string] => [line.slice(0, line.indexOf("=")), line.slice(line.indexOf("=") + 1)]),
  );
}

describe("scripts/keys.mjs (the compose `keys` service)", () => {
  let file: string;
  beforeEach(() => {
    file = join(dir, "keys", "leadgate.env");
  });

  it("first run: writes the encryption key, an operator key and a metrics token (0600), and prints none of them", () => {
    const run = keys(["ensure", file]);

    expect(run.status).toBe(0);
    expect(statSync(file).mode & 0o777).toBe(0o600);
    const written = entries(file);
    expect(Object.keys(written).sort()).toEqual([...COMPOSE_KEYS].sort());
    expect(Buffer.from(written.LEADGATE_ENCRYPTION_KEY!, "base64")).toHaveLength(32);
    expect(written.LEADGATE_BOOTSTRAP_OPERATOR_KEY).toMatch(/^lg_[0-9a-f]{12}_[A-Za-z0-9_-]{43}$/);
    expect(written.METRICS_TOKEN).toMatch(/^[A-Za-z0-9_-]{43}$/);
    for (const value of Object.values(written)) expect(run.output).not.toContain(value);
    expect(run.output).toContain(file);
    expect(run.output).toContain("docker compose run --rm keys show");
  });

  it("later runs keep the file byte for byte and print no key", () => {
    keys(["ensure", file]);
    const before = readFileSync(file, "utf8");

    const run = keys(["ensure", file]);

    expect(run.status).toBe(0);
    expect(readFileSync(file, "utf8")).toBe(before);
    for (const value of Object.values(entries(file))) expect(run.output).not.toContain(value);
  });

  it("a file from an older version (no METRICS_TOKEN) gets one added; its keys are kept as they are", () => {
    keys(["ensure", file]);
    const older = readFileSync(file, "utf8").replace(/^METRICS_TOKEN=.*\n/m, "");
    writeFileSync(file, older, { mode: 0o600 });

    const run = keys(["ensure", file]);

    expect(run.status).toBe(0);
    const text = readFileSync(file, "utf8");
    expect(text.startsWith(older)).toBe(true);
    expect(entries(file).METRICS_TOKEN).toMatch(/^[A-Za-z0-9_-]{43}$/);
    expect(run.output).not.toContain(entries(file).METRICS_TOKEN);
  });

  it("a key the environment sets is not written; a line left empty in the file stays empty", () => {
    const own = Buffer.alloc(32, 5).toString("base64");
    keys(["ensure", file], { LEADGATE_ENCRYPTION_KEY: own });
    expect(entries(file).LEADGATE_ENCRYPTION_KEY).toBeUndefined();
    expect(entries(file).LEADGATE_BOOTSTRAP_OPERATOR_KEY).toMatch(/^lg_/);

    writeFileSync(file, "LEADGATE_ENCRYPTION_KEY=x\nLEADGATE_BOOTSTRAP_OPERATOR_KEY=\nMETRICS_TOKEN=m\n");
    keys(["ensure", file]);
    expect(entries(file)).toEqual({
      LEADGATE_ENCRYPTION_KEY: "x",
      LEADGATE_BOOTSTRAP_OPERATOR_KEY: "",
      METRICS_TOKEN: "m",
    });
  });

  it("`show` prints the keys on demand", () => {
    keys(["ensure", file]);

    const run = keys(["show", file]);

    expect(run.status).toBe(0);
    for (const [name, value] of Object.entries(entries(file)))
      expect(run.stdout).toContain(`${name}=${value}\n`);
  });

  it("`show` without a keys file, or an unknown command, fails with one line saying why", () => {
    const missing = keys(["show", file]);
    expect(missing.status).toBe(1);
    expect(missing.output).toMatch(/^leadgate: no keys file at .*leadgate\.env/);
    expect(missing.output.trim().split("\n")).toHaveLength(1);

    const unknown = keys(["print", file]);
    expect(unknown.status).toBe(2);
    expect(unknown.output).toMatch(/^leadgate: unknown command "print"/);
  });
});

describe("scripts/docker-entrypoint.sh", () => {
  /** The entrypoint's view of `names` once it has read `keysFile`, with `env` set as compose sets it. */
  function entrypointEnv(keysFile: string, env: Record<string, string>) {
    const run = spawnSync(
      "sh",
      [
        join(SCRIPTS, "docker-entrypoint.sh"),
        process.execPath,
        "-e",
        "console.log(JSON.stringify(process.env))",
      ],
      {
        cwd: dir,
        env: { PATH: process.env.PATH ?? "", LEADGATE_KEYS_FILE: keysFile, ...env },
        encoding: "utf8",
      },
    );
    expect(run.status).toBe(0);
    return JSON.parse(run.stdout) as Record<string, string>;
  }

  it("reads each compose key the environment leaves empty from the keys file; a value set wins", () => {
    const file = join(dir, "leadgate.env");
    const stored = {
      LEADGATE_ENCRYPTION_KEY: Buffer.alloc(32, 4).toString("base64"),
      LEADGATE_BOOTSTRAP_OPERATOR_KEY: "lg_0123456789ab_operator-key-from-the-volume-0123456789abc",
      METRICS_TOKEN: "metrics-token-from-the-volume-0123",
    };
    writeFileSync(
      file,
      `# a comment\n${Object.entries(stored)
        .map(([name, value]) => `${name}=${value}\n`)
        .join("")}`,
    );
    const empty = Object.fromEntries(COMPOSE_KEYS.map((name) => [name, ""]));

    const seen = entrypointEnv(file, { ...empty, METRICS_TOKEN: "metrics-token-from-env-0123" });

    expect(seen.LEADGATE_ENCRYPTION_KEY).toBe(stored.LEADGATE_ENCRYPTION_KEY);
    expect(seen.LEADGATE_BOOTSTRAP_OPERATOR_KEY).toBe(stored.LEADGATE_BOOTSTRAP_OPERATOR_KEY);
    expect(seen.METRICS_TOKEN).toBe("metrics-token-from-env-0123");
    expect(entrypointEnv(file, empty).METRICS_TOKEN).toBe(stored.METRICS_TOKEN);
  });
});
