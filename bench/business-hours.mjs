// Business hours' worst case (issue: a tenant-admin's hours and an old lead blocked the event loop for
// minutes): how long does `businessSeconds` (src/replies/business-hours.ts) take for a lead dated
// 1970-01-01 counted to today, with the largest hours the API accepts (6 ranges on each of the 7
// days), in four zones (three with DST changes, one without)?
//
// Cold: the first call for a zone in a fresh process, which samples the zone's offsets once a week
// and finds each DST change (kept for the process's life). Warm: the same call again (the median of
// 200). Also a lead 400 days old (the oldest a stored provider time can be), cold and warm, in a zone
// not yet seen. Each zone runs in its own child process so that "cold" is truly cold.
// Run: npm run build && node bench/business-hours.mjs
// Prints figures, asserts nothing.
import { execFileSync } from "node:child_process";

const ZONES = ["America/New_York", "Europe/London", "Australia/Lord_Howe", "Asia/Kolkata"];

if (process.argv[2] === "--zone") {
  const { businessSeconds } = await import("../dist/replies/business-hours.js");
  const range = (h) => [`${String(h).padStart(2, "0")}:00`, `${String(h).padStart(2, "0")}:30`];
  const day = [1, 4, 8, 12, 16, 23].map(range); // 6 ranges, the most a day may have
  const weekly = Object.fromEntries(["mon", "tue", "wed", "thu", "fri", "sat", "sun"].map((d) => [d, day]));
  const now = new Date();
  const spans = { 1970: new Date(0), "400 days": new Date(now.getTime() - 400 * 86_400_000) };
  const [zone, span] = [process.argv[3], process.argv[4]];
  const hours = { timezone: zone, weekly };
  const time = () => {
    const start = process.hrtime.bigint();
    businessSeconds(hours, spans[span], now);
    return Number(process.hrtime.bigint() - start) / 1e6;
  };
  const cold = time();
  const warm = Array.from({ length: 200 }, time).sort((a, b) => a - b)[100];
  console.log(JSON.stringify({ cold, warm }));
  process.exit(0);
}

console.log("businessSeconds, 6 ranges on each of 7 days, to today (ms):");
console.log("zone                  span       cold     warm");
for (const zone of ZONES) {
  for (const span of ["1970", "400 days"]) {
    const out = execFileSync(process.execPath, [import.meta.filename, "--zone", zone, span], {
      encoding: "utf8",
    });
    const { cold, warm } = JSON.parse(out);
    console.log(
      `${zone.padEnd(22)}${span.padEnd(9)}${cold.toFixed(2).padStart(7)}  ${warm.toFixed(3).padStart(7)}`,
    );
  }
}
