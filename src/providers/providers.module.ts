import { Module } from "@nestjs/common";
import { AdapterRegistry } from "./registry.js";
import { pluginClasses } from "./plugins.js";

/** Every provider's adapter (plugins.ts), and their registry. */
@Module({
  providers: [...pluginClasses("adapter"), AdapterRegistry],
  exports: [AdapterRegistry, ...pluginClasses("adapter")],
})
export class ProvidersModule {}
