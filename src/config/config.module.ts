import { type DynamicModule, Global, Module } from "@nestjs/common";
import type { AppConfig } from "./config.js";
import { CONFIG, CONFIG_SECTIONS, section, type SectionName } from "./sections.js";

/** Injection token of the whole validated AppConfig: for the entry points only (modules inject a section). */
export const APP_CONFIG = Symbol("APP_CONFIG");

/** Provides the validated configuration: each section under its own token (CONFIG.<section>). */
@Global()
@Module({})
export class ConfigModule {
  static forRoot(config: AppConfig): DynamicModule {
    const sections = (Object.keys(CONFIG_SECTIONS) as SectionName[]).map((name) => ({
      provide: CONFIG[name],
      useValue: section(config, name),
    }));
    return {
      module: ConfigModule,
      providers: [{ provide: APP_CONFIG, useValue: config }, ...sections],
      exports: [APP_CONFIG, ...sections.map((provider) => provider.provide)],
    };
  }
}
