#!/bin/sh
# The image's entrypoint: reads the keys that the compose `keys` service keeps in its volume
# (LEADGATE_KEYS_FILE, default /keys/leadgate.env; scripts/keys.mjs writes it) for each key the
# environment leaves unset or empty, then runs the command (the API, a worker, or the migration).
# Without that file, or with every key set in the environment, it changes nothing. It prints nothing:
# the keys stay out of container logs.
set -eu
keys_file="${LEADGATE_KEYS_FILE:-/keys/leadgate.env}"

if [ -r "$keys_file" ]; then
  for name in LEADGATE_ENCRYPTION_KEY LEADGATE_BOOTSTRAP_OPERATOR_KEY METRICS_TOKEN; do
    if [ -z "$(printenv "$name" || true)" ]; then
      value="$(sed -n "s/^$name=//p" "$keys_file" | tail -n 1)"
      if [ -n "$value" ]; then export "$name=$value"; fi
    fi
  done
fi

exec "$@"
