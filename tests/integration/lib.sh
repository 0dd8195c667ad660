# SPDX-License-Identifier: GPL-2.0-only
# Shared by the integration tests: the lab (scripts/lab.sh) and assertions.
# Each test ends with "NAME: N passed, M failed" and exits non-zero on any
# failure; 77 means skipped.

if [ "$(id -u)" -ne 0 ]; then
	echo "$(basename "$0"): needs root; skipped"
	exit 77
fi
source "$(dirname "${BASH_SOURCE[0]}")/../../scripts/lab.sh"
lab_enter "$0" "$@"
trap lab_down EXIT

source "$(dirname "${BASH_SOURCE[0]}")/assert.sh"
