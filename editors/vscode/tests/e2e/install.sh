#!/usr/bin/env bash
# Installs code-server (VS Code 1.100 served to a browser) and puppeteer-core for the VS Code
# end-to-end test, from the npm registry only. code-server's install builds VS Code's native
# modules and fetches ripgrep from GitHub, which CI cannot reach; the machine's own ripgrep
# (Debian's package) goes where that download would be cached, and the native modules build
# against the machine's Node headers (Debian/NodeSource's nodejs ships them in /usr/include).
# Needs: chromium, ripgrep, pkg-config, libkrb5-dev, libx11-dev, libxkbfile-dev,
# libsecret-1-dev and a C++ compiler (.ci/run installs the missing ones).
set -euo pipefail
cd "$(dirname "$0")"

if [ -x node_modules/.bin/code-server ] && [ -d node_modules/puppeteer-core ]; then
  exit 0
fi
rg=$(command -v rg) || { echo "install.sh: ripgrep (rg) is missing: apt-get install ripgrep" >&2; exit 1; }

# @vscode/ripgrep 1.15.11 (what code-server 4.100.0's VS Code pins) looks for this archive in
# its cache under the temporary directory before it asks GitHub.
case "$(uname -m)" in
  x86_64) target=x86_64-unknown-linux-musl ;;
  aarch64) target=aarch64-unknown-linux-musl ;;
  *) echo "install.sh: no ripgrep target for $(uname -m)" >&2; exit 1 ;;
esac
tmp=$(mktemp -d)
trap 'rm -rf "$tmp"' EXIT
mkdir -p "$tmp/vscode-ripgrep-cache-1.15.11" "$tmp/rg"
cp "$rg" "$tmp/rg/rg"
tar czf "$tmp/vscode-ripgrep-cache-1.15.11/ripgrep-v13.0.0-10-$target.tar.gz" -C "$tmp/rg" rg

# The headers of the Node that runs the build, beside its binary (/usr/include/node for
# Debian's and NodeSource's packages), so that node-gyp need not download them.
nodedir=$(dirname "$(dirname "$(readlink -f "$(command -v node)")")")
[ -f "$nodedir/include/node/node.h" ] || { echo "install.sh: no Node headers in $nodedir/include/node" >&2; exit 1; }

# npm_config_yes: a nested `npx node-gyp` would otherwise wait for a yes on a closed stdin;
# unsafe_perm: code-server's postinstall refuses to run as root without it.
TMPDIR="$tmp" npm_config_yes=true npm_config_unsafe_perm=true npm_config_nodedir="$nodedir" \
  npm ci --no-audit --no-fund < /dev/null
