// The shipped docker-compose.yml must be safe to expose as it is. No Docker engine runs here, so the
// file is read as compose reads it (YAML, then `${VAR:-default}` interpolation from the shell or
// .env) and its API environment is put through the real config parser, with NODE_ENV=production as
// the image sets it and the keys that the `keys` service writes.
import { spawnSync } from "node:child_process";
import { existsSync, mkdtempSync, readFileSync, rmSync } from "node:fs";
import { tmpdir } from "node:os";
import { join, resolve } from "node:path";
import { parse } from "yaml";
import { appConfig } from "../../src/app-config.js";

type Env = Record<string, string>;
interface Service {
  image?: string;
  ports?: (string | { target: number; published: string; protocol?: string })[];
  environment?: Record<string, string | number | boolean | null>;
  volumes?: string[];
  networks?: string[];
  network_mode?: string;
  entrypoint?: string[];
  command?: string[];
}
const compose = parse(readFileSync("docker-compose.yml", "utf8"), { merge: true }) as {
  services: Record<string, Service>;
  networks?: Record<string, { internal?: boolean } | null>;
};
const services = compose.services;

/** Compose's interpolation: `${NAME}`, `${NAME:-default}` (unset or empty; defaults nest), `$$`. */
function interpolate(text: string, env: Env): string {
  let result = "";
  for (let i = 0; i < text.length;) {
    if (text.startsWith("$$", i)) {
      result += "$";
      i += 2;
    } else if (text.startsWith("${", i)) {
      let depth = 1;
      let end = i + 2;
      for (; depth > 0 && end < text.length; end++) {
        if (text.startsWith("${", end)) depth++;
        else if (text[end] === "}") depth--;
      }
      const [, name, fallback] = /^(\w+)(?::-([\s\S]*))?$/.exec(text.slice(i + 2, end - 1)) ?? [];
      if (name === undefined) throw new Error(`unsupported interpolation in ${text}`);
      result += env[name] || (fallback === undefined ? "" : interpolate(fallback, env));
      i = end;
    } else {
      result += text[i++];
    }
  }
  return result;
}

/** A service's environment as its container gets it, with `shell` as the shell's (or .env's) variables. */
function environmentOf(service: string, shell: Env = {}): Env {
  const entries = Object.entries(services[service]?.environment ?? {});
  return Object.fromEntries(entries.map(([name, value]) => [name, interpolate(String(value ?? ""), shell)]));
}

describe("docker-compose.yml", () => {
  it("publishes only Caddy's 80 and 443 to the host: the API and everything else publish nothing", () => {
    const publishing = Object.entries(services).filter(([, service]) => (service.ports ?? []).length > 0);
    expect(publishing.map(([name]) => name)).toEqual(["caddy"]);
    const targets = (services.caddy!.ports ?? []).map((port) =>
      typeof port === "string" ? port.split(":").at(-1) : `${port.target}/${port.protocol ?? "tcp"}`,
    );
    expect(new Set(targets.map((target) => target?.replace(/\/tcp$/, "")))).toEqual(
      new Set(["80", "443", "443/udp"]),
    );
  });

  it("every image is pinned to an exact version (compose's and the Dockerfile's bases)", () => {
    const images = Object.values(services).flatMap((service) => (service.image ? [service.image] : []));
    const bases = [...readFileSync("Dockerfile", "utf8").matchAll(/^FROM (\S+)/gm)].map((m) => m[1]!);
    expect(images.length).toBeGreaterThanOrEqual(3);
    for (const image of [...images, ...bases]) {
      expect([image, /:\d+\.\d+(\.\d+)?(-[a-z]+)?$/.test(image)]).toEqual([image, true]);
    }
  });

  it("Caddy, the official image, serves the repository's Caddyfile in front of the API", () => {
    const caddy = services.caddy!;
    expect(caddy.image).toMatch(/^caddy:2(\.\d+)*(-alpine)?$/);
    expect(caddy.volumes).toContain("./deploy/Caddyfile:/etc/caddy/Caddyfile:ro");
    expect(existsSync("deploy/Caddyfile")).toBe(true);
    const caddyfile = readFileSync("deploy/Caddyfile", "utf8");
    expect(caddyfile).toMatch(/^\{\$LEADGATE_DOMAIN:localhost\} \{$/m);
    expect(caddyfile).toMatch(/^\s+reverse_proxy api:3000$/m);
    expect(environmentOf("caddy")).toEqual({ LEADGATE_DOMAIN: "localhost" });
    expect(environmentOf("caddy", { LEADGATE_DOMAIN: "leads.example.com" })).toEqual({
      LEADGATE_DOMAIN: "leads.example.com",
    });
  });

  it("PUBLIC_BASE_URL is the https:// address Caddy serves (LEADGATE_DOMAIN, default localhost)", () => {
    expect(environmentOf("api").PUBLIC_BASE_URL).toBe("https://localhost");
    expect(environmentOf("api", { LEADGATE_DOMAIN: "leads.example.com" }).PUBLIC_BASE_URL).toBe(
      "https://leads.example.com",
    );
    expect(environmentOf("worker", { LEADGATE_DOMAIN: "leads.example.com" }).PUBLIC_BASE_URL).toBe(
      "https://leads.example.com",
    );
  });

  it("Postgres and Redis are on an internal network only: not reachable from Caddy nor from outside", () => {
    expect(compose.networks?.data?.internal).toBe(true);
    expect(services.postgres!.networks).toEqual(["data"]);
    expect(services.redis!.networks).toEqual(["data"]);
    expect(services.caddy!.networks ?? ["default"]).not.toContain("data");
    expect(services.keys!.network_mode).toBe("none");
  });

  it("the keys service writes the keys to its volume (`ensure`) and shows them on demand only (`show`)", () => {
    expect(services.keys!.entrypoint).toEqual(["node", "scripts/keys.mjs"]);
    expect(services.keys!.command).toEqual(["ensure", "/keys/leadgate.env"]);
  });

  describe("the API's environment, with the keys from the keys volume, in the image (NODE_ENV=production)", () => {
    let dir: string;
    let keys: Env;
    beforeAll(() => {
      dir = mkdtempSync(join(tmpdir(), "leadgate-compose-"));
      const file = join(dir, "leadgate.env");
      const run = spawnSync(process.execPath, [resolve("scripts/keys.mjs"), "ensure", file], {
        cwd: dir,
        env: { PATH: process.env.PATH ?? "" },
        encoding: "utf8",
      });
      expect(run.status).toBe(0);
      keys = Object.fromEntries(
        readFileSync(file, "utf8")
          .split("\n")
          .filter((line) => /^\w+=/.test(line))
          .map((line) => [line.slice(0, line.indexOf("=")), line.slice(line.indexOf("=") + 1)]),
      );
    });
    afterAll(() => rmSync(dir, { recursive: true, force: true }));

    /** What the entrypoint hands the process: the compose environment, its empty keys filled from the volume. */
    const containerEnv = (service: string, shell: Env = {}): Env => {
      const env: Env = { NODE_ENV: "production", ...environmentOf(service, shell) };
      for (const [name, value] of Object.entries(keys)) if (!env[name]) env[name] = value;
      return env;
    };

    it("the image runs with NODE_ENV=production", () => {
      expect(readFileSync("Dockerfile", "utf8")).toMatch(/^ENV NODE_ENV=production$/m);
    });

    it.each(["api", "worker"])(
      "%s boots: https PUBLIC_BASE_URL, a metrics token, Caddy as its one proxy",
      (name) => {
        const config = appConfig(containerEnv(name));
        expect(config.publicBaseUrl).toBe("https://localhost");
        expect(config.metricsToken).toBe(keys.METRICS_TOKEN);
        expect(config.metricsToken).toBeDefined();
        expect(config.bootstrapOperatorKey).toBe(keys.LEADGATE_BOOTSTRAP_OPERATOR_KEY);
        expect(config.trustProxy).toBe(1);
      },
    );

    it("an http:// PUBLIC_BASE_URL given to compose stops the API at boot", () => {
      expect(() => appConfig(containerEnv("api", { PUBLIC_BASE_URL: "http://leads.example.com" }))).toThrow(
        /^PUBLIC_BASE_URL must be https:\/\/ when NODE_ENV=production/,
      );
    });
  });
});
