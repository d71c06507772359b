// GET /admin/providers (api.md): the providers this installation has, from the plugin list
// (src/providers/plugins.ts), so that the console builds its provider screens from data.
import { Controller, Get, Inject } from "@nestjs/common";
import { ApiOkResponse, ApiOperation, ApiProperty, ApiTags } from "@nestjs/swagger";
import { AdminApi } from "../auth/api-key.guard.js";
import { CONFIG, type OAuthConfig } from "../config/sections.js";
import { INBOUND_AUTH_TYPES, type InboundAuthType } from "../providers/inbound-auth.js";
import { hasApi } from "../providers/capabilities.js";
import { ALL_PLUGINS } from "../providers/plugins.js";
import { PROVIDERS, type Provider } from "../providers/provider-event.js";

/** One provider as the admin API shows it. */
export class ProviderView {
  @ApiProperty({ enum: PROVIDERS })
  id!: Provider;

  @ApiProperty({ example: "Yelp", description: "its name as people read it" })
  name!: string;

  @ApiProperty({
    enum: ["oauth", "manual"],
    description:
      "`oauth`: accounts connect through the provider's consent screen (POST /admin/connections/oauth), its client configured here; `manual`: POST /admin/connections with pasted credentials or none",
  })
  connect!: "oauth" | "manual";

  @ApiProperty({
    enum: INBOUND_AUTH_TYPES,
    isArray: true,
    description: "the sender authentications a connection can use; the first is the default",
  })
  inboundAuth!: InboundAuthType[];

  @ApiProperty({ description: "Leadgate can reply in the provider's own inbox (first replies)" })
  replies!: boolean;

  @ApiProperty({ description: "Leadgate registers webhooks and reconciles leads through its API (`/sync`)" })
  sync!: boolean;
}

export class ProviderList {
  @ApiProperty({ type: [ProviderView] })
  items!: ProviderView[];
}

@ApiTags("providers")
@AdminApi()
@Controller("admin/providers")
export class ProvidersController {
  constructor(@Inject(CONFIG.oauth) private readonly config: OAuthConfig) {}

  @ApiOperation({
    description:
      "The providers this installation has, from the registry: how an account connects, the sender authentications, replies and sync.",
  })
  @Get()
  @ApiOkResponse({ description: "the providers this installation has", type: ProviderList })
  list(): ProviderList {
    const clients = this.config.oauth as Partial<Record<Provider, unknown>>;
    return {
      items: ALL_PLUGINS.map(({ id, name, capabilities }) => ({
        id,
        name,
        connect: capabilities.oauth && clients[id] !== undefined ? "oauth" : "manual",
        inboundAuth: [...capabilities.inboundAuth],
        replies: hasApi(id),
        sync: hasApi(id),
      })),
    };
  }
}
