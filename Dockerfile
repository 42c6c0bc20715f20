# The service image; it talks to an external Neo4j (NEO4J_URI), so the local Neo4j is not fetched.
# Node.js 26.12.1 LTS, the version npm scripts run on in development and CI (package.json devDependencies: node);
# not 24.21 or 26.10, whose JSON.parse misreads escaped keys (docs/operations.md, Runtime).
FROM node:26.12.1-bookworm-slim AS build
WORKDIR /app
ENV SKIP_NEO4J_FETCH=1
COPY package.json package-lock.json ./
COPY scripts/fetch-neo4j.mjs ./scripts/
RUN npm ci --no-audit --no-fund
COPY tsconfig.json tsconfig.build.json ./
COPY scripts/build-if-stale.mjs ./scripts/
COPY src ./src
RUN npm run build

FROM node:26.12.1-bookworm-slim
WORKDIR /app
# MALLOC_MMAP_THRESHOLD_: glibc gives every allocation of 128 KiB or more its own mapping, returned to the system
# when freed (by default the threshold rises after the first large free, and the memory of later megabyte buffers,
# bodies and answers, stays in the process). The door storm peaked 20 to 45 MB lower with it; see docs/operations.md.
ENV NODE_ENV=production SKIP_NEO4J_FETCH=1 MALLOC_MMAP_THRESHOLD_=131072
COPY package.json package-lock.json ./
COPY scripts/fetch-neo4j.mjs ./scripts/
RUN npm ci --omit=dev --no-audit --no-fund
COPY --from=build /app/dist ./dist
USER node
EXPOSE 4000
# The same node command as `npm start` (package.json; deployment-files.test.ts holds them equal): the young
# generation capped at 8 MB a semi-space (V8 reads it only at start-up), see docs/operations.md, Memory and the Node flags.
CMD ["node", "--max-semi-space-size=8", "dist/server.js"]
