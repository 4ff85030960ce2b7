#!/usr/bin/env bash
# Builds the linux-x64 VSIX: the extension plus the aoti-lsp server and its
# dependencies (pygls, tree-sitter, libcst: binary wheels) for CPython 3.11 in
# bundled/libs. The extension runs it with an interpreter it finds
# (Python extension's, or python3) when no environment provides aoti_lsp.
#
# bundled/libs is a build output: never committed.
set -euo pipefail
here="$(cd "$(dirname "$0")/.." && pwd)"
repo="$(cd "$here/.." && pwd)"
python="${PYTHON:-python3}"
cd "$here"
# pip without the noise of find-links folders that some machines' pip.conf names but lack
pip() { "$python" -m pip "$@" 2> >(grep -v '^WARNING: Location' >&2); }

rm -rf bundled/libs
mkdir -p bundled/libs
wheels="$(mktemp -d)"
trap 'rm -rf "$wheels"' EXIT

# The server itself is pure Python: build its wheel from the repository.
pip wheel --quiet --no-deps --wheel-dir "$wheels" "$repo"
# Its dependencies for the target platform, whatever the build machine is.
pip install --quiet --no-compile --target bundled/libs \
    --implementation cp --python-version 3.11 --abi cp311 \
    --platform manylinux_2_28_x86_64 --platform manylinux_2_17_x86_64 --platform manylinux2014_x86_64 \
    --only-binary=:all: "$wheels"/aoti_lsp-*.whl
rm -rf bundled/libs/bin
# Byte-compiled for CPython 3.11, checked by nothing (unchecked-hash: the .vsix does not keep
# the sources' mtimes): without it the first start after an install compiles every module
# (lsprotocol's types alone take ~0.5 s), before the first squiggle.
if "$python" -c 'import sys; sys.exit(sys.implementation.name != "cpython" or sys.version_info[:2] != (3, 11))'; then
    "$python" -m compileall -q -j 0 --invalidation-mode unchecked-hash -x "/tests?/" bundled/libs
else
    echo "warning: $python is not CPython 3.11: bundled/libs ships without .pyc files (a slower first start)" >&2
fi

version="$(node -p "require('./package.json').version")"
npm run build
npx vsce package --no-dependencies --target linux-x64 \
    --ignoreFile .vscodeignore-linux-x64 --out "aoti-lsp-linux-x64-${version}.vsix"
