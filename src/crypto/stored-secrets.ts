// Where the database holds encrypted envelopes: each column `secrets:reencrypt` rewrites, and the
// place an envelope of it is bound to (see SecretBox).
import type { SecretPlace } from "./secret-box.js";

/** The columns of `connections` that hold envelopes. */
export const CONNECTION_SECRET_COLUMNS = [
  "inbound_secrets",
  "previous_secrets",
  "credentials",
  "crm_signing_secret",
  "previous_crm_signing_secret",
  // The URL of a Yelp self-serve webhook: it holds the platform URL token.
  "registration_webhook_url",
] as const;
export type ConnectionSecretColumn = (typeof CONNECTION_SECRET_COLUMNS)[number];

/** Where a connection's envelope lives: it opens only there. */
export function secretPlace(column: ConnectionSecretColumn, connectionId: string): SecretPlace {
  return { table: "connections", column, rowId: connectionId };
}

/**
 * Where an OAuth attempt's PKCE code verifier lives. Attempts live 10 minutes, so `secrets:reencrypt`
 * leaves them alone: one sealed under a retired key just fails its callback (invalid_oauth_state).
 */
export function oauthAttemptPlace(attemptId: string): SecretPlace {
  return { table: "oauth_attempts", column: "code_verifier", rowId: attemptId };
}

/**
 * Where a notification channel's secrets live (`{ signingSecret }` of a webhook channel, `{ url }`
 * of a Slack channel): `secrets:reencrypt` rewrites them too.
 */
export function notificationChannelPlace(channelId: string): SecretPlace {
  return { table: "notification_channels", column: "secrets", rowId: channelId };
}
