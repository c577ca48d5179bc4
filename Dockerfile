# Multi-stage build of consent-api (and pgcc-sim, for demos).
#   docker build -t consent-api .
#   docker run --rm -p 8080:8080 \
#     -e APP_ENV=production \
#     -e APP__DATABASE__URL=postgres://consent:...@db:5432/consent_api \
#     -e APP__PGCC__BASE_URL=https://pgcc.example.gov.br \
#     -e APP__PGCC__TOKEN=... \
#     -e APP__WEBHOOKS__ENCRYPTION_KEY="$(openssl rand -base64 32)" \
#     -e APP__AUDITORIA__WITNESSES="url=https://witness.example;key=<witness vkey>" \
#     consent-api serve
# The image runs as an unprivileged user, binds 0.0.0.0:8080 in staging/production
# (config/<env>.toml), and carries config/ at /app/config.

FROM rust:1-slim-bookworm AS build
RUN apt-get update && apt-get install -y --no-install-recommends libpq-dev pkg-config && rm -rf /var/lib/apt/lists/*
WORKDIR /src
COPY . .
RUN cargo build --release --locked --bins \
 && strip target/release/consent-api target/release/pgcc-sim

FROM debian:bookworm-slim
RUN apt-get update && apt-get install -y --no-install-recommends libpq5 ca-certificates && rm -rf /var/lib/apt/lists/* \
 && useradd --system --uid 10001 --home /app --shell /usr/sbin/nologin consent
WORKDIR /app
COPY --from=build /src/target/release/consent-api /src/target/release/pgcc-sim /usr/local/bin/
COPY config /app/config
ENV APP_CONFIG_DIR=/app/config APP_ENV=production
USER 10001
EXPOSE 8080
ENTRYPOINT ["consent-api"]
CMD ["serve"]
