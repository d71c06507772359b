// Sign-in throttling (api.md "Console and users", "Login throttling"): per (e-mail, client address)
// pair, 5 failures, then 429 with a Retry-After that doubles from 60 s up to 15 minutes; per client
// address (IPv6 per /64), 50 failures in 15 minutes; another address's failures never lock a user
// out; at most 4 password verifications at once per process. Each attempt names its client address
// in X-Forwarded-For (the file's API trusts 127.0.0.1 as a proxy).
import { OPERATOR_KEY } from "../support/admin.js";
import { PASSWORD, signedInUser, signIn, uniqueEmail } from "../support/console.js";
import { useApp } from "../support/harness.js";
import { freePort } from "../support/process.js";
import { deadRedisEnv, keysMatching, testRedis } from "../support/redis.js";

const WRONG = "not the password at all";

describe("sign-in throttling", () => {
  const app = useApp({ env: { LEADGATE_BOOTSTRAP_OPERATOR_KEY: OPERATOR_KEY, TRUST_PROXY: "127.0.0.1" } });
  const statuses = (answers: { status: number }[]) =>
    answers.reduce<Record<number, number>>(
      (counts, { status }) => ({ ...counts, [status]: (counts[status] ?? 0) + 1 }),
      {},
    );
  const retryAfter = (answer: { status: number; headers: Headers }) => [
    answer.status,
    Number(answer.headers.get("retry-after")),
  ];
  /** POST /console/api/session with its answer's headers (signIn of test/support/console.ts drops them). */
  const attempt = async (email: string, password: string, ip: string) =>
    fetch(`${app.url}/console/api/session`, {
      method: "POST",
      headers: { "content-type": "application/json", "x-forwarded-for": ip },
      body: JSON.stringify({ email, password }),
    }).then(async (response) => ({
      status: response.status,
      headers: response.headers,
      text: await response.text(),
    }));
  /** Ends every pair's lock now, as its time running out would (the lock is Redis's `until`, in ms). */
  const endLocks = async () => {
    const redis = testRedis(app.config);
    try {
      const keys = await keysMatching(redis, `${app.config.redisPrefix}:login-pair:*`);
      await Promise.all(keys.map((key) => redis.hset(key, "until", "1")));
    } finally {
      redis.disconnect();
    }
  };

  it("5 failures of one pair, then 429 from that address even with the right password; other addresses and other e-mails sign in", async () => {
    const user = await signedInUser(app.url, { role: "operator" });
    const neighbour = await signedInUser(app.url, { role: "operator" });
    for (let i = 0; i < 5; i++) expect((await attempt(user.email, WRONG, "192.0.2.10")).status).toBe(401);
    const refused = await attempt(user.email.toUpperCase(), PASSWORD, "192.0.2.10");
    expect(JSON.parse(refused.text)).toMatchObject({ error: "rate_limited" });
    expect(refused.status).toBe(429);
    expect(Number(refused.headers.get("retry-after"))).toBeGreaterThanOrEqual(55);
    expect(Number(refused.headers.get("retry-after"))).toBeLessThanOrEqual(60);
    const sessions = async () =>
      (await app.sql.query("SELECT 1 FROM sessions WHERE user_id = $1", [user.id])).rowCount;
    expect(await sessions()).toBe(1); // the sign-in of signedInUser only

    expect((await signIn(app.url, user.email, PASSWORD, "192.0.2.11")).status).toBe(200);
    expect((await signIn(app.url, neighbour.email, PASSWORD, "192.0.2.10")).status).toBe(200);
    expect(await sessions()).toBe(2);
  });

  it("another address's failures never lock a user out: the right password from an address that has not failed signs in", async () => {
    const user = await signedInUser(app.url, { role: "operator" });
    // Guesses spread over many addresses, each under its pair's limit, more than any per-e-mail count would allow.
    for (let i = 0; i < 24; i++) {
      expect((await attempt(user.email, `${WRONG}-${i}`, `192.0.2.${100 + (i % 6)}`)).status).toBe(401);
    }
    expect((await signIn(app.url, user.email, PASSWORD, "192.0.2.99")).status).toBe(200);

    // 50 failures from one address (any e-mails): that address is refused, for everyone, …
    const ip = "192.0.2.250";
    for (let i = 0; i < 50; i++) expect((await attempt(uniqueEmail("x"), WRONG, ip)).status).toBe(401);
    const refused = await attempt(user.email, PASSWORD, ip);
    expect(refused.status).toBe(429);
    expect(Number(refused.headers.get("retry-after"))).toBeGreaterThan(800);
    // … and no one else.
    expect((await signIn(app.url, user.email, PASSWORD, "192.0.2.251")).status).toBe(200);
  });

  it("Retry-After doubles with each failure after a lock ends: 60 s, 120, 240, 480, then 15 minutes at most; a success starts the pair again", async () => {
    const user = await signedInUser(app.url, { role: "operator" });
    const ip = "198.18.0.1";
    for (let i = 0; i < 5; i++) expect((await attempt(user.email, WRONG, ip)).status).toBe(401);
    const seen: number[] = [];
    for (let lock = 0; lock < 6; lock++) {
      const [status, seconds] = retryAfter(await attempt(user.email, PASSWORD, ip));
      expect(status).toBe(429);
      seen.push(seconds!);
      await endLocks();
      expect((await attempt(user.email, WRONG, ip)).status).toBe(401);
    }
    // Each within a few seconds of its lock (a loaded machine may take a moment between the two).
    const locks = [60, 120, 240, 480, 900, 900];
    const off = seen.filter((seconds, i) => !(seconds <= locks[i]! && seconds > locks[i]! - 6));
    expect({ seen, off }).toEqual({ seen, off: [] });
    await endLocks();
    expect((await attempt(user.email, PASSWORD, ip)).status).toBe(200);
    // A success forgets the pair's failures: 5 more before the next lock, which is 60 s again.
    for (let i = 0; i < 5; i++) expect((await attempt(user.email, WRONG, ip)).status).toBe(401);
    const again = retryAfter(await attempt(user.email, PASSWORD, ip));
    expect(again[0]).toBe(429);
    expect(again[1]).toBeGreaterThan(54);
    expect(again[1]).toBeLessThanOrEqual(60);
  });

  it("IPv6 addresses of one /64 share their counts; another /64 does not", async () => {
    const user = await signedInUser(app.url, { role: "operator" });
    for (let i = 1; i <= 5; i++) {
      expect((await attempt(user.email, WRONG, `2001:db8:1:2::${i}`)).status).toBe(401);
    }
    expect((await attempt(user.email, PASSWORD, "2001:db8:1:2:ffff:ffff:ffff:ffff")).status).toBe(429);
    expect((await attempt(user.email, PASSWORD, "2001:db8:1:3::1")).status).toBe(200);

    // 50 failures spread over a /64 refuse every address in it.
    for (let i = 0; i < 50; i++) {
      expect((await attempt(uniqueEmail("v6"), WRONG, `2001:db8:5:6::${(i + 1).toString(16)}`)).status).toBe(
        401,
      );
    }
    expect((await attempt(user.email, PASSWORD, "2001:db8:5:6:abcd::1")).status).toBe(429);
    expect((await attempt(user.email, PASSWORD, "2001:db8:5:7::1")).status).toBe(200);
  });

  it("while Redis does not answer, the API counts in its own memory: a pair is still locked after 5 failures", async () => {
    const noRedis = await app.startApi(deadRedisEnv(await freePort()));
    const user = await signedInUser(app.url, { role: "operator" });
    const at = (password: string, ip: string) =>
      fetch(`${noRedis.url}/console/api/session`, {
        method: "POST",
        headers: { "content-type": "application/json", "x-forwarded-for": ip },
        body: JSON.stringify({ email: user.email, password }),
      }).then((answer) => answer.status);
    for (let i = 0; i < 5; i++) expect(await at(WRONG, "198.18.5.1")).toBe(401);
    expect(await at(PASSWORD, "198.18.5.1")).toBe(429);
    expect(await at(PASSWORD, "198.18.5.2")).toBe(200);
  });

  it("a burst of parallel guesses cannot pass the limits together: at most 5 per pair and 50 per address are checked", async () => {
    const user = await signedInUser(app.url, { role: "operator" });
    const perPair = await Promise.all(
      Array.from({ length: 40 }, (_, i) => attempt(user.email, `${WRONG}-${i}`, "203.0.113.50")),
    );
    expect(statuses(perPair)).toEqual({ 401: 5, 429: 35 });
    const ip = "203.0.113.200";
    const perAddress = await Promise.all(
      Array.from({ length: 120 }, () => attempt(uniqueEmail("burst"), WRONG, ip)),
    );
    expect(statuses(perAddress)).toEqual({ 401: 50, 429: 70 });
  });
});

describe("password verifications at once", () => {
  const app = useApp({ env: { LEADGATE_BOOTSTRAP_OPERATOR_KEY: OPERATOR_KEY, TRUST_PROXY: "127.0.0.1" } });
  const metric = async (name: string) => {
    const text = await (await fetch(`${app.url}/metrics`)).text();
    const line = text.split("\n").find((candidate) => candidate.startsWith(`${name} `));
    return line === undefined ? undefined : Number(line.split(" ")[1]);
  };

  it("at most 4 run at once in a process; the others wait their turn and are answered", async () => {
    // 24 sign-ins at once, each from its own address (no throttling), each verifying a hash.
    const answers = await Promise.all(
      Array.from({ length: 24 }, (_, i) => signIn(app.url, uniqueEmail("many"), WRONG, `192.0.2.${i + 1}`)),
    );
    expect(answers.map((answer) => answer.status)).toEqual(Array(24).fill(401));
    expect(await metric("leadgate_password_checks_running_max")).toBe(4);
    // More than 4 wanted to run at once (so the cap was tested), and none is left running.
    expect(await metric("leadgate_password_checks_waited_total")).toBeGreaterThan(0);
    expect(await metric("leadgate_password_checks_running")).toBe(0);
  });
});
