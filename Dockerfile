# syntax=docker/dockerfile:1
# Production image: the compiled service, production dependencies only, a non-root user.
# Build: docker build -t payroll .   Run: docker run --env-file live.env -p 3000:3000 payroll
# The runtime stage is exactly what scripts/package-production.sh builds (CI builds and starts the
# same artefact without Docker: scripts/smoke-production.sh).

FROM node:24-bookworm-slim AS build
WORKDIR /src
COPY . .
# `npm ci` also compiles the contracts (prepare); the package step builds and assembles /release.
RUN npm ci --no-audit --no-fund && scripts/package-production.sh /release

FROM node:24-bookworm-slim
ENV NODE_ENV=production \
    PORT=3000 \
    DATA_DIR=/data
WORKDIR /app
COPY --from=build --chown=root:root /release ./
# Local-mode files (PGlite, generated keys) and nothing else are written under /data.
RUN mkdir -p /data && chown node:node /data
USER node
EXPOSE 3000
# Liveness only: readiness (/readyz) is for the load balancer, which takes an instance out of
# rotation without restarting it.
HEALTHCHECK --interval=15s --timeout=3s --start-period=60s --retries=3 \
  CMD ["node", "-e", "fetch('http://127.0.0.1:' + (process.env.PORT || 3000) + '/healthz').then((r) => process.exit(r.ok ? 0 : 1), () => process.exit(1))"]
STOPSIGNAL SIGTERM
CMD ["node", "dist/main.js"]
