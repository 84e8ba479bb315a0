#!/bin/sh
# autogen.sh: generate the build system from a git checkout.
set -e
cd "$(dirname "$0")"
autoreconf --force --install --warnings=all
