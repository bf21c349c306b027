#!/usr/bin/env bash
# Installs the real CLIs that run.sh drives, from the npm registry, into a cache dir outside the repository:
#   bash e2e/realclients/install.sh            # the versions last verified (below; .ci/run installs these)
#   CLAUDE_CODE_VERSION=latest CODEX_VERSION=latest GEMINI_CLI_VERSION=latest bash e2e/realclients/install.sh
# Running it again with the same versions changes nothing (npm finds them installed).
# TOLLGATE_CLI_DIR (default ~/.cache/tollgate-clis) is where run.sh looks for them.
set -euo pipefail
dir=${TOLLGATE_CLI_DIR:-$HOME/.cache/tollgate-clis}
mkdir -p "$dir"
pkgs=(
	"@anthropic-ai/claude-code@${CLAUDE_CODE_VERSION:-2.1.337}"
	"@openai/codex@${CODEX_VERSION:-0.171.0}"
	"@google/gemini-cli@${GEMINI_CLI_VERSION:-0.61.0}"
)
echo "installing into $dir: ${pkgs[*]}"
# Claude Code's postinstall copies its native binary over a stub; Codex ships its binary as an optional
# dependency: so neither --ignore-scripts nor --omit=optional.
npm install --prefix "$dir" --no-audit --no-fund "${pkgs[@]}"
bin=$dir/node_modules/.bin
# An npm that blocks install scripts leaves Claude Code's stub in place: run its postinstall by hand.
if ! HOME=/nonexistent "$bin/claude" --version >/dev/null 2>&1 && [[ -f $dir/node_modules/@anthropic-ai/claude-code/install.cjs ]]; then
	(cd "$dir/node_modules/@anthropic-ai/claude-code" && node install.cjs)
fi
bad=0
vhome=$(mktemp -d) # the CLIs write config dirs into HOME even for --version
trap 'rm -rf "$vhome"' EXIT
for c in claude codex gemini; do
	if v=$(HOME=$vhome CODEX_HOME=$vhome/.codex "$bin/$c" --version 2>/dev/null); then
		printf '%-7s %s\n' "$c" "$(head -n 1 <<<"$v")"
	else
		printf '%-7s NOT WORKING (%s --version failed)\n' "$c" "$bin/$c"
		bad=1
	fi
done
exit $bad
