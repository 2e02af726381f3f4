#!/usr/bin/env bash
# Builds the real Kubernetes binaries the end-to-end tests run (etcd, kube-apiserver,
# kube-scheduler, kube-controller-manager, and for the real node kubelet and kubectl) from the
# wrapper modules e2e/etcd and e2e/kube, into
# target/e2e-bin/<kubernetes>-<etcd>/, with the oracle of the random comparison (e2e/kube/oracle:
# kube-scheduler's own PreFilter and Filter plugins over clusters read as JSON lines). Skipped when that directory is complete. Prints the
# directory on its last line of standard output; progress goes to standard error.
#
# Versions come from the wrapper modules' go.mod (pinned there, with go.sum). Go's module and build
# caches make a second build on the same machine a matter of seconds.
set -euo pipefail
root="$(cd "$(dirname "$0")/.." && pwd)"
export GOWORK=off CGO_ENABLED=0 GOFLAGS="${GOFLAGS:-} -mod=readonly" GOTOOLCHAIN="${GOTOOLCHAIN:-local}"

if ! command -v go >/dev/null 2>&1; then
  echo "e2e/build.sh: go is not installed; the end-to-end tests need Go ($(sed -n 's/^go //p' "$root/e2e/kube/go.mod") or newer)" >&2
  exit 2
fi

version_of() { # module go.mod -> the version it requires (a `require` line or a block's line)
  sed -nE "s#^(require)?[[:space:]]*$1 (v[^ ]+).*#\2#p" "$2" | head -n 1
}
kube_version=$(version_of k8s.io/kubernetes "$root/e2e/kube/go.mod")
etcd_version=$(version_of go.etcd.io/etcd/server/v3 "$root/e2e/etcd/go.mod")
if [[ -z "$kube_version" || -z "$etcd_version" ]]; then
  echo "e2e/build.sh: could not read the pinned versions from e2e/kube/go.mod and e2e/etcd/go.mod" >&2
  exit 2
fi
out="${CARGO_TARGET_DIR:-$root/target}/e2e-bin/kubernetes-$kube_version-etcd-$etcd_version"
binaries=(etcd kube-apiserver kube-scheduler kube-controller-manager kubelet kubectl)

# One build at a time (test binaries and .ci/run may ask at once); the second finds it complete.
mkdir -p "$(dirname "$out")"
exec 9>"$out.lock"
flock 9

# The oracle (a package of ours in e2e/kube, so the same pinned scheduler code), into $1/oracle.
build_oracle() {
  (cd "$root/e2e/kube" && go build -trimpath -ldflags "-s -w" -o "$1/oracle.partial" ./oracle)
  mv "$1/oracle.partial" "$1/oracle"
}

complete=true
for b in "${binaries[@]}"; do [[ -x "$out/$b" ]] || complete=false; done
if $complete; then
  # The oracle is our own code: built every time (seconds from Go's cache), so a change to it is
  # never left out; the rest is left as it is.
  echo "e2e/build.sh: oracle $kube_version" >&2
  build_oracle "$out"
  echo "e2e/build.sh: $out is complete; not rebuilt" >&2
  echo "$out"
  exit 0
fi

# A directory an older layout left with fewer binaries keeps what it has; the missing ones are built.
rm -rf "$out.partial"
if [[ -d "$out" ]]; then cp -a "$out" "$out.partial"; else mkdir -p "$out.partial"; fi
started=$(date +%s)
# Version stamps as upstream's release builds set them (hack/lib/version.sh), so that
# `kube-apiserver --version` and the API server's /version say what was built.
minor=${kube_version#v1.}; minor=${minor%%.*}
ldflags="-s -w -X k8s.io/component-base/version.gitVersion=$kube_version \
 -X k8s.io/component-base/version.gitMajor=1 -X k8s.io/component-base/version.gitMinor=$minor \
 -X k8s.io/component-base/version.gitTreeState=clean \
 -X k8s.io/client-go/pkg/version.gitVersion=$kube_version \
 -X k8s.io/client-go/pkg/version.gitMajor=1 -X k8s.io/client-go/pkg/version.gitMinor=$minor"

if [[ ! -x "$out.partial/etcd" ]]; then
  echo "e2e/build.sh: etcd $etcd_version (module download and build; minutes on a cold cache)" >&2
  (cd "$root/e2e/etcd" && go build -trimpath -ldflags "-s -w" -o "$out.partial/etcd" .)
  echo "e2e/build.sh: etcd built after $(( $(date +%s) - started )) s" >&2
fi

for b in "${binaries[@]:1}"; do
  [[ -x "$out.partial/$b" ]] && continue
  echo "e2e/build.sh: $b $kube_version" >&2
  (cd "$root/e2e/kube" && go build -trimpath -ldflags "$ldflags" -o "$out.partial/$b" "k8s.io/kubernetes/cmd/$b")
  echo "e2e/build.sh: $b built after $(( $(date +%s) - started )) s" >&2
done

echo "e2e/build.sh: oracle $kube_version" >&2
build_oracle "$out.partial"
echo "e2e/build.sh: oracle built after $(( $(date +%s) - started )) s" >&2

rm -rf "$out"
mv "$out.partial" "$out"
echo "e2e/build.sh: all built in $(( $(date +%s) - started )) s into $out" >&2
echo "$out"
