// The configuration the entry points start from: the platform's variables (src/config/) and each
// provider's own, as its plugin declares them (src/providers/plugins.ts).
import { type AppConfig, ConfigError, loadConfig } from "./config/config.js";
import type { Env } from "./config/env.js";
import { PROVIDER_CONFIGS } from "./providers/plugins.js";

export function appConfig(env: Env = process.env): AppConfig {
  return loadConfig(env, PROVIDER_CONFIGS);
}

/** Entry points call this: a bad variable ends the process with one line naming it. */
export function appConfigOrExit(): AppConfig {
  try {
    return appConfig();
  } catch (error) {
    if (!(error instanceof ConfigError)) throw error;
    process.stderr.write(`leadgate: configuration error: ${error.message}\n`);
    process.exit(78); // EX_CONFIG
  }
}
