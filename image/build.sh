#!/usr/bin/env bash
# Builds the project's container images without Docker, reproducibly, as OCI image-layout
# archives (a tar of oci-layout, index.json and blobs/), for `ctr -n k8s.io images import OUT.tar`
# or `skopeo copy oci-archive:OUT.tar docker://...` (docs/image.md).
#
#   image/build.sh extender BINARY NAME:TAG OUT.tar
#       The Dockerfile's final stage: BINARY (a release build of predicate-extender) at
#       /usr/local/bin/predicate-extender 0755, the shared libraries `ldd BINARY` lists (at the paths
#       it lists, the ELF interpreter included, as regular files), /etc/passwd and /etc/group with
#       distroless's root, nobody and nonroot (65532, home /home/nonroot), /tmp 1777; USER
#       65532:65532, EXPOSE 8888 8889, ENTRYPOINT ["/usr/local/bin/predicate-extender"], CMD ["serve"],
#       and distroless nonroot's WorkingDir /home/nonroot and PATH.
#   image/build.sh kube-scheduler BINARY NAME:TAG OUT.tar
#       A static kube-scheduler (CGO_ENABLED=0, e2e/build.sh) at /usr/local/bin/kube-scheduler,
#       Entrypoint ["/usr/local/bin/kube-scheduler"], the same passwd and group, user root (as
#       upstream's image).
#   image/build.sh in-process-scheduler BINARY NAME:TAG OUT.tar
#       The in-process kube-scheduler (e2e/build.sh inprocess: kube-scheduler with the
#       PredicateEngine plugin and the engine linked in through cgo; docs/in-process.md) at
#       /usr/local/bin/kube-scheduler, the shared libraries `ldd BINARY` lists as for the extender,
#       the same passwd and group, USER 65532:65532, EXPOSE 10259,
#       Entrypoint ["/usr/local/bin/kube-scheduler"].
#   image/build.sh pause NAME:TAG OUT.tar
#       The pod sandbox image: our static pause (image/cmd/pause) at /pause, Entrypoint ["/pause"],
#       User 65535:65535 (as upstream's pause image).
#
# Prints the image's manifest digest (sha256:...) on its last line of standard output; progress
# goes to standard error. The same inputs give the same digest: every entry's time is 0, owners are
# numeric, entries are sorted, gzip carries no name or time. NAME gets docker.io/library/ as Docker
# would add it (the name containerd's CRI looks up).
#
# The tools (image/cmd/assemble on go-containerregistry, pinned in image/go.mod and go.sum, and
# image/cmd/pause) are built with the local Go into ${CARGO_TARGET_DIR:-target}/image-tools/
# (seconds from Go's cache after the first time).
set -euo pipefail
root="$(cd "$(dirname "$0")/.." && pwd)"
export GOWORK=off CGO_ENABLED=0 GOFLAGS="${GOFLAGS:-} -mod=readonly" GOTOOLCHAIN="${GOTOOLCHAIN:-local}"
tools="${CARGO_TARGET_DIR:-$root/target}/image-tools"
path_env="PATH=/usr/local/sbin:/usr/local/bin:/usr/sbin:/usr/bin:/sbin:/bin"

usage() {
  echo "usage:" >&2
  # The header's usage block: from the first "#   image/build.sh" line to the next bare "#".
  sed -n '/^#   image\/build.sh extender/,/^#$/p' "$0" | sed -e '$d' -e 's/^#//' >&2
  exit 2
}
fail() {
  echo "image/build.sh: $*" >&2
  exit 1
}

[[ $# -ge 1 ]] || usage
kind=$1
shift
case "$kind" in
  extender | kube-scheduler | in-process-scheduler)
    [[ $# -eq 3 ]] || usage
    binary=$1 ref=$2 out=$3
    [[ -f "$binary" ]] || fail "$kind binary $binary does not exist"
    [[ -x "$binary" ]] || fail "$kind binary $binary is not executable"
    ;;
  pause)
    [[ $# -eq 2 ]] || usage
    binary="" ref=$1 out=$2
    ;;
  -h | --help | help) usage ;;
  *)
    echo "image/build.sh: unknown image kind '$kind'" >&2
    usage
    ;;
esac
[[ "$ref" == *:* ]] || fail "NAME:TAG wanted, not '$ref'"
[[ -d "$(dirname "$out")" ]] || fail "the directory of $out does not exist"
command -v go >/dev/null 2>&1 ||
  fail "go is not installed; the image tools are Go programs (image/go.mod: go $(sed -n 's/^go //p' "$root/image/go.mod") or newer)"

# The tools: one build at a time (concurrent callers share the directory), each to a partial file
# renamed into place, so a caller never runs a half-written tool.
mkdir -p "$tools"
(
  flock 9 || exit 1
  cd "$root/image" || exit 1
  for tool in assemble pause; do
    # (errexit does not apply in a subshell tested by ||: each step says so itself.)
    go build -trimpath -buildvcs=false -ldflags "-s -w -buildid=" -o "$tools/$tool.partial" "./cmd/$tool" || exit 1
    mv "$tools/$tool.partial" "$tools/$tool" || exit 1
  done
) 9>"$tools/.lock" || fail "building the image tools (image/cmd) with $(go version) failed"

scratch=$(mktemp -d)
trap 'rm -rf "$scratch"' EXIT

# distroless's /etc/passwd and /etc/group (base-debian12), nonroot being 65532.
passwd_group() {
  printf '%s\n' \
    'root:x:0:0:root:/root:/sbin/nologin' \
    'nobody:x:65534:65534:nobody:/nonexistent:/sbin/nologin' \
    'nonroot:x:65532:65532:nonroot:/home/nonroot:/sbin/nologin' >"$scratch/passwd"
  printf '%s\n' 'root:x:0:' 'nobody:x:65534:' 'tty:x:5:' 'staff:x:50:' 'nonroot:x:65532:' >"$scratch/group"
  args+=(-file "/etc/passwd:0644:$scratch/passwd" -file "/etc/group:0644:$scratch/group"
    -dir /home/nonroot:0700:65532:65532 -dir /tmp:1777:0:0)
}

# A static binary: `ldd` finds no interpreter in it.
require_static() {
  if ldd "$1" >/dev/null 2>&1; then
    fail "$1 is dynamically linked; this image holds no libraries: build it with CGO_ENABLED=0"
  fi
}

# The shared libraries of a dynamically linked binary, at the paths `ldd` lists them.
shared_libraries() {
  local listing libs lib
  command -v ldd >/dev/null 2>&1 || fail "ldd is not installed (the $kind's libraries are what ldd lists)"
  # `ldd` lines: "libc.so.6 => /lib/x86_64-linux-gnu/libc.so.6 (0x...)", the interpreter as
  # "/lib64/ld-linux-x86-64.so.2 (0x...)", and the kernel's linux-vdso.so.1 (no file: skipped).
  if ! listing=$(ldd "$1" 2>&1); then
    fail "ldd $1 failed: $listing"
  fi
  if grep -q 'not found' <<<"$listing"; then
    fail "ldd $1: a library is missing on this machine: $(grep 'not found' <<<"$listing" | tr -s ' \t' ' ')"
  fi
  libs=$(awk '$2 == "=>" && $3 ~ /^\// { print $3 } $1 ~ /^\// { print $1 }' <<<"$listing" | sort -u)
  [[ -n "$libs" ]] || fail "ldd $1 lists no library: a glibc build is expected"
  while IFS= read -r lib; do
    args+=(-file "$lib:$(stat -L -c '%a' "$lib"):$lib")
    echo "image/build.sh: library $lib" >&2
  done <<<"$libs"
}

args=(-out "$out" -name "$ref" -env "$path_env")
case "$kind" in
  extender)
    shared_libraries "$binary"
    passwd_group
    args+=(-binary "$binary" -file "/usr/local/bin/predicate-extender:0755:$binary"
      -user 65532:65532 -workdir /home/nonroot -expose 8888 -expose 8889
      -entrypoint '["/usr/local/bin/predicate-extender"]' -cmd '["serve"]'
      -created-by 'image/build.sh extender (Dockerfile final stage)')
    ;;
  in-process-scheduler)
    shared_libraries "$binary"
    passwd_group
    args+=(-binary "$binary" -file "/usr/local/bin/kube-scheduler:0755:$binary"
      -user 65532:65532 -workdir /home/nonroot -expose 10259
      -entrypoint '["/usr/local/bin/kube-scheduler"]' -created-by 'image/build.sh in-process-scheduler')
    ;;
  kube-scheduler)
    require_static "$binary"
    passwd_group
    args+=(-binary "$binary" -file "/usr/local/bin/kube-scheduler:0755:$binary"
      -entrypoint '["/usr/local/bin/kube-scheduler"]' -created-by 'image/build.sh kube-scheduler')
    ;;
  pause)
    require_static "$tools/pause"
    args+=(-binary "$tools/pause" -file "/pause:0755:$tools/pause" -user 65535:65535
      -entrypoint '["/pause"]' -created-by 'image/build.sh pause (image/cmd/pause)')
    ;;
esac

"$tools/assemble" "${args[@]}" || fail "assembling $out failed"
