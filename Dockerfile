# kalah-tuner server image. Build: docker build -t kalah-tuner .
# Run:  docker run -p 127.0.0.1:8080:8080 -v kalah-data:/data kalah-tuner
# (SQLite in /data/kalah-tuner.db; set DATABASE_URL=postgres://... for PostgreSQL.)

# Build stage: the full toolchain; only the binary leaves it.
FROM rust:1.95-slim-bookworm AS build
WORKDIR /src
# Manifests first so the dependency build is cached while only the sources change.
COPY Cargo.toml Cargo.lock ./
RUN mkdir -p src benches examples \
    && echo 'fn main() {}' > src/main.rs && touch src/lib.rs \
    && echo 'fn main() {}' > benches/engine.rs \
    && cargo fetch --locked
COPY src src
COPY benches benches
COPY examples examples
# Embedded into the binary at compile time: the migrations and the dashboard.
COPY migrations migrations
COPY static static
RUN cargo build --release --locked --bin kalah-tuner \
    && strip target/release/kalah-tuner

# Runtime stage: a slim Debian with the binary and nothing else it does not need.
FROM debian:bookworm-slim
RUN apt-get update \
    && apt-get install -y --no-install-recommends ca-certificates \
    && rm -rf /var/lib/apt/lists/* \
    && useradd --system --create-home --home-dir /data --uid 10001 kalah
COPY --from=build /src/target/release/kalah-tuner /usr/local/bin/kalah-tuner
USER kalah
WORKDIR /data
VOLUME ["/data"]
ENV RUST_LOG=kalah_tuner=info,tower_http=info
EXPOSE 8080
ENTRYPOINT ["kalah-tuner"]
# 0.0.0.0 inside the container so the published port reaches it; publish it on 127.0.0.1
# (as docker-compose.yml does) or set KALAH_TUNER_TOKEN before exposing it further.
CMD ["serve", "--bind", "0.0.0.0:8080", "--database-url", "sqlite:///data/kalah-tuner.db"]
