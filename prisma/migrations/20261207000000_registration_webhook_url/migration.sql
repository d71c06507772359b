-- The URL a Yelp self-serve webhook was registered with, sealed (it holds the platform URL token):
-- Yelp lists no self-serve webhooks, so a sync compares it with the current token's URL and moves a
-- webhook still at the previous token's URL (YELP_WEBHOOK_TOKEN_PREVIOUS) to the new one.
ALTER TABLE "connections" ADD COLUMN "registration_webhook_url" TEXT;
