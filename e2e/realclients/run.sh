#!/usr/bin/env bash
# Real command-line clients against a local Tollgate whose channels point at the relaytest fake upstream.
#
#   bash e2e/realclients/install.sh     # once: npm-installs the CLIs into $TOLLGATE_CLI_DIR
#   bash e2e/realclients/run.sh         # or: make test-clients
#
# Clients and the channel that serves each (REALCLIENTS_MODE=cross, the default):
#   claude  (Claude Code, `claude -p`)        /v1/messages             -> an openai channel     (anthropic->openai)
#   codex   (Codex CLI, `codex exec`)         /v1/responses            -> an anthropic channel  (responses->anthropic)
#   gemini  (Gemini CLI, `gemini -p`)         /v1beta/models/...:stream -> an openai channel    (gemini->openai)
# REALCLIENTS_MODE=same serves claude from an anthropic channel and codex from an openai channel (no
# translation; gemini has no same-protocol upstream type and stays on an openai channel).
#
# Each client must exit 0, print the fake's answer, and leave at least one success row in the usage log for
# its own key with tokens > 0, cost > 0 and the expected client/upstream protocols.
#
# Environment:
#   TOLLGATE_CLI_DIR      where install.sh put the CLIs (default ~/.cache/tollgate-clis); absent -> SKIPPED
#   TOLLGATE_BIN          a prebuilt tollgate binary (default: go build into the run's temp dir)
#   REALCLIENTS_MODE      cross (default) | same
#   REALCLIENTS_ONLY      space-separated subset of: claude codex gemini
#   REALCLIENTS_TIMEOUT   seconds per CLI run (default 120)
#   REALCLIENTS_KEEP=1    keep the temp dir (server logs, CLI outputs) and print its path
#   REALCLIENTS_VERBOSE=1 print every CLI's stdout/stderr and HTTP exchanges, not only on failure
#   REALCLIENTS_TAP=0     no recording proxies (tap.mjs) between the CLIs, Tollgate and the fake upstream
#   REALCLIENTS_SRC=head  build Tollgate from the last commit (git archive HEAD) instead of the working tree
#   REALCLIENTS_CODEX_PLAIN=1  Codex without its hosted web_search tool and multi-agent "namespace" tool
#                         (the default is Codex as shipped: the translation drops web_search, naming it in
#                         X-Tollgate-Dropped, and flattens the namespace)
#   REALCLIENTS_GEMINI_PLAIN=1 Gemini CLI without its default generationConfig.topK (64) (dropped likewise
#                         for chat completions upstreams)
# A failed run keeps its temp dir (minus binaries) and prints its path: CLI outputs, server logs, and the
# recorded exchanges (client.jsonl: CLI -> Tollgate; upstream.jsonl: Tollgate -> fake upstream).
set -uo pipefail

HERE=$(cd "$(dirname "${BASH_SOURCE[0]}")" && pwd)
REPO=$(cd "$HERE/../.." && pwd)
CLI_DIR=${TOLLGATE_CLI_DIR:-$HOME/.cache/tollgate-clis}
MODE=${REALCLIENTS_MODE:-cross}
ONLY=${REALCLIENTS_ONLY:-claude codex gemini}
CLI_TIMEOUT=${REALCLIENTS_TIMEOUT:-120}
KEEP=${REALCLIENTS_KEEP:-0}
VERBOSE=${REALCLIENTS_VERBOSE:-0}
TAP=${REALCLIENTS_TAP:-1}
SRC=${REALCLIENTS_SRC:-tree}
GO=${GO:-go}

# The fake upstream's answer: relaytest.DefaultText cut into -chunks words (its 6 words whole at 6), with the
# default usage of 10 prompt + 20 completion tokens.
ANSWER="Hello from the relaytest fake upstream."
FAKE_CHUNKS=6

# Models each client asks for. Claude Code also calls a "small fast" model; it is pointed at the same one.
CLAUDE_MODEL=claude-sonnet-4-5
CODEX_MODEL=gpt-4o-mini
GEMINI_MODEL=gemini-2.5-flash

case "$MODE" in
cross) CLAUDE_UP=openai CODEX_UP=anthropic ;;
same) CLAUDE_UP=anthropic CODEX_UP=openai ;;
*)
	echo "REALCLIENTS_MODE must be cross or same, not $MODE" >&2
	exit 2
	;;
esac
GEMINI_UP=openai

declare -A BIN_OF=([claude]=claude [codex]=codex [gemini]=gemini)
declare -A RESULT REASON
CLIENTS=()
for c in $ONLY; do
	[[ -n ${BIN_OF[$c]:-} ]] || {
		echo "unknown client in REALCLIENTS_ONLY: $c" >&2
		exit 2
	}
	CLIENTS+=("$c")
done

summary() {
	echo
	echo "== real clients summary (mode $MODE) =="
	local c fail=0
	for c in "${CLIENTS[@]}"; do
		printf '%-8s %-7s %s\n' "$c" "${RESULT[$c]:-FAIL}" "${REASON[$c]:-did not run}"
		[[ ${RESULT[$c]:-FAIL} == FAIL ]] && fail=1
	done
	return $fail
}

# --- which CLIs are installed -------------------------------------------------------------------------------
BINDIR=$CLI_DIR/node_modules/.bin
RUNNABLE=()
for c in "${CLIENTS[@]}"; do
	if [[ -x $BINDIR/${BIN_OF[$c]} ]]; then
		RUNNABLE+=("$c")
	else
		RESULT[$c]=SKIPPED REASON[$c]="not installed in $CLI_DIR (run: bash e2e/realclients/install.sh)"
	fi
done
if ((${#RUNNABLE[@]} == 0)); then
	echo "SKIPPED: no real CLI installed under $CLI_DIR; run bash e2e/realclients/install.sh first"
	summary
	exit 0
fi
for t in curl jq node timeout; do
	command -v "$t" >/dev/null || {
		echo "FAIL: $t is required" >&2
		exit 1
	}
done

# --- isolation: one temp dir, our own processes, killed on exit ------------------------------------------------
WORK=$(mktemp -d "${TMPDIR:-/tmp}/tollgate-realclients.XXXXXX")
PIDS=()
FAILED=0
cleanup() {
	local p
	for p in "${PIDS[@]}"; do kill "$p" 2>/dev/null; done
	for p in "${PIDS[@]}"; do wait "$p" 2>/dev/null; done
	if [[ $KEEP == 1 ]]; then
		echo "kept: $WORK"
	elif [[ $FAILED == 1 ]]; then
		rm -rf "$WORK/bin" "$WORK/src"
		echo "kept for inspection: $WORK"
	else
		rm -rf "$WORK"
	fi
}
trap cleanup EXIT
trap 'exit 130' INT TERM

log() { printf '[realclients] %s\n' "$*"; }
die() {
	FAILED=1
	echo "FAIL: $*" >&2
	for f in "$WORK"/fake.log "$WORK"/tollgate.log; do
		[[ -f $f ]] && {
			echo "--- tail $f" >&2
			tail -n 30 "$f" >&2
		}
	done
	local c
	for c in "${RUNNABLE[@]}"; do
		[[ -n ${RESULT[$c]:-} ]] || RESULT[$c]=FAIL REASON[$c]="harness: ${1%%$'\n'*}"
	done
	summary
	exit 1
}

free_port() {
	node -e 'const s=require("net").createServer();s.listen(0,"127.0.0.1",()=>{console.log(s.address().port);s.close()})'
}

wait_http() { # url seconds [pid that must stay alive]
	local i
	for ((i = 0; i < $2 * 10; i++)); do
		curl -fsS -o /dev/null "$1" 2>/dev/null && return 0
		[[ -n ${3:-} ]] && ! kill -0 "$3" 2>/dev/null && return 1
		sleep 0.1
	done
	return 1
}

# --- build and start the fake upstream and Tollgate -----------------------------------------------------------
mkdir -p "$WORK/bin" "$WORK/data"
if [[ -n ${TOLLGATE_BIN:-} ]]; then
	log "building fakeupstream into $WORK/bin (tollgate: $TOLLGATE_BIN)"
else
	log "building fakeupstream and tollgate (source: $SRC) into $WORK/bin"
fi
(cd "$REPO" && $GO build -o "$WORK/bin/fakeupstream" ./relay/relaytest/fakeupstream) >"$WORK/build.log" 2>&1 ||
	die "go build fakeupstream: $(cat "$WORK/build.log")"
if [[ -n ${TOLLGATE_BIN:-} ]]; then
	TG=$TOLLGATE_BIN
else
	TG=$WORK/bin/tollgate
	srcdir=$REPO
	if [[ $SRC == head ]]; then # the last commit, read-only: git archive writes nothing in the repository
		srcdir=$WORK/src
		mkdir -p "$srcdir"
		git -C "$REPO" archive HEAD | tar -x -C "$srcdir" || die "git archive HEAD"
	fi
	(cd "$srcdir" && CGO_ENABLED=0 $GO build -o "$TG" .) >>"$WORK/build.log" 2>&1 ||
		die "go build tollgate ($SRC): $(cat "$WORK/build.log")"
fi

FPORT=$(free_port)
"$WORK/bin/fakeupstream" -addr "127.0.0.1:$FPORT" -chunks "$FAKE_CHUNKS" >"$WORK/fake.log" 2>&1 &
PIDS+=($!)
FAKE=http://127.0.0.1:$FPORT
wait_http "$FAKE/v1/models" 15 "${PIDS[-1]}" || die "fake upstream did not start on $FAKE"

TPORT=$(free_port)
ROOT_PASSWORD='realclients-Root-Passw0rd-7'
(
	cd "$WORK" &&
		exec env -u SQL_DSN -u REDIS_URL -u METRICS_ADDR -u TRUSTED_PROXIES \
			PORT="$TPORT" DATA_DIR="$WORK/data" SQLITE_PATH="$WORK/data/tollgate.db" ROOT_PASSWORD="$ROOT_PASSWORD" \
			SECRET_KEY=realclients-secret-key-0123456789abcdefghijkl LOG_LEVEL=debug "$TG"
) >"$WORK/tollgate.log" 2>&1 &
PIDS+=($!)
TGURL=http://127.0.0.1:$TPORT
wait_http "$TGURL/readyz" 30 "${PIDS[-1]}" || die "tollgate did not become ready on $TGURL"
# The channels and the CLIs talk through recording proxies (see tap.mjs) unless REALCLIENTS_TAP=0.
UPURL=$FAKE CLIURL=$TGURL
touch "$WORK/client.jsonl" "$WORK/upstream.jsonl"
if [[ $TAP == 1 ]]; then
	p=$(free_port)
	node "$HERE/tap.mjs" "$p" "$FAKE" "$WORK/upstream.jsonl" >"$WORK/tap-upstream.log" 2>&1 &
	PIDS+=($!)
	UPURL=http://127.0.0.1:$p
	p=$(free_port)
	node "$HERE/tap.mjs" "$p" "$TGURL" "$WORK/client.jsonl" >"$WORK/tap-client.log" 2>&1 &
	PIDS+=($!)
	CLIURL=http://127.0.0.1:$p
	wait_http "$UPURL/v1/models" 15 || die "upstream tap did not start"
	wait_http "$CLIURL/readyz" 15 || die "client tap did not start"
	: >"$WORK/upstream.jsonl"
	: >"$WORK/client.jsonl"
fi
log "fake upstream $FAKE, tollgate $TGURL ($TG); CLIs call $CLIURL, channels call $UPURL"

# --- console API helpers ----------------------------------------------------------------------------------------
api() { # method path [json] — as $JWT; prints the body, fails on non-2xx
	local out code
	out=$(curl -sS -X "$1" "$TGURL$2" -H "Authorization: Bearer $JWT" -H 'Content-Type: application/json' \
		${3:+--data "$3"} -w '\n%{http_code}') || return 1
	code=${out##*$'\n'}
	out=${out%$'\n'*}
	if [[ $code != 2* ]]; then
		echo "$1 $2 -> $code $out" >&2
		return 1
	fi
	printf '%s' "$out"
}
login() { # user password -> jwt
	curl -sS -X POST "$TGURL/api/auth/login" -H 'Content-Type: application/json' \
		--data "$(jq -nc --arg u "$1" --arg p "$2" '{username:$u,password:$p}')" | jq -r '.token // empty'
}

JWT=$(login root "$ROOT_PASSWORD")
[[ -n $JWT ]] || die "root login failed"
ROOT_JWT=$JWT

channel() { # type name model...
	local type=$1 name=$2
	shift 2
	local key=sk-upstream-$name-0001
	[[ $type == anthropic ]] && key=sk-ant-upstream-$name-0001
	api POST /api/admin/channels "$(jq -nc --arg t "$type" --arg n "$name" --arg b "$UPURL" --arg k "$key" \
		--args '{type:$t,name:$n,base_url:$b,keys:[$k],models:$ARGS.positional,groups:["default"]}' "$@")" |
		jq -r .id
}

# One channel per upstream type, holding exactly the models whose clients it serves in this mode, so a
# client's model is reachable only through the intended upstream protocol.
declare -A MODELS_ON=([openai]="" [anthropic]="")
MODELS_ON[$CLAUDE_UP]+=" $CLAUDE_MODEL"
MODELS_ON[$CODEX_UP]+=" $CODEX_MODEL"
MODELS_ON[$GEMINI_UP]+=" $GEMINI_MODEL"
for t in openai anthropic; do
	[[ -n ${MODELS_ON[$t]// /} ]] || continue
	# shellcheck disable=SC2086
	id=$(channel "$t" "fake-$t" ${MODELS_ON[$t]}) || die "create $t channel"
	log "channel #$id type $t base_url $UPURL models:${MODELS_ON[$t]}"
done
api PUT /api/admin/pricing "$(jq -nc --arg a "$CLAUDE_MODEL" --arg b "$CODEX_MODEL" --arg c "$GEMINI_MODEL" \
	'[$a,$b,$c] | map({model: ., input: "3", output: "15", cache_read: "0.3", cache_write: "3.75", per_call: "0"})')" \
	>/dev/null || die "put pricing"

USER_PASSWORD='Tg-e2e-Passw0rd-9' # must not contain the username
reg=$(curl -sS -X POST "$TGURL/api/auth/register" -H 'Content-Type: application/json' \
	--data "$(jq -nc --arg p "$USER_PASSWORD" '{username:"realclients",password:$p}')")
uid=$(jq -r '.user.id // empty' <<<"$reg")
[[ -n $uid ]] || die "register user realclients: $reg"
api POST "/api/admin/users/$uid/quota" '{"delta":100000000,"reason":"realclients"}' >/dev/null || die "top up"
JWT=$(login realclients "$USER_PASSWORD")
[[ -n $JWT ]] || die "login as realclients"
declare -A KEY TOKEN_ID
for c in "${RUNNABLE[@]}"; do
	tok=$(api POST /api/tokens "$(jq -nc --arg n "$c" '{name:$n}')") || die "create key for $c"
	KEY[$c]=$(jq -r .key <<<"$tok")
	TOKEN_ID[$c]=$(jq -r .id <<<"$tok")
done
JWT=$ROOT_JWT

# --- clients ------------------------------------------------------------------------------------------------------
export PATH="$BINDIR:$PATH"
# Common to every CLI: no proxies, no colour, no update checks; HOME is the client's own temp dir.
base_env() { # home -> BASE_ENV, an env -i command line
	BASE_ENV=(env -i PATH="$PATH" HOME="$1" USER="${USER:-tester}" LANG=C.UTF-8 TERM=dumb NO_COLOR=1 CI=1
		TMPDIR="$1/tmp" XDG_CONFIG_HOME="$1/.config" XDG_CACHE_HOME="$1/.cache" XDG_DATA_HOME="$1/.local/share"
		NO_PROXY='*' no_proxy='*')
}

run_claude() { # home
	local h=$1
	mkdir -p "$h/tmp" "$h/work"
	# Onboarding and the API-key approval are interactive-only; -p needs neither. Say they are done anyway so
	# no version of the CLI stops to ask.
	jq -n '{hasCompletedOnboarding: true, bypassPermissionsModeAccepted: true, autoUpdates: false,
		projects: {}}' >"$h/.claude.json"
	base_env "$h"
	(cd "$h/work" && "${BASE_ENV[@]}" \
		ANTHROPIC_BASE_URL="$CLIURL" ANTHROPIC_AUTH_TOKEN="${KEY[claude]}" \
		ANTHROPIC_MODEL="$CLAUDE_MODEL" ANTHROPIC_SMALL_FAST_MODEL="$CLAUDE_MODEL" \
		ANTHROPIC_DEFAULT_HAIKU_MODEL="$CLAUDE_MODEL" ANTHROPIC_DEFAULT_SONNET_MODEL="$CLAUDE_MODEL" \
		ANTHROPIC_DEFAULT_OPUS_MODEL="$CLAUDE_MODEL" \
		CLAUDE_CODE_DISABLE_NONESSENTIAL_TRAFFIC=1 DISABLE_AUTOUPDATER=1 DISABLE_TELEMETRY=1 \
		DISABLE_ERROR_REPORTING=1 DISABLE_BUG_COMMAND=1 CLAUDE_CODE_IDE_SKIP_AUTO_INSTALL=1 \
		timeout -k 5 "$CLI_TIMEOUT" claude -p "say hi" </dev/null)
}

run_codex() { # home
	local h=$1
	mkdir -p "$h/tmp" "$h/work" "$h/codex"
	cat >"$h/codex/config.toml" <<EOF
model = "$CODEX_MODEL"
model_provider = "tollgate"
check_for_update_on_startup = false

[model_providers.tollgate]
name = "Tollgate"
base_url = "$CLIURL/v1"
env_key = "TOLLGATE_API_KEY"
wire_api = "responses"
request_max_retries = 0
stream_max_retries = 0

[analytics]
enabled = false
EOF
	if [[ ${REALCLIENTS_CODEX_PLAIN:-0} == 1 ]]; then
		sed -i '1i web_search = "disabled"' "$h/codex/config.toml"
		printf '\n[features]\nmulti_agent = false\n' >>"$h/codex/config.toml"
	fi
	base_env "$h"
	(cd "$h/work" && "${BASE_ENV[@]}" CODEX_HOME="$h/codex" TOLLGATE_API_KEY="${KEY[codex]}" \
		timeout -k 5 "$CLI_TIMEOUT" codex exec --skip-git-repo-check --sandbox read-only "say hi" </dev/null)
}

run_gemini() { # home
	local h=$1 plain=null
	mkdir -p "$h/tmp" "$h/work" "$h/.gemini"
	# The model's own alias without topK, as the CLI's "chat-base" alias has it but for top_k.
	[[ ${REALCLIENTS_GEMINI_PLAIN:-0} == 1 ]] && plain=$(jq -nc --arg m "$GEMINI_MODEL" '{customAliases: {($m): {
		extends: "base", modelConfig: {model: $m, generateContentConfig: {temperature: 1, topP: 0.95,
		thinkingConfig: {includeThoughts: true, thinkingBudget: 8192}}}}}}')
	jq -n --argjson plain "$plain" '{security: {auth: {selectedType: "gemini-api-key"}},
		general: {disableAutoUpdate: true, disableUpdateNag: true}, privacy: {usageStatisticsEnabled: false},
		telemetry: {enabled: false}} + (if $plain then {modelConfigs: $plain} else {} end)' >"$h/.gemini/settings.json"
	base_env "$h"
	(cd "$h/work" && "${BASE_ENV[@]}" GEMINI_API_KEY="${KEY[gemini]}" GOOGLE_GEMINI_BASE_URL="$CLIURL" \
		GEMINI_CLI_NO_RELAUNCH=true GEMINI_CLI_TRUST_WORKSPACE=true \
		timeout -k 5 "$CLI_TIMEOUT" gemini -m "$GEMINI_MODEL" -p "say hi" </dev/null)
}

declare -A PROTO=([claude]="anthropic>$CLAUDE_UP" [codex]="responses>$CODEX_UP" [gemini]="gemini>$GEMINI_UP")
[[ $CODEX_UP == openai ]] && PROTO[codex]="responses>responses" # an openai channel is sent /v1/responses as is

# Usage rows of one key (newest first): the writer is batched, so poll until a good row shows or time is up.
rows_of() { api GET "/api/admin/logs?token_id=$1&limit=50"; }
fmt_rows() {
	jq -r '.items[] | "  log #\(.id) \(.endpoint) model=\(.model) upstream_model=\(.upstream_model) stream=\(.stream) status=\(.status)/\(.http_status) tokens=\(.prompt_tokens)+\(.completion_tokens) cost=\(.cost) protocols=\(.client_protocol)>\(.upstream_protocol) channel=\(.channel_name)\(if .status != "success" then " class=\(.error_class) code=\(.error_code) error=\(.error|tostring|.[0:300])" else "" end)"'
}

# One line per recorded exchange; with "full", also the request's shape (top-level fields, long values
# summarised; the whole body is in <client>/client.jsonl) and the start of the answer.
fmt_exchanges() { # full|short
	jq -r --arg full "$1" '
		def brief: if type == "array" then "[\(length)]"
			elif type == "object" then (if (tojson | length) <= 240 then tojson else "{" + (keys | join(",")) + "}" end)
			elif type == "string" then (tojson | if length <= 80 then . else .[0:80] + "…\"" end)
			else tojson end;
		def shape: if type == "object" then "{" + (to_entries | map("\(.key): \(.value | brief)") | join(", ")) + "}"
			else tojson | .[0:800] end;
		"    \(.method) \(.url) -> \(.status)\(if .error then " (" + .error + ")" else "" end) \(.ms)ms"
		+ (if $full == "full" then
			(if .request == "" then "" else "\n      request: " + (.request | (try (fromjson | shape) catch .[0:800])) end)
			+ "\n      answer:  " + (.response | gsub("\n"; "\\n") | .[0:1200])
		else "" end)'
}

check_client() { # name
	local c=$1 h=$WORK/$1 rc out from cfrom ufrom rows good i detail=short
	mkdir -p "$h"
	from=$(wc -l <"$WORK/tollgate.log")
	cfrom=$(wc -l <"$WORK/client.jsonl")
	ufrom=$(wc -l <"$WORK/upstream.jsonl")
	local ver
	mkdir -p "$h/.vhome"
	ver=$(cd "$h" && env -i PATH="$PATH" HOME="$h/.vhome" CODEX_HOME="$h/.vhome" timeout 30 "${BIN_OF[$c]}" --version 2>/dev/null | head -n 1)
	rm -rf "$h/.vhome"
	log "running $c ${ver:-(version unknown)} (key #${TOKEN_ID[$c]}, expects ${PROTO[$c]})"
	"run_$c" "$h" >"$h/stdout" 2>"$h/stderr"
	rc=$?
	out=$(cat "$h/stdout")
	good=""
	for ((i = 0; i < 30; i++)); do
		rows=$(rows_of "${TOKEN_ID[$c]}") || rows='{"items":[]}'
		good=$(jq -r --arg p "${PROTO[$c]}" '[.items[] | select(.status == "success" and .prompt_tokens + .completion_tokens > 0
			and .cost > 0 and "\(.client_protocol)>\(.upstream_protocol)" == $p)] | length' <<<"$rows")
		[[ $good != 0 ]] && break
		sleep 0.3
	done
	tail -n +"$((cfrom + 1))" "$WORK/client.jsonl" >"$h/client.jsonl"
	tail -n +"$((ufrom + 1))" "$WORK/upstream.jsonl" >"$h/upstream.jsonl"
	tail -n +"$((from + 1))" "$WORK/tollgate.log" >"$h/tollgate.log"

	local why=()
	[[ $rc == 0 ]] || why+=("exit $rc$([[ $rc == 124 ]] && echo " (timed out after ${CLI_TIMEOUT}s)")")
	[[ $out == *"$ANSWER"* ]] || why+=("stdout lacks the fake's answer")
	[[ $good != 0 ]] || why+=("no success usage row with tokens>0, cost>0, protocols ${PROTO[$c]}")
	if ((${#why[@]} == 0)); then
		RESULT[$c]=PASS REASON[$c]="exit 0, answered, billed (${PROTO[$c]})"
	else
		FAILED=1 detail=full
		RESULT[$c]=FAIL REASON[$c]="$(
			IFS=';'
			echo "${why[*]}"
		)"
	fi
	[[ $VERBOSE == 1 ]] && detail=full

	if [[ $TAP == 1 ]]; then
		echo "  $c -> tollgate:"
		fmt_exchanges "$detail" <"$h/client.jsonl"
		[[ -s $h/client.jsonl ]] || echo "    (no request)"
		echo "  tollgate -> fake upstream:"
		fmt_exchanges "$detail" <"$h/upstream.jsonl"
		[[ -s $h/upstream.jsonl ]] || echo "    (no request)"
	else # the access log (debug level) has method, path and status
		echo "  $c -> tollgate:"
		grep -E 'msg=http .*path=/v1' "$h/tollgate.log" |
			sed -E 's/.*method=([A-Z]+) path=([^ ]+) status=([0-9]+).*/    \1 \2 -> \3/'
	fi
	echo "  usage rows for key #${TOKEN_ID[$c]}:"
	fmt_rows <<<"$rows"
	[[ $(jq '.items | length' <<<"$rows") == 0 ]] && echo "    (none)"
	if grep -qE 'level=(ERROR|WARN)' "$h/tollgate.log"; then
		echo "  tollgate warnings/errors meanwhile:"
		grep -E 'level=(ERROR|WARN)' "$h/tollgate.log" | tail -n 20 | cut -c1-600 | sed 's/^/    /'
	fi
	if [[ $detail == full ]]; then
		echo "  --- $c stdout (exit $rc):"
		tail -n 40 "$h/stdout" | sed 's/^/    /'
		echo "  --- $c stderr:"
		tail -n 60 "$h/stderr" | cut -c1-600 | sed 's/^/    /'
	else
		echo "  stdout: $(tr '\n' ' ' <"$h/stdout" | cut -c1-200)"
	fi
	echo "  => ${RESULT[$c]}: ${REASON[$c]}"
}

for c in "${RUNNABLE[@]}"; do
	check_client "$c"
done
summary
