import { Module } from "@nestjs/common";
import { AdapterRegistry } from "./registry.js";
import { StaticFormsAdapter } from "./static-forms/static-forms.adapter.js";
import { ThumbtackAdapter } from "./thumbtack/thumbtack.adapter.js";
import { YelpAdapter } from "./yelp/yelp.adapter.js";

@Module({
  providers: [StaticFormsAdapter, ThumbtackAdapter, YelpAdapter, AdapterRegistry],
  exports: [AdapterRegistry, YelpAdapter, ThumbtackAdapter],
})
export class ProvidersModule {}
