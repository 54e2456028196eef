#!/usr/bin/env bash
# The system tools the tests drive, brought in before they run (`pnpm test` and
# `pnpm test:stress` call this first). A missing tool is installed from Debian's
# packages when this runs as root with apt-get; otherwise this stops at once,
# naming the command to run. Nothing is ever skipped for a missing tool.
#
#   scripts/test-tools.sh test     chromium (the scoreboard page's browser tests),
#                                  kubectl (the deployment tests render the kustomize
#                                  overlays), curl (the README's quick-start session)
#   scripts/test-tools.sh stress   h2load (the scoreboard soak), and PostgreSQL's
#                                  server binaries (the database-outage test runs a
#                                  private cluster)
set -euo pipefail

# tool -> Debian package
declare -A PACKAGE=(
  [chromium]=chromium
  [kubectl]=kubernetes-client
  [curl]=curl
  [h2load]=nghttp2-client
  [initdb]=postgresql
)

case "${1:-}" in
  test) tools=(chromium kubectl curl) ;;
  stress) tools=(h2load initdb) ;;
  *)
    echo "usage: $0 test|stress" >&2
    exit 2
    ;;
esac

found() {
  # PostgreSQL's server binaries are not on PATH on Debian.
  if [ "$1" = initdb ]; then compgen -G '/usr/lib/postgresql/*/bin/initdb' >/dev/null; else command -v "$1" >/dev/null; fi
}

missing=()
for tool in "${tools[@]}"; do found "$tool" || missing+=("$tool"); done
[ ${#missing[@]} -eq 0 ] && exit 0

packages=()
for tool in "${missing[@]}"; do packages+=("${PACKAGE[$tool]}"); done
command="apt-get update && apt-get install -y ${packages[*]}"

if [ "$(id -u)" -eq 0 ] && command -v apt-get >/dev/null; then
  echo "test-tools: installing ${packages[*]} (for ${missing[*]}) from Debian's packages" >&2
  apt-get update -q >&2
  DEBIAN_FRONTEND=noninteractive apt-get install -y -q "${packages[@]}" >&2
  for tool in "${missing[@]}"; do
    found "$tool" || { echo "test-tools: $tool is still missing after installing ${PACKAGE[$tool]}" >&2; exit 1; }
  done
  exit 0
fi

echo "test-tools: the tests need ${missing[*]}, which this machine lacks." >&2
echo "Install them, then run the tests again:" >&2
echo "  sudo sh -c '$command'" >&2
exit 1
