#!/bin/sh
# A cicc that warns about one option: runs NVIDIA's cicc ($REAL_CICC) and,
# when -disable-inlining is on its command line, prints a warning as cicc
# would about an option it ignores. For tuner-unhonoured-cicc.test.
for a in "$@"; do
  if [ "$a" = "-disable-inlining" ]; then
    echo "cicc: warning: option -disable-inlining is ignored for this unit" >&2
  fi
done
exec "$REAL_CICC" "$@"
