# syntax=docker/dockerfile:1
#
# Stages: `build` compiles the release server, `test` adds the debug test build (used by the
# compose service `tests`), `pgbouncer` is the compose file's pooler, `runtime` is the small image that
# runs the server. `runtime` is last so that a plain `docker build .` gives the server image.
#
#   docker build -t pgmodel .
#   docker build --target test -t pgmodel-tests .
#
# Keep the Swift major.minor in step with the toolchain the project is developed and tested with.
ARG SWIFT_VERSION=6.3

FROM swift:${SWIFT_VERSION}-noble AS build
WORKDIR /src
# Resolve first, in its own layer, so editing sources does not refetch every dependency.
# Package.resolved is not copied: the project does not commit one.
COPY Package.swift ./
RUN swift package resolve
# Everything .dockerignore lets through: the manifest also declares the test targets, whose
# folders must exist for any build, and sql/ is absent from a checkout while it is empty.
COPY . .
# SwiftPM resource bundles, if any, must sit next to the executable that loads them.
RUN mkdir -p sql /staging \
    && swift build -c release --product pgmodel \
    && bin="$(swift build -c release --show-bin-path)" \
    && cp "$bin/pgmodel" /staging/ \
    && find -L "$bin" -maxdepth 1 -name '*.resources' -exec cp -R {} /staging/ \;

FROM build AS test
# The in-memory store's tests start private clusters (PostgreSQL's server programs) and the PROXY
# protocol tests put HAProxy in front of the service: the test image has both.
RUN apt-get update \
    && DEBIAN_FRONTEND=noninteractive apt-get install -y --no-install-recommends postgresql postgresql-contrib haproxy \
    && rm -rf /var/lib/apt/lists/*
RUN swift build --build-tests
ENV PGMODEL_TEST_DATABASE_URL=postgres://pgmodel:pgmodel@postgres:5432/pgmodel_test
CMD ["swift", "test", "--filter", "PGModelIntegrationTests"]

FROM debian:bookworm-slim AS pgbouncer
# docker-compose.yml's PgBouncer: Debian's package, configured from the environment at start
# (scripts/docker-pgbouncer.sh), in transaction mode in front of the postgres service.
RUN apt-get update \
    && DEBIAN_FRONTEND=noninteractive apt-get install -y --no-install-recommends pgbouncer \
    && rm -rf /var/lib/apt/lists/*
COPY scripts/docker-pgbouncer.sh /usr/local/bin/pgmodel-pgbouncer
USER postgres
EXPOSE 6432
CMD ["pgmodel-pgbouncer"]

FROM swift:${SWIFT_VERSION}-noble-slim AS runtime
# The server needs no privileges; it only listens on an unprivileged port.
RUN useradd --system --user-group --create-home --home-dir /app pgmodel
COPY --from=build /staging/ /usr/local/bin/
COPY --from=build /src/sql /app/sql
USER pgmodel
WORKDIR /app
EXPOSE 7432
CMD ["pgmodel", "serve", "--host", "0.0.0.0", "--port", "7432"]
