# Catchment's image: the API and the worker (same image, another command), embedded or against servers.
#   docker build -t catchment .
#   docker run -p 8080:8080 -v catchment-data:/data catchment        (embedded: everything under /data)
# The build context is what .dockerignore leaves: never data/, .env, node_modules or tests (test/docker-context.test.ts).

# Build stage: every dependency, to build the web console and compile the service (dist/: no swc or TypeScript at run time).
FROM node:24-bookworm-slim AS build
WORKDIR /app
COPY package.json package-lock.json ./
# Install scripts are skipped as on the machines Catchment is developed on; the console is built below.
RUN npm ci --no-audit --no-fund --ignore-scripts
COPY . .
RUN mkdir -p web/dist && npm run --if-present web:build && npm run build

# Runtime stage: production dependencies and the files the process reads, owned by root and run as `node`.
# MALLOC_ARENA_MAX: two glibc malloc arenas instead of eight per core; MALLOC_MMAP_THRESHOLD_: blocks from
# 2 MiB up in pages of their own, handed back when freed; MALLOC_TRIM_THRESHOLD_: free memory at the top of
# the heap and its arenas handed back past 32 MiB (bin/catchment.js sets them too when unset; here
# they also hold for a process started another way); NODE_OPTIONS caps V8's young generation at 4 MiB per
# semi-space and the command lets the old generation grow by half between collections and keeps WebAssembly
# (the embedded database) on V8's baseline compiler, as bin/catchment.js does when they are unset (Node
# refuses --heap-growing-percent and --liftoff-only in NODE_OPTIONS).
FROM node:24-bookworm-slim AS runtime
ENV NODE_ENV=production \
    HOST=0.0.0.0 \
    PORT=8080 \
    CATCHMENT_DATA_DIR=/data \
    MALLOC_ARENA_MAX=2 \
    MALLOC_MMAP_THRESHOLD_=2097152 \
    MALLOC_TRIM_THRESHOLD_=33554432 \
    NODE_OPTIONS=--max-semi-space-size=4
WORKDIR /app
COPY package.json package-lock.json ./
RUN npm ci --omit=dev --no-audit --no-fund --ignore-scripts && npm cache clean --force
COPY tsconfig.json .swcrc ./
COPY bin ./bin
COPY src ./src
COPY openapi ./openapi
COPY --from=build /app/web/dist ./web/dist
# The compiled service, which bin/catchment.js runs (the sources above are its fallback when they are newer).
COPY --from=build /app/dist ./dist
# The template new embedded databases start from (bin/build.js made it): no initdb on the first start.
COPY --from=build /app/node_modules/.cache/catchment ./node_modules/.cache/catchment
RUN mkdir -p /data && chown node:node /data
USER node
VOLUME ["/data"]
EXPOSE 8080
HEALTHCHECK --interval=10s --timeout=5s --retries=10 \
  CMD ["node", "-e", "fetch('http://127.0.0.1:8080/readyz').then(r=>process.exit(r.ok?0:1),()=>process.exit(1))"]
CMD ["node", "--heap-growing-percent=50", "--liftoff-only", "bin/catchment.js", "start"]
