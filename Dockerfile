# Production image: `docker build -t paygate .`; run with `node dist/src/main.js api|worker` (see docker-compose.yml).

# ---- build: compile TypeScript with the dev dependencies ----
FROM node:24-slim AS build
WORKDIR /app
COPY package.json package-lock.json ./
RUN npm ci --no-audit --no-fund
COPY tsconfig.json tsconfig.build.json ./
COPY src ./src
COPY migrations ./migrations
# npm run build is scripts/lib/build.js: tsc, then the SQL function sources into dist/src.
COPY scripts ./scripts
RUN npm run build

# ---- runtime: production dependencies and the compiled code only ----
FROM node:24-slim AS runtime
ENV NODE_ENV=production \
    SCARF_ANALYTICS=false \
    APP_ENV=production \
    HOST=0.0.0.0 \
    PORT=3000
WORKDIR /app
COPY package.json package-lock.json ./
# npm's cache and logs go too: the image runs no npm.
RUN npm ci --omit=dev --no-audit --no-fund && rm -rf "$(npm config get cache)"
COPY --from=build /app/dist ./dist
# scripts/migrate.js runs the migrations (the `migrate` service of docker-compose.yml); without src/ it uses dist/ as is.
COPY scripts ./scripts
USER node
EXPOSE 3000
HEALTHCHECK --interval=10s --timeout=3s --start-period=30s --retries=3 \
  CMD ["node", "-e", "fetch('http://127.0.0.1:' + (process.env.PORT || 3000) + '/health/live').then((r) => process.exit(r.ok ? 0 : 1), () => process.exit(1))"]
CMD ["node", "dist/src/main.js", "api"]
