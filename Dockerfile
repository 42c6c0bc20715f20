# The service image; it talks to an external Neo4j (NEO4J_URI), so the local Neo4j is not fetched.
FROM node:20-bookworm-slim
WORKDIR /app
ENV NODE_ENV=production SKIP_NEO4J_FETCH=1
COPY package.json package-lock.json ./
RUN npm ci --no-audit --no-fund
COPY tsconfig.json ./
COPY src ./src
COPY scripts ./scripts
USER node
EXPOSE 4000
CMD ["npx", "tsx", "src/server.ts"]
