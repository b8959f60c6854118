#!/usr/bin/env bash
# The Live2D sample for the web face (idempotent): npm installs the pinned packages of
# scripts/live2d/package-lock.json into <venv>/live2d/node_modules (npm ci, no install scripts),
# then assembles <venv>/live2d/sample, the folder `fay-ros web --live2d sample` serves:
#   live2d.min.js    the Cubism 2 core (Live2D Inc.'s, as bundled by live2d-widget 3.1.4)
#   pixi.min.js      pixi.js 6.5.10
#   cubism2.min.js   pixi-live2d-display 0.4.0, Cubism 2 build
#   shizuku/         the shizuku sample model (live2d-widget-model-shizuku 1.0.5)
# None of it is committed (the core and the model are Live2D Inc.'s; licences: web/README.md).
# FAY_LIVE2D=skip skips this step (the Live2D tests then skip too); the SVG face needs none of it.
set -euo pipefail
VENV="${1:?usage: live2d.sh VENV}"
ROOT="$(cd "$(dirname "${BASH_SOURCE[0]}")/../.." && pwd)"
SRC="$ROOT/scripts/live2d"
DEST="$VENV/live2d"
STAMP="$VENV/.fay-stamps/live2d"

if [ "${FAY_LIVE2D:-}" = "skip" ]; then
  echo "    live2d: FAY_LIVE2D=skip, not installed"
  exit 0
fi
hash=$(cat "$SRC/package.json" "$SRC/package-lock.json" "${BASH_SOURCE[0]}" | sha256sum | cut -c1-16)
if [ -f "$STAMP" ] && [ "$(cat "$STAMP")" = "$hash" ] && [ -f "$DEST/sample/shizuku/shizuku.model.json" ]; then
  echo "    live2d: sample up to date, skipped"
  exit 0
fi

if ! command -v npm >/dev/null; then
  # Debian's nodejs (scripts/apt-packages.txt) comes without npm; NodeSource's includes it.
  echo "    live2d: installing npm (apt)"
  SUDO=""; [ "$(id -u)" -eq 0 ] || SUDO="sudo"
  DEBIAN_FRONTEND=noninteractive $SUDO apt-get install -y -qq --no-install-recommends npm \
    || { echo "live2d: npm is missing and apt-get install npm failed" >&2; exit 1; }
fi

echo "    live2d: npm ci (pinned: scripts/live2d/package-lock.json) into $DEST"
mkdir -p "$DEST"
cp "$SRC/package.json" "$SRC/package-lock.json" "$DEST/"
# --ignore-scripts: the sample needs no build, and no package's install script runs here.
( cd "$DEST" && npm ci --ignore-scripts --no-audit --no-fund --loglevel=error ) \
  || { echo "live2d: npm ci failed (is https://registry.npmjs.org reachable? FAY_LIVE2D=skip skips this step)" >&2; exit 1; }

modules="$DEST/node_modules"
rm -rf "$DEST/sample.new"
mkdir -p "$DEST/sample.new"
# Copies, not links: the page server serves only files that really lie inside the folder.
# live2d-widget ships Live2D's Cubism 2 core as an ES module (live2d.core.js) whose code only
# parses as a classic script (duplicate top-level functions); turn its closing export list
# back into the globals Live2D's own live2d.min.js defines, which pixi-live2d-display expects.
node - "$modules/live2d-widget/src/lib/live2d.core.js" "$DEST/sample.new/live2d.min.js" <<'NODE'
const fs = require('fs');
const [src, dest] = process.argv.slice(2);
const text = fs.readFileSync(src, 'utf8');
const match = /export\s*\{([^}]*)\}\s*;?\s*$/.exec(text);
if (!match) { console.error(`live2d: no closing export list in ${src}`); process.exit(1); }
const globals = match[1].split(',').map((s) => s.trim()).filter(Boolean).map((entry) => {
  const [local, name] = entry.split(/\s+as\s+/);
  return `window.${name || local} = ${local};`;
});
fs.writeFileSync(dest, text.slice(0, match.index) + globals.join('\n') + '\n');
NODE
cp "$modules/pixi.js/dist/browser/pixi.min.js" "$DEST/sample.new/pixi.min.js"
cp "$modules/pixi-live2d-display/dist/cubism2.min.js" "$DEST/sample.new/cubism2.min.js"
cp -r "$modules/live2d-widget-model-shizuku/assets" "$DEST/sample.new/shizuku"
cat > "$DEST/sample.new/README.txt" <<'EOF'
Installed by fay_ros scripts/post_setup.d/live2d.sh from npm; not part of fay_ros and never
committed. live2d.min.js (Live2D Cubism 2 SDK core) and the shizuku model are (c) Live2D Inc.
and come under Live2D's licences; see web/README.md "The Live2D sample" for every licence.
EOF
rm -rf "$DEST/sample"
mv "$DEST/sample.new" "$DEST/sample"
mkdir -p "$(dirname "$STAMP")"
echo "$hash" > "$STAMP"
echo "    live2d: sample ready in $DEST/sample"
