#!/usr/bin/env bash
# Builds the real Kubernetes binaries the end-to-end tests run, for one of the tested Kubernetes
# versions, into target/e2e-bin/kubernetes-<version>-etcd-<etcd>/: etcd (e2e/etcd), every command
# in the version's `tool` block (kube-apiserver, kube-scheduler, kube-controller-manager; for the
# newest also kubelet and kubectl, which the real node and the dev cluster use), and the oracle of
# the random comparison (e2e/kube/oracle: kube-scheduler's own PreFilter and Filter plugins over
# clusters read as JSON lines). Builds only what the directory lacks (the oracle, our own code, is
# rebuilt every time: seconds from Go's cache). Prints the directory on its last line of standard
# output; progress goes to standard error.
#
#   e2e/build.sh            the newest tested version (e2e/kube/go.mod)
#   e2e/build.sh 1.35       a tested minor, or its exact version (v1.35.4)
#   e2e/build.sh --list     the tested versions, newest first, one per line
#   e2e/build.sh helm       only helm (helm.sh/helm/v4 at the version e2e/helm/go.mod pins), into
#                           target/e2e-bin/helm-<version>/helm, for the chart's tests
#   e2e/build.sh inprocess [VERSION]
#                           only the in-process kube-scheduler of a tested version (the newest by
#                           default): kube-scheduler with the PredicateEngine plugin
#                           (e2e/kube/inprocess, docs/in-process.md) linked through cgo to the Rust
#                           engine (crates/engine-ffi, built first by cargo in the profile
#                           PREDICATE_ENGINE_PROFILE names: dev by default, or release), into
#                           target/e2e-bin/inprocess-<version>-<profile>/kube-scheduler. Rebuilt
#                           every time (the engine is our code); built with the netgo and osusergo
#                           tags, so that cgo changes no other package and Go's cache of the plain
#                           builds serves it (seconds and a link). PREDICATE_ENGINE_SYMBOLS=1 keeps
#                           the symbol tables (for perf and pprof).
#   e2e/build.sh policy-oracle
#                           only the Policy oracle (e2e/kube-v1.22/oracle: kube-scheduler v1.22's
#                           own Policy translation, filters and scores; not a tested version), into
#                           target/e2e-bin/policy-oracle-<version>/oracle, <version> the
#                           k8s.io/kubernetes of e2e/kube-v1.22/go.mod
#
# Each tested version is one module file of the wrapper module e2e/kube: go.mod for the newest,
# go.v<minor>.mod (with its go.v<minor>.sum) for the others, built with `go build -modfile`, so the
# oracle's one source compiles against each version's scheduler. One etcd (e2e/etcd/go.mod) serves
# them all. Go's module and build caches make a second build on the same machine seconds.
set -euo pipefail
root="$(cd "$(dirname "$0")/.." && pwd)"
kube="$root/e2e/kube"
export GOWORK=off CGO_ENABLED=0 GOFLAGS="${GOFLAGS:-} -mod=readonly" GOTOOLCHAIN="${GOTOOLCHAIN:-local}"

version_of() { # module go.mod -> the version it requires (a `require` line or a block's line)
  sed -nE "s#^(require)?[[:space:]]*$1 (v[^ ]+).*#\2#p" "$2" | head -n 1
}
tools_of() { # go.mod -> the commands of its `tool` block, by their last path element
  sed -n '/^tool (/,/^)/p' "$1" | sed -nE 's#^[[:space:]]*k8s.io/kubernetes/cmd/([a-z-]+)$#\1#p'
}

# The tested versions: "<version> <module file>", newest first.
modules() {
  local f
  for f in "$kube/go.mod" "$kube"/go.v*.mod; do
    if [[ -f "$f" ]]; then echo "$(version_of k8s.io/kubernetes "$f") $f"; fi
  done | sort -r -V
}

if [[ "${1:-}" == "-h" || "${1:-}" == "--help" ]]; then
  sed -n '2,/^[^#]/{/^#/p}' "$0" | sed 's/^# \{0,1\}//'
  exit 0
fi
inprocess=false
if [[ "${1:-}" == "inprocess" ]]; then
  inprocess=true
  shift
fi
if (($# > 1)); then
  echo "e2e/build.sh: one argument at most (a version, --list, helm, policy-oracle, or inprocess and a version), not $*" >&2
  exit 2
fi
if [[ "${1:-}" == "--list" ]]; then
  modules | cut -d' ' -f1
  exit 0
fi

# helm: its own module (e2e/helm), one binary, built when missing.
if [[ "${1:-}" == "helm" ]]; then
  helm_module="$root/e2e/helm"
  helm_version=$(version_of helm.sh/helm/v4 "$helm_module/go.mod")
  if [[ -z "$helm_version" ]]; then
    echo "e2e/build.sh: could not read the pinned helm.sh/helm/v4 from $helm_module/go.mod" >&2
    exit 2
  fi
  if ! command -v go >/dev/null 2>&1; then
    echo "e2e/build.sh: go is not installed; helm is built from the helm.sh/helm/v4 module" >&2
    exit 2
  fi
  out="${CARGO_TARGET_DIR:-$root/target}/e2e-bin/helm-$helm_version"
  mkdir -p "$out"
  exec 9>"$out.lock"
  flock 9
  if [[ ! -x "$out/helm" ]]; then
    started=$(date +%s)
    echo "e2e/build.sh: helm $helm_version (module download and build; minutes on a cold cache)" >&2
    # The version stamp as Helm's Makefile sets it, so that `helm version` says what was built.
    (cd "$helm_module" && go build -trimpath \
      -ldflags "-s -w -X helm.sh/helm/v4/internal/version.version=$helm_version -X helm.sh/helm/v4/internal/version.gitTreeState=clean" \
      -o "$out/helm.partial" helm.sh/helm/v4/cmd/helm)
    mv "$out/helm.partial" "$out/helm"
    echo "e2e/build.sh: helm built in $(( $(date +%s) - started )) s into $out" >&2
  fi
  echo "$out"
  exit 0
fi

# The Policy oracle: its own module (e2e/kube-v1.22), one binary, rebuilt every time (our code:
# seconds from Go's cache once its modules are downloaded).
if [[ "${1:-}" == "policy-oracle" ]]; then
  policy="$root/e2e/kube-v1.22"
  policy_version=$(version_of k8s.io/kubernetes "$policy/go.mod")
  if [[ -z "$policy_version" ]]; then
    echo "e2e/build.sh: could not read the pinned k8s.io/kubernetes from $policy/go.mod" >&2
    exit 2
  fi
  if ! command -v go >/dev/null 2>&1; then
    echo "e2e/build.sh: go is not installed; the Policy oracle needs Go ($(sed -n 's/^go //p' "$policy/go.mod") or newer)" >&2
    exit 2
  fi
  out="${CARGO_TARGET_DIR:-$root/target}/e2e-bin/policy-oracle-$policy_version"
  mkdir -p "$out"
  exec 9>"$out.lock"
  flock 9
  started=$(date +%s)
  echo "e2e/build.sh: policy oracle $policy_version (module download and build; minutes on a cold cache)" >&2
  (cd "$policy" && go build -trimpath -ldflags "-s -w" -o "$out/oracle.partial" ./oracle)
  mv "$out/oracle.partial" "$out/oracle"
  echo "e2e/build.sh: policy oracle built in $(( $(date +%s) - started )) s into $out" >&2
  echo "$out"
  exit 0
fi

wanted="${1:-}"
wanted="${wanted#v}"
if [[ -n "$wanted" && ! "$wanted" =~ ^[0-9]+\.[0-9]+(\.[0-9]+)?$ ]]; then
  echo "e2e/build.sh: $1: give a minor (1.35), an exact version (v1.35.4), --list, helm or policy-oracle" >&2
  exit 2
fi
modfile=""
kube_version=""
while read -r version file; do
  if [[ -z "$wanted" || "${version#v}" == "$wanted" || "${version#v}" == "$wanted".* ]]; then
    kube_version=$version; modfile=$file; break
  fi
done < <(modules)
if [[ -z "$modfile" ]]; then
  echo "e2e/build.sh: ${1:-} is not a tested version; tested: $(modules | cut -d' ' -f1 | tr '\n' ' ')" >&2
  exit 2
fi
etcd_version=$(version_of go.etcd.io/etcd/server/v3 "$root/e2e/etcd/go.mod")
if [[ -z "$kube_version" || -z "$etcd_version" ]]; then
  echo "e2e/build.sh: could not read the pinned versions from $modfile and e2e/etcd/go.mod" >&2
  exit 2
fi
mapfile -t tools < <(tools_of "$modfile")
if [[ ${#tools[@]} -eq 0 ]]; then
  echo "e2e/build.sh: $modfile has no k8s.io/kubernetes/cmd/... in its tool block" >&2
  exit 2
fi

if ! command -v go >/dev/null 2>&1; then
  echo "e2e/build.sh: go is not installed; the end-to-end tests need Go ($(sed -n 's/^go //p' "$modfile") or newer)" >&2
  exit 2
fi

# Version stamps as upstream's release builds set them (hack/lib/version.sh), so that
# `kube-apiserver --version` and the API server's /version say what was built (and the in-process
# engine counts pods as this version does).
minor=${kube_version#v1.}; minor=${minor%%.*}
ldflags="-s -w -X k8s.io/component-base/version.gitVersion=$kube_version \
 -X k8s.io/component-base/version.gitMajor=1 -X k8s.io/component-base/version.gitMinor=$minor \
 -X k8s.io/component-base/version.gitTreeState=clean \
 -X k8s.io/client-go/pkg/version.gitVersion=$kube_version \
 -X k8s.io/client-go/pkg/version.gitMajor=1 -X k8s.io/client-go/pkg/version.gitMinor=$minor"

if $inprocess; then
  profile=${PREDICATE_ENGINE_PROFILE:-dev}
  case "$profile" in
    dev) lib="${CARGO_TARGET_DIR:-$root/target}/debug" ;;
    release) lib="${CARGO_TARGET_DIR:-$root/target}/release" ;;
    *) echo "e2e/build.sh: PREDICATE_ENGINE_PROFILE=$profile: give dev or release" >&2; exit 2 ;;
  esac
  out="${CARGO_TARGET_DIR:-$root/target}/e2e-bin/inprocess-$kube_version-$profile"
  mkdir -p "$out"
  exec 9>"$out.lock"
  flock 9
  started=$(date +%s)
  echo "e2e/build.sh: the engine's static library (cargo build -p predicate-engine-ffi, $profile)" >&2
  (cd "$root" && cargo build --locked --color never --profile "$profile" -p predicate-engine-ffi)
  echo "e2e/build.sh: in-process kube-scheduler $kube_version" >&2
  # PREDICATE_ENGINE_SYMBOLS=1 keeps the symbol tables, for a profile (perf, pprof) of the binary.
  inprocess_ldflags=$ldflags
  if [[ "${PREDICATE_ENGINE_SYMBOLS:-}" == 1 ]]; then inprocess_ldflags=${ldflags#-s -w }; fi
  (cd "$kube" && CGO_ENABLED=1 CGO_LDFLAGS="-L$lib" go build -modfile="$modfile" -tags netgo,osusergo -trimpath \
    -ldflags "$inprocess_ldflags" -o "$out/kube-scheduler.partial" ./inprocess)
  mv "$out/kube-scheduler.partial" "$out/kube-scheduler"
  echo "e2e/build.sh: in-process kube-scheduler built in $(( $(date +%s) - started )) s into $out" >&2
  echo "$out"
  exit 0
fi

out="${CARGO_TARGET_DIR:-$root/target}/e2e-bin/kubernetes-$kube_version-etcd-$etcd_version"
binaries=(etcd "${tools[@]}")

# One build of a version at a time (test binaries and .ci/run may ask at once): the second finds
# it complete.
mkdir -p "$(dirname "$out")"
exec 9>"$out.lock"
flock 9

# The oracle and the field lister (packages of ours in e2e/kube, compiled against this version),
# into $1/oracle and $1/fields.
build_oracle() {
  local tool
  for tool in oracle fields; do
    (cd "$kube" && go build -modfile="$modfile" -trimpath -ldflags "-s -w" -o "$1/$tool.partial" "./$tool")
    mv "$1/$tool.partial" "$1/$tool"
  done
}

complete=true
for b in "${binaries[@]}"; do [[ -x "$out/$b" ]] || complete=false; done
if $complete; then
  echo "e2e/build.sh: oracle $kube_version" >&2
  build_oracle "$out"
  echo "e2e/build.sh: $out is complete; not rebuilt" >&2
  echo "$out"
  exit 0
fi

# And one build of Kubernetes at a time, of any version: two Go builds of kube-apiserver side by
# side only slow each other down.
exec 8>"$(dirname "$out")/build.lock"
flock 8

# A directory an older layout left with fewer binaries keeps what it has; the missing ones are built.
rm -rf "$out.partial"
if [[ -d "$out" ]]; then cp -a "$out" "$out.partial"; else mkdir -p "$out.partial"; fi
started=$(date +%s)

if [[ ! -x "$out.partial/etcd" ]]; then
  echo "e2e/build.sh: etcd $etcd_version (module download and build; minutes on a cold cache)" >&2
  (cd "$root/e2e/etcd" && go build -trimpath -ldflags "-s -w" -o "$out.partial/etcd" .)
  echo "e2e/build.sh: etcd built after $(( $(date +%s) - started )) s" >&2
fi

for b in "${tools[@]}"; do
  [[ -x "$out.partial/$b" ]] && continue
  echo "e2e/build.sh: $b $kube_version" >&2
  (cd "$kube" && go build -modfile="$modfile" -trimpath -ldflags "$ldflags" -o "$out.partial/$b" "k8s.io/kubernetes/cmd/$b")
  echo "e2e/build.sh: $b built after $(( $(date +%s) - started )) s" >&2
done

echo "e2e/build.sh: oracle $kube_version" >&2
build_oracle "$out.partial"
echo "e2e/build.sh: oracle built after $(( $(date +%s) - started )) s" >&2

rm -rf "$out"
mv "$out.partial" "$out"
echo "e2e/build.sh: all built in $(( $(date +%s) - started )) s into $out" >&2
echo "$out"
