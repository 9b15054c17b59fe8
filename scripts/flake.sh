#!/usr/bin/env bash
# flake.sh N: runs every privileged package's tests (the ones that bring
# up namespaces, veths, AF_XDP sockets and labs) N times, one package at a
# time (go test -p 1 -count=N), on a clean clone of this checkout's HEAD
# built in a temporary directory, as `make test` runs them on a fresh
# machine. It prints, per test, how many of its runs failed and how many
# of its attempts were late (INVALID runs that testtool.RetryLate ran
# again), and exits non-zero if any test failed. Needs root. The
# temporary clone and its logs are removed at the end unless KEEP=1.
#
#   sudo scripts/flake.sh 10          # about 80 minutes
#   PKGS="./lab ./cmd/lab" scripts/flake.sh 2
set -euo pipefail

n=${1:-}
if [[ ! $n =~ ^[1-9][0-9]*$ ]]; then
  echo "usage: $0 N   (run every privileged package's tests N times)" >&2
  exit 2
fi
if [[ $(id -u) -ne 0 ]]; then
  echo "flake.sh: needs root: the privileged tests skip without it, which would prove nothing" >&2
  exit 2
fi
export PATH=$PATH:/usr/local/go/bin

src=$(git -C "$(dirname "$0")/.." rev-parse --show-toplevel)
tmp=$(mktemp -d /tmp/bcfab-flake.XXXXXX)
cleanup() {
  if [[ ${KEEP:-} == 1 ]]; then
    echo "flake.sh: kept $tmp" >&2
  else
    rm -rf "$tmp"
  fi
}
trap cleanup EXIT

echo "flake.sh: cloning $src at $(git -C "$src" rev-parse --short HEAD) into $tmp" >&2
if [[ -n $(git -C "$src" status --porcelain) ]]; then
  echo "flake.sh: note: uncommitted changes in $src are not in the clone" >&2
fi
git clone -q "$src" "$tmp/bcfab"
cd "$tmp/bcfab"
make -s build >"$tmp/build.log" 2>&1 || { cat "$tmp/build.log" >&2; exit 1; }

# The privileged packages: those whose tests ask for root.
if [[ -n ${PKGS:-} ]]; then
  read -r -a pkgs <<<"$PKGS"
else
  # (internal/testkit/testns's own test makes a namespace with New, unqualified.)
  mapfile -t pkgs < <({
    grep -rlE --include='*_test.go' 'testns\.(Require(Root|Lab)|New|Veth)\(|requireRoot\(|Geteuid\(\) != 0' .
    echo ./internal/testkit/testns/x
  } | xargs -n1 dirname | sort -u)
fi
echo "flake.sh: ${#pkgs[@]} packages, $n runs each: ${pkgs[*]}" >&2

status=0
for p in "${pkgs[@]}"; do
  log="$tmp/$(echo "${p#./}" | tr / _).log"
  start=$(date +%s)
  if go test -p 1 -count="$n" -timeout "$((n * 30))m" -v "$p" >"$log" 2>&1; then
    res=ok
  else
    res=FAIL
    status=1
  fi
  echo "$p: $res in $(($(date +%s) - start)) s" >&2
  # A failed test prints "--- FAIL: Name (...)"; a subtest's name has its
  # parent's before a slash. A build failure or panic fails the package
  # without one: say so.
  fails=$({ grep -oE -- '--- FAIL: [^ ]+' "$log" || true; } | sed 's/--- FAIL: //' | sort | uniq -c | sort -rn)
  late=$({ grep -E '^ +[a-z_]+_test\.go:[0-9]+: attempt [0-9]+ of [0-9]+ was late' "$log" || true; } | wc -l)
  if [[ -n $fails ]]; then
    echo "  failures (runs of $n):"
    echo "$fails" | sed 's/^/  /'
  elif [[ $res == FAIL ]]; then
    echo "  failed without a failing test (build error, panic or timeout):"
    { grep -E '^(panic:|FAIL|.*build failed)' "$log" || true; } | head -5 | sed 's/^/    /'
  fi
  if ((late > 0)); then
    echo "  late attempts run again: $late"
    { grep -oE -- '--- SKIP: [^ ]+/attempt[0-9]+' "$log" || true; } | sed 's/--- SKIP: //; s#/attempt[0-9]*$##' | sort | uniq -c | sort -rn | sed 's/^/  /'
  fi
done
if ((status != 0)); then
  echo "flake.sh: failures above (logs in $tmp with KEEP=1)" >&2
else
  echo "flake.sh: every privileged test passed $n times" >&2
fi
exit $status
