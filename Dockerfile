# The capi-conformance container image: both binaries on a distroless runtime, as a non-root user.
#
#   docker build -t ghcr.io/capi-conformance/capi-conformance:v0.1.0 .
#
# `capi-conformance manifests job` (the in-cluster Job) and `capi-conformance manifests sonobuoy`
# (the Sonobuoy plugin) run /usr/local/bin/capi-conformance from this image, as user 65532.
# tests/plugin/dockerfile.rs checks this file's shape; building it needs a Docker engine and the
# base images' registries (README, "Run it in the cluster").

# Build stage: the Rust toolchain of Cargo.toml's rust-version, Debian bookworm (glibc 2.36, as
# the runtime below).
FROM docker.io/library/rust:1.89-bookworm AS build
WORKDIR /src
COPY . .
RUN cargo build --release --locked --bins \
 && install -D -m 0755 target/release/capi-conformance /out/capi-conformance \
 && install -D -m 0755 target/release/kubectl-capi_conformance /out/kubectl-capi_conformance

# Runtime: glibc and CA certificates only (Debian 12), no shell, no package manager.
FROM gcr.io/distroless/cc-debian12:nonroot
LABEL org.opencontainers.image.source="https://github.com/capi-conformance/capi-conformance" \
      org.opencontainers.image.description="Cluster API provider contract conformance" \
      org.opencontainers.image.licenses="Apache-2.0"
COPY --from=build /out/capi-conformance /usr/local/bin/capi-conformance
COPY --from=build /out/kubectl-capi_conformance /usr/local/bin/kubectl-capi_conformance
USER 65532:65532
ENTRYPOINT ["/usr/local/bin/capi-conformance"]
CMD ["--help"]
