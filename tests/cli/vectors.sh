#!/usr/bin/env bash
# wks(1) against every keystore of shared/vectors/ (see check_vectors.py).
# usage: vectors.sh WKS_BINARY SHARED_DIR
set -euo pipefail
if [ $# -ne 2 ]; then
	echo "usage: $0 WKS_BINARY SHARED_DIR" >&2
	exit 2
fi
exec python3 "$(dirname "$0")/check_vectors.py" "$1" "$2"
