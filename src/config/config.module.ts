import { type DynamicModule, Global, Module } from "@nestjs/common";
import type { AppConfig } from "./config.js";
import { providerConfigToken } from "./provider-config.js";
import { CONFIG, CONFIG_SECTIONS, section, type SectionName } from "./sections.js";

/** Injection token of the whole validated AppConfig: for the entry points only (modules inject a section). */
export const APP_CONFIG = Symbol("APP_CONFIG");

/**
 * Provides the validated configuration: each section under its own token (CONFIG.<section>), and
 * each provider's own section under `providerConfigToken(id)`.
 */
@Global()
@Module({})
export class ConfigModule {
  static forRoot(config: AppConfig): DynamicModule {
    const sections: { provide: symbol; useValue: object }[] = (
      Object.keys(CONFIG_SECTIONS) as SectionName[]
    ).map((name) => ({ provide: CONFIG[name], useValue: section(config, name) }));
    const providers = Object.entries(config.providerSections).map(([id, value]) => ({
      provide: providerConfigToken(id),
      useValue: Object.freeze(value),
    }));
    sections.push(...providers);
    return {
      module: ConfigModule,
      providers: [{ provide: APP_CONFIG, useValue: config }, ...sections],
      exports: [APP_CONFIG, ...sections.map((provider) => provider.provide)],
    };
  }
}
