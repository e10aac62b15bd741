#!/usr/bin/env bash
# Copies gitleaks' default rules (config/gitleaks.toml) and licence from the gitleaks version
# go.mod requires into pkg/redact, byte for byte. To move to a newer gitleaks:
#   go get github.com/zricethezav/gitleaks/v8@vX.Y.Z && scripts/update-gitleaks-rules.sh
# then set redact.GitleaksVersion and run `go test ./pkg/redact` (TestRulesAreGitleaks,
# TestSameAsGitleaks and TestWindowsFindTheSameMatches say whether the copy and our scan
# still agree with gitleaks).
set -euo pipefail
repo=$(cd "$(dirname "${BASH_SOURCE[0]}")/.." && pwd -P)
cd "$repo"
dir=$(go list -m -f '{{.Dir}}' github.com/zricethezav/gitleaks/v8)
[ -n "$dir" ] && [ -f "$dir/config/gitleaks.toml" ] || {
	echo "update-gitleaks-rules.sh: error: no gitleaks module (go mod download github.com/zricethezav/gitleaks/v8)" >&2
	exit 1
}
install -m 0644 "$dir/config/gitleaks.toml" pkg/redact/gitleaks.toml
install -m 0644 "$dir/LICENSE" pkg/redact/GITLEAKS-LICENSE
echo "update-gitleaks-rules.sh: copied the rules of $(go list -m -f '{{.Version}}' github.com/zricethezav/gitleaks/v8)"
