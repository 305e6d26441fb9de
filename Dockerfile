# syntax=docker/dockerfile:1
# Agentry: the API, the webhook receiver and the worker in one image; AGENTRY_ROLES picks what a container runs.
# Build: docker build -t agentry .      Run: see compose.yaml and docs/operations-observability.md.

FROM node:20-bookworm-slim AS deps
WORKDIR /app
COPY package.json package-lock.json ./
# Production dependencies only; install scripts stay off except esbuild's (it checks its platform binary).
RUN npm ci --omit=dev --no-audit --no-fund --ignore-scripts \
 && node node_modules/esbuild/install.js \
 && npm cache clean --force

FROM node:20-bookworm-slim
ENV NODE_ENV=production \
    AGENTRY_HOST=0.0.0.0 \
    AGENTRY_DATA_DIR=/data \
    SCARF_ANALYTICS=false
WORKDIR /app
COPY --from=deps /app/node_modules ./node_modules
COPY package.json package-lock.json ./
COPY bin ./bin
COPY scripts ./scripts
COPY src ./src
# `npm start` transpiles src/ into dist/ (scripts/build.mjs) and starts dist/main.js: the app user may write dist/
# and nothing else of /app. The data directory (SQLite database, master key, uploads) is the only other place.
RUN node scripts/build.mjs \
 && mkdir -p /data \
 && chown node:node /app /data \
 && chown -R node:node /app/dist
USER node
VOLUME ["/data"]
EXPOSE 8080 8081
HEALTHCHECK --interval=10s --timeout=3s --start-period=30s --retries=3 \
  CMD ["node", "-e", "fetch('http://127.0.0.1:'+(process.env.AGENTRY_API_PORT||8080)+'/health').then(r=>process.exit(r.ok?0:1),()=>process.exit(1))"]
STOPSIGNAL SIGTERM
CMD ["npm", "start"]
