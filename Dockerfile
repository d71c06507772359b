# One image, two roles: `npm run start:api` or `npm run start:worker` (plus `npm run db:migrate`).
# The entrypoint (scripts/docker-entrypoint.sh) reads the keys that compose's `keys` service keeps in
# /keys (scripts/keys.mjs) when the environment does not set them.

FROM node:22.16.0-slim AS build
WORKDIR /app
COPY package.json package-lock.json ./
COPY console/package.json ./console/
RUN npm ci
COPY tsconfig.json tsconfig.build.json prisma.config.ts ./
COPY prisma ./prisma
COPY src ./src
# The console (docs/console.md): its API types come from the committed docs/openapi.json.
COPY console ./console
COPY docs/openapi.json ./docs/
# `npm run build` generates the Prisma client from prisma/schema.prisma (copied above), compiles, and
# builds the console into console/dist.
RUN npm run build

FROM node:22.16.0-slim AS runtime
# Production: an http:// PUBLIC_BASE_URL stops the boot (unless ALLOW_INSECURE_PUBLIC_URL=true), so
# the image runs behind TLS (docker-compose.yml puts Caddy in front).
ENV NODE_ENV=production
WORKDIR /app
COPY package.json package-lock.json ./
COPY console/package.json ./console/
RUN npm ci --omit=dev && npm cache clean --force
COPY --from=build /app/dist ./dist
COPY --from=build /app/console/dist ./console/dist
COPY prisma ./prisma
COPY prisma.config.ts ./
COPY scripts ./scripts
# The mount point of compose's keys volume: a new named volume takes this owner, so `node` can write it.
RUN mkdir /keys && chown node:node /keys
USER node
# glibc's malloc in 2 arenas, not 8 per core: less memory held by threads' arenas (docs/operations.md).
ENV MALLOC_ARENA_MAX=2
EXPOSE 3000
ENTRYPOINT ["/bin/sh", "/app/scripts/docker-entrypoint.sh"]
CMD ["node", "--max-semi-space-size=4", "--heap-growing-percent=15", "dist/main.js"]
