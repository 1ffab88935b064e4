# The one kubecrew image: `kubecrew api|controller|integrations|runner|dev`. It runs JavaScript compiled from the
# TypeScript sources (the `build` stage; tsconfig.build.json): Node 24 could run the sources directly (type stripping,
# as a checkout does), but that costs every process about 30 MB of memory and start-up time. Only production
# dependencies. Build: hack/build-image.sh.
# It needs BuildKit (docker buildx, or DOCKER_BUILDKIT=1) for the CA bundle below; no `# syntax` line, so building it
# pulls nothing but NODE_IMAGE.
ARG NODE_IMAGE=node:24-bookworm-slim

FROM ${NODE_IMAGE} AS dependencies
WORKDIR /app
COPY package.json package-lock.json ./
# Production dependencies only: the pinned `node` devDependency, TypeScript, vitest and eslint stay out (the base
# image provides Node 24). No dependency needs an install script. Behind a TLS-inspecting proxy, hand the proxy's CA
# bundle to this step as a build secret (`--secret id=ca-bundle,src=/etc/ssl/certs/ca-certificates.crt`; what
# hack/build-image.sh does): it is mounted for this step only and never lands in a layer of the image. The `local`
# model provider runs on the CPU in a pod: of node-llama-cpp's prebuilt binaries only this machine's CPU build stays
# (the CUDA, Vulkan and other architectures' builds are about 650 MB), and TypeScript, its optional peer that npm keeps
# because the project's devDependencies name it, goes.
RUN --mount=type=secret,id=ca-bundle \
    if [ -s /run/secrets/ca-bundle ]; then export NODE_EXTRA_CA_CERTS=/run/secrets/ca-bundle; fi \
 && npm ci --omit=dev --ignore-scripts --no-audit --no-fund && npm cache clean --force \
 && keep="linux-$(node -p process.arch)" \
 && for build in node_modules/@node-llama-cpp/*; do [ "${build##*/}" = "$keep" ] || rm -rf "$build"; done \
 && rm -rf node_modules/typescript

# The sources compiled to JavaScript: types erased, relative imports of .ts rewritten to .js. Emit only (CI type-checks
# with tsconfig.json), so TypeScript alone is installed, at the version package.json pins. The other files the CLI
# reads beside its modules (the console's static files, the controller's manifests) are copied into the same tree.
FROM ${NODE_IMAGE} AS build
WORKDIR /app
COPY package.json tsconfig.json tsconfig.build.json ./
RUN --mount=type=secret,id=ca-bundle \
    if [ -s /run/secrets/ca-bundle ]; then export NODE_EXTRA_CA_CERTS=/run/secrets/ca-bundle; fi \
 && npm install --prefix /opt/typescript --no-save --ignore-scripts --no-audit --no-fund \
      "typescript@$(node -p 'require("./package.json").devDependencies.typescript')" \
 && npm cache clean --force
COPY core ./core
COPY platform ./platform
COPY kube ./kube
COPY api ./api
COPY console ./console
COPY controller ./controller
COPY runner ./runner
COPY integrations ./integrations
COPY dev ./dev
COPY cli ./cli
RUN node /opt/typescript/node_modules/typescript/bin/tsc -p tsconfig.build.json \
 && find core platform kube api console controller runner integrations dev cli -type f ! -name '*.ts' -exec cp --parents {} build/ \;

FROM ${NODE_IMAGE}
# No package manager in the final image: nothing is installed at run time.
RUN rm -rf /usr/local/lib/node_modules/npm /usr/local/lib/node_modules/corepack \
      /usr/local/bin/npm /usr/local/bin/npx /usr/local/bin/corepack /opt/yarn-* /usr/local/bin/yarn /usr/local/bin/yarnpkg \
 && printf '#!/bin/sh\n# The kubecrew CLI; task Jobs run `kubecrew runner …`.\nexec node /app/cli/main.js "$@"\n' > /usr/local/bin/kubecrew \
 && chmod 0755 /usr/local/bin/kubecrew
WORKDIR /app
# Node caches the compiled code of the modules under NODE_COMPILE_CACHE: it halves a task pod's start-up. /tmp is an
# emptyDir in the pods (the root filesystem is read-only). V8's young generation is held to 4 MB a semi-space (its
# default grows to 32): the controller and the API answer watch events and requests with short-lived objects, and
# the larger young generation only kept pages resident (a process caching 10,000 executions: 201 MB RSS by default,
# 146 MB with 4 MB, no more CPU). A NODE_OPTIONS of the pod's own replaces this one.
ENV NODE_ENV=production NODE_COMPILE_CACHE=/tmp/node-compile-cache NODE_OPTIONS=--max-semi-space-size=4
# glibc's malloc (the base image is Debian's glibc), for what Node allocates outside V8's heap (network and TLS buffers,
# list answers, compiler zones): a fixed mmap threshold of 64 KiB, so large buffers are mapped and given back when freed
# (by default the threshold rises to the largest buffer freed so far, up to 32 MiB, and later ones stay in the brk
# heap), trimming above 128 KiB, and two arenas instead of eight per core (each thread's arena kept what it freed).
# bench:controller-memory, 10,000 executions cached and a burst of 30,000 watch events: malloc's heap 55 → 27 MB,
# RSS 283 → 210 MB. An env of the pod's own replaces these.
ENV MALLOC_ARENA_MAX=2 GLIBC_TUNABLES=glibc.malloc.mmap_threshold=65536:glibc.malloc.trim_threshold=131072
COPY --from=dependencies /app/node_modules ./node_modules
COPY package.json package-lock.json ./
# The compiled modules, laid out as the sources are (core/, kube/, …, cli/main.js).
COPY --from=build /app/build ./
COPY crds ./crds
COPY examples ./examples
# 65532: the conventional non-root user of distroless images, and what the chart's securityContext runs as.
USER 65532:65532
ENTRYPOINT ["node", "/app/cli/main.js"]
CMD ["--help"]
LABEL org.opencontainers.image.title="kubecrew" \
      org.opencontainers.image.description="Crews of AI agents as Kubernetes Jobs, behind a CrewAI-compatible API" \
      org.opencontainers.image.licenses="Apache-2.0"
