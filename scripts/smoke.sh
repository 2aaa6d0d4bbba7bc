#!/bin/sh
# Smoke test of a running cstp: the README's curl examples, each answer's code checked.
#
#   scripts/smoke.sh BASE_URL [TOKEN]        e.g. scripts/smoke.sh http://127.0.0.1:8000 "$TOKEN"
#
# Needs curl; uses jq when it is installed, sed and grep otherwise. Prints one line per
# check; exits 0 when every check passed, 1 when any failed, 2 on bad usage.
# With TOKEN, calls carry `Authorization: Bearer TOKEN` and a call without it must get 401.
set -u

if [ $# -lt 1 ] || [ $# -gt 2 ]; then
    echo "usage: $0 BASE_URL [TOKEN]" >&2
    exit 2
fi
if ! command -v curl >/dev/null 2>&1; then
    echo "smoke: curl is required" >&2
    exit 2
fi
BASE_URL=${1%/}
TOKEN=${2:-}
HAVE_JQ=no
command -v jq >/dev/null 2>&1 && HAVE_JQ=yes
BODY=$(mktemp)
trap 'rm -f "$BODY"' EXIT
FAILED=0

# post JSON [auth|noauth] -> HTTP status on stdout, response body in $BODY
post() {
    if [ -n "$TOKEN" ] && [ "${2:-auth}" = auth ]; then
        curl -sS -o "$BODY" -w '%{http_code}' "$BASE_URL/cstp" \
            -H 'Content-Type: application/json' -H "Authorization: Bearer $TOKEN" -d "$1"
    else
        curl -sS -o "$BODY" -w '%{http_code}' "$BASE_URL/cstp" \
            -H 'Content-Type: application/json' -d "$1"
    fi
}

# The JSON-RPC error code of a single response in $BODY, or "result" when it succeeded.
answer() {
    if [ "$HAVE_JQ" = yes ]; then
        jq -r 'if type == "object" and has("result") then "result"
               elif type == "object" and has("error") then (.error.code | tostring)
               else "?" end' "$BODY" 2>/dev/null || echo "?"
    elif grep -q '"result"' "$BODY"; then
        echo result
    else
        code=$(sed -n 's/.*"code":[[:space:]]*\(-\{0,1\}[0-9][0-9]*\).*/\1/p' "$BODY" | head -n 1)
        echo "${code:-?}"
    fi
}

# The number of response objects in a batch answer in $BODY.
batch_size() {
    if [ "$HAVE_JQ" = yes ]; then
        jq -r 'if type == "array" then length else 0 end' "$BODY" 2>/dev/null || echo 0
    else
        grep -o '"jsonrpc"' "$BODY" | wc -l | tr -d ' '
    fi
}

# report NAME EXPECTED GOT
report() {
    if [ "$2" = "$3" ]; then
        echo "ok    $1 ($3)"
    else
        echo "FAIL  $1: expected $2, got $3"
        FAILED=1
    fi
}

# check NAME JSON EXPECTED_STATUS EXPECTED_ANSWER [auth|noauth]
check() {
    status=$(post "$2" "${5:-auth}") || status="no answer"
    if [ "$status" != "$3" ]; then
        report "$1" "HTTP $3" "HTTP $status"
        return
    fi
    report "$1" "HTTP $3 $4" "HTTP $status $(answer)"
}

status=$(curl -sS -o "$BODY" -w '%{http_code}' "$BASE_URL/health") || status="no answer"
report "health" "HTTP 200" "HTTP $status"

# A server with auth on answers every call below 401 without the right token: say so first,
# not after six failed checks.
status=$(post '{"jsonrpc": "2.0", "id": 0, "method": "rpc.discover"}') || status="no answer"
if [ "$status" = 401 ] && [ -z "$TOKEN" ]; then
    echo "smoke: the server asks for a token (HTTP 401): pass one, make smoke TOKEN=..." >&2
elif [ "$status" = 401 ]; then
    echo "smoke: the server refused the token (HTTP 401): check TOKEN" >&2
fi

check "query" '{"jsonrpc": "2.0", "id": 1, "method": "cstp.queryDecisions",
  "params": {"query": "avoid floating point rounding errors in invoice totals", "limit": 3}}' \
    200 result

check "filtered query" '{"jsonrpc": "2.0", "id": "req-001", "method": "cstp.queryDecisions",
  "params": {"query": "message broker for billing events",
    "filters": {"category": "architecture", "minConfidence": 0.5, "maxConfidence": 1.0,
      "dateAfter": "2024-01-01", "dateBefore": "2026-12-31T23:59:59Z",
      "stakes": ["medium", "high", "critical"], "status": ["decided", "reviewed", "superseded"]},
    "limit": 10, "includeReasons": true}}' \
    200 result

check "invalid params" '{"jsonrpc": "2.0", "id": 2, "method": "cstp.queryDecisions",
  "params": {"query": "kafka", "limit": 100, "filters": {"categroy": "architecture"}}}' \
    200 -32602

check "unknown method" '{"jsonrpc": "2.0", "id": 3, "method": "cstp.noSuchMethod"}' 200 -32601

status=$(post '{"jsonrpc": "2.0", "method": "cstp.queryDecisions", "params": {"query": "kafka"}}') \
    || status="no answer"
report "notification" "HTTP 204, 0 bytes" "HTTP $status, $(wc -c <"$BODY" | tr -d ' ') bytes"

status=$(post '[{"jsonrpc": "2.0", "id": 4, "method": "rpc.discover"},
  {"jsonrpc": "2.0", "id": 5, "method": "cstp.queryDecisions", "params": {"query": "kafka", "limit": 1}},
  {"jsonrpc": "2.0", "method": "rpc.discover"}]') || status="no answer"
report "batch" "HTTP 200, 2 responses" "HTTP $status, $(batch_size) responses"

if [ -n "$TOKEN" ]; then
    check "no token" '{"jsonrpc": "2.0", "id": 6, "method": "rpc.discover"}' 401 -32001 noauth
fi

if [ "$FAILED" -ne 0 ]; then
    echo "smoke: FAILED against $BASE_URL"
    exit 1
fi
echo "smoke: all checks passed against $BASE_URL"
