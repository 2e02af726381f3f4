# syntax=docker/dockerfile:1
#
# The extender's image: a release build on Debian 12 (bookworm), run on distroless's Debian 12
# "cc" image as the non-root user 65532.
#
#   docker build -t registry.example.com/predicate-extender:0.1.0 .
#
# glibc rather than a static musl binary: nothing in the dependency tree needs OpenSSL (TLS is
# rustls with ring), so x86_64-unknown-linux-musl is possible in principle (not tried), but musl's
# allocator is known to scale poorly with many threads, and every request runs on the evaluator's
# worker threads. The builder and the runtime are both Debian 12, so the binary runs against the glibc
# it was linked with. Base images are pinned by tag; add digests (name:tag@sha256:...) from your
# registry when your policy asks for them.

FROM docker.io/library/rust:1.95.0-bookworm AS build
WORKDIR /src
COPY . .
# --locked: exactly the versions in Cargo.lock. The cache mounts keep the registry and target/
# between builds on the same machine; they are not part of the image.
RUN --mount=type=cache,target=/usr/local/cargo/registry \
    --mount=type=cache,target=/src/target \
    cargo build --release --locked --bin predicate-extender \
    && install -D -m 0755 target/release/predicate-extender /out/predicate-extender

FROM gcr.io/distroless/cc-debian12:nonroot
COPY --from=build /out/predicate-extender /usr/local/bin/predicate-extender
# distroless's nonroot user; numeric, so kubelet can check runAsNonRoot.
USER 65532:65532
# 8888: the verbs (loopback by default, --listen); 8889: /healthz, /readyz (--admin-listen).
EXPOSE 8888 8889
ENTRYPOINT ["/usr/local/bin/predicate-extender"]
CMD ["serve"]
