#!/bin/sh
# meson install script: copies the example configuration to the path the
# systemd unit reads, unless a configuration is already there (a reinstall must
# not overwrite the operator's file). Honours DESTDIR like meson install does.
#   install-config.sh EXAMPLE TARGET
set -eu
src="${DESTDIR:-}$1"
dst="${DESTDIR:-}$2"
if [ -e "$dst" ]; then
  echo "install-config: keeping the existing $2"
  exit 0
fi
mkdir -p "$(dirname "$dst")"
install -m 0644 "$src" "$dst"
echo "install-config: example configuration installed as $2"
