#!/bin/bash
# `make deploy-check`: build the images, run the compose stack, judge in it, scale, restart, tear down.
#
# Each step prints its time since the start. Not part of `make test` (it takes minutes and needs
# Docker). Environment:
#   DEPLOY_CHECK_PORT       the API's port on 127.0.0.1 (default 8107)
#   DEPLOY_CHECK_KEEP=1     leave the stack up at the end (tear it down with the printed command)
#   USE_REGISTRY_IMAGES=1   use python:3.11-slim-bookworm, postgres:16, redis:7 from Docker Hub
#                           instead of images made from Debian's archive (bench/deploy/base_images.sh)
#   TORCH_FIND_LINKS        a folder URL of torch wheels; default: this host's /opt/wheels, served here
#   DEPLOY_CHECK_WHEEL_PORT the port /opt/wheels is served on to the builds (default 8117)
#   START_DOCKERD=1         start `dockerd --iptables=false --bridge=none` when no daemon answers
set -euo pipefail
cd "$(dirname "$0")/.."
repo="$(pwd)"
port="${DEPLOY_CHECK_PORT:-8107}"
project="opjudge-deploycheck"
work="$(mktemp -d /tmp/opjudge-deploy-check.XXXXXX)"
started=$(date +%s.%N)
api="http://127.0.0.1:${port}"
wheel_server=""

step() { printf '[%7.1f s] %s\n' "$(awk "BEGIN {print $(date +%s.%N) - $started}")" "$*"; }
fail() { step "FAILED: $*"; exit 1; }

compose_cmd() {
    if docker compose version >/dev/null 2>&1; then echo "docker compose"; else echo "docker-compose"; fi
}
COMPOSE="$(compose_cmd)"
dc() { $COMPOSE -p "$project" --env-file "$work/env" -f docker-compose.yml -f bench/deploy/compose.check.yml "$@"; }

cleanup() {
    local status=$?
    if [ -n "$wheel_server" ]; then kill "$wheel_server" 2>/dev/null || true; fi
    if [ "${DEPLOY_CHECK_KEEP:-0}" = 1 ]; then
        step "kept the stack up: cd $repo && $COMPOSE -p $project --env-file $work/env -f docker-compose.yml -f bench/deploy/compose.check.yml down -v"
    elif [ -f "$work/env" ]; then
        if [ $status -ne 0 ]; then dc logs --tail 40 api worker-cpu 2>&1 | sed 's/^/    /' || true; fi
        dc down -v --remove-orphans >/dev/null 2>&1 || true
        step "torn down (containers, network, volumes)"
        rm -rf "$work"
    fi
    exit $status
}
trap cleanup EXIT

# --- helpers -----------------------------------------------------------------------------------
json() { python3 -c "import json,sys; d=json.load(sys.stdin); print(eval(sys.argv[1], {'d': d}))" "$1"; }
admin() { curl -fsS -H "Authorization: Bearer $ADMIN" -H 'Content-Type: application/json' "$@"; }
upload() {  # team token, file: prints the submission id
    curl -fsS -H "Authorization: Bearer $1" -F problem=add_mul_relu -F backend=cpu -F "files=@$2;filename=kernel.cpp" \
        "$api/api/v1/submissions" | json "d['id']"
}
run_of() { admin "$api/api/v1/submissions/$1" | json "$2"; }
wait_for() {  # seconds, description, command...: retries the command until it succeeds
    local until=$(( $(date +%s) + $1 )); local what="$2"; shift 2
    until "$@" >/dev/null 2>&1; do
        [ "$(date +%s)" -lt "$until" ] || fail "timed out waiting for $what"
        sleep 2
    done
}
health() { [ "$(docker inspect -f '{{.State.Health.Status}}' "$(dc ps -q "$1")")" = healthy ]; }
finished() { [ "$(run_of "$1" "d['runs'][0]['status']")" = done ]; }
running() { [ "$(run_of "$1" "d['runs'][0]['status']")" = running ]; }

# --- 1. Docker -----------------------------------------------------------------------------------
if ! docker info >/dev/null 2>&1; then
    [ "${START_DOCKERD:-0}" = 1 ] || fail "no Docker daemon answers (START_DOCKERD=1 starts one)"
    (dockerd --iptables=false --bridge=none >/var/log/opjudge-dockerd.log 2>&1 &)
    wait_for 60 "dockerd" docker info
fi
step "docker $(docker version -f '{{.Server.Version}}'), compose: $COMPOSE $($COMPOSE version --short 2>/dev/null || true)"

# --- 2. Base images and the torch source ---------------------------------------------------------
build_args=()
if [ "${USE_REGISTRY_IMAGES:-0}" != 1 ]; then
    bench/deploy/base_images.sh >/dev/null
    build_args+=(--build-arg PYTHON_IMAGE=opjudge-base/python:3.11-bookworm)
    export OPJUDGE_POSTGRES_IMAGE=opjudge-base/postgres:15-bookworm OPJUDGE_REDIS_IMAGE=opjudge-base/redis:7-bookworm
    step "base images from Debian's archive: python, postgres, redis"
fi
torch_links="${TORCH_FIND_LINKS:-}"
if [ -z "$torch_links" ] && ls /opt/wheels/torch-*+cpu-*.whl >/dev/null 2>&1; then
    # A fixed port: the URL is a build argument, and a new one would rebuild torch's layer every time.
    wheel_port="${DEPLOY_CHECK_WHEEL_PORT:-8117}"
    python3 -m http.server --bind 127.0.0.1 "$wheel_port" --directory /opt/wheels >/dev/null 2>&1 &
    wheel_server=$!
    torch_links="http://127.0.0.1:${wheel_port}/"
    torch_version=$(basename /opt/wheels/torch-*+cpu-*.whl | cut -d- -f2)
    build_args+=(--build-arg "TORCH_VERSION=${torch_version}")
fi
[ -n "$torch_links" ] && build_args+=(--build-arg "TORCH_FIND_LINKS=${torch_links}")

# --- 3. Images -----------------------------------------------------------------------------------
for image in api worker-cpu; do
    docker build --network host -q "${build_args[@]}" -f "docker/$image/Dockerfile" -t "opjudge-$image" . >/dev/null
    step "built opjudge-$image ($(docker image inspect -f '{{.Size}}' "opjudge-$image" | awk '{printf "%.2f GB", $1/1e9}'))"
done

# --- 4. The stack --------------------------------------------------------------------------------
secret() { python3 -c "import secrets; print(secrets.token_urlsafe(32))"; }
cat > "$work/env" <<EOF
OPJUDGE_JUDGE_SECRET=$(secret)
OPJUDGE_TOKEN_PEPPER=$(secret)
POSTGRES_PASSWORD=$(secret)
FLOWER_BASIC_AUTH=check:$(secret)
OPJUDGE_API_PORT=$port
EOF
chmod 0600 "$work/env"
dc up -d --no-build api worker-cpu >/dev/null 2>&1 || { dc up -d --no-build api worker-cpu; fail "compose up"; }
step "compose up: postgres, redis, api, worker-cpu"
for service in postgres redis api; do wait_for 180 "$service to be healthy" health "$service"; done
step "health checks: postgres, redis and api healthy"
head=$(dc exec -T postgres psql -U opjudge -d opjudge -tAc "select version_num from alembic_version" | tr -d '\r')
[ -n "$head" ] || fail "no migration recorded"
step "migrations applied: alembic head $head"
doctor=$(dc exec -T worker-cpu opjudge doctor | tr -d '\r')
grep -E "auto mode gives|^cpu|cache" <<<"$doctor" | sed 's/^/    /'
grep -Eq "auto mode gives +ok +strict" <<<"$doctor" || fail "the worker's sandbox is not strict"
step "worker doctor: cpu ready, sandbox strict"

# --- 5. A competition, a team, an upload ---------------------------------------------------------
ADMIN=$(dc exec -T api opjudge admin-token --label deploy-check | tail -n1 | tr -d '\r')
now=$(date -u +%Y-%m-%dT%H:%M:%SZ); end=$(date -u -d '+1 day' +%Y-%m-%dT%H:%M:%SZ)
admin -X POST "$api/api/v1/admin/competitions" -d "{\"slug\": \"check\", \"title\": \"Deploy check\", \
\"starts_at\": \"$now\", \"ends_at\": \"$end\", \"min_interval_s\": 0, \"max_in_flight\": 10}" >/dev/null
admin -X POST "$api/api/v1/admin/competitions/check/problems" -d '{"problem": "add_mul_relu", "backends": ["cpu"]}' >/dev/null
TEAM=$(admin -X POST "$api/api/v1/admin/competitions/check/teams" -d '{"name": "deployers"}' | json "d['token']['token']")
step "admin API: competition 'check', problem add_mul_relu, team 'deployers'"
baseline=reference_kernels/add_mul_relu/cpu/baseline.cpp
first=$(upload "$TEAM" "$baseline")
step "uploaded the CPU baseline: submission $first"
wait_for 600 "submission $first to be judged" finished "$first"
verdict=$(run_of "$first" "d['runs'][0]['verdict']"); isolation=$(run_of "$first" "d['runs'][0]['isolation']")
[ "$verdict" = AC ] && [ "$isolation" = strict ] || fail "submission $first: verdict $verdict, isolation $isolation"
step "judged in the worker container: $verdict, isolation $isolation"
curl -fsS "$api/api/v1/competitions/check/leaderboard" | json "[r['team_name'] for r in d['rows']]" | grep -q deployers \
    || fail "the team is not on the board"
step "leaderboard lists the team"

# --- 6. Two workers on one queue -----------------------------------------------------------------
dc up -d --no-build --scale worker-cpu=2 worker-cpu >/dev/null 2>&1
ids=(); for _ in 1 2 3 4; do ids+=("$(upload "$TEAM" "$baseline")"); done
for id in "${ids[@]}"; do wait_for 900 "submission $id" finished "$id"; done
hosts=$(for id in "${ids[@]}"; do run_of "$id" "d['runs'][0]['worker_host']"; done | sort -u | wc -l)
[ "$hosts" -ge 2 ] || fail "4 runs were judged by $hosts worker container(s), not 2"
step "scaled worker-cpu to 2: 4 runs judged by $hosts containers"

# --- 7. A worker restarted in the middle of a run ------------------------------------------------
dc up -d --no-build --scale worker-cpu=1 worker-cpu >/dev/null 2>&1
victim=$(upload "$TEAM" "$baseline")
wait_for 300 "submission $victim to start" running "$victim"
holder=$(run_of "$victim" "d['runs'][0]['worker_host'] or ''")
dc restart -t 1 worker-cpu >/dev/null 2>&1
step "restarted worker-cpu while it judged submission $victim"
wait_for 900 "submission $victim after the restart" finished "$victim"
summary=$(admin "$api/api/v1/submissions/$victim" | json \
    "(len(d['runs']), d['runs'][0]['status'], d['runs'][0]['verdict'], d['runs'][0]['attempt'], len(d['runs'][0]['cases']))")
python3 - "$summary" <<'EOF' || fail "submission $victim: $summary"
import ast, sys
runs, status, verdict, attempt, cases = ast.literal_eval(sys.argv[1])
assert runs == 1 and status == "done" and verdict == "AC" and attempt >= 2 and cases > 0, sys.argv[1]
EOF
step "the run finished once: (runs, status, verdict, attempt, cases) = $summary, first held by ${holder:-?}"

metrics=$(curl -fsS -H "Authorization: Bearer $ADMIN" "$api/metrics" | grep -c '^opjudge_' || true)
step "/metrics answers ($metrics opjudge samples)"
step "deploy check passed"
