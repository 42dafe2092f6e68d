#!/usr/bin/env bash
# Idle cost (issue 32): one api and one worker (the built server, as bench/ starts them) on a fresh database and a
# redis-server of their own, no traffic. After they settle, for SECONDS (default 60): CPU % of each process from
# /proc/<pid>/stat (utime + stime), of the whole Postgres server (its postmaster with the children it reaped, cutime +
# cstime, and every live child: backends closed or opened in the window count too; the server is the one under test,
# so nothing else should use it meanwhile), and the database's commits per second (pg_stat_database.xact_commit, read
# from another database so the reads do not count).
# It waits IDLE_SETTLE seconds (default 90) before the window: V8 returns the heap it grew while starting (madvise,
# munmap) over the first minute or so, which is start-up, not idle.
# Usage: bench/idle-cost.sh [SECONDS]; PG_SERVER (default postgres://postgres@127.0.0.1:5432), IDLE_SETTLE.
set -euo pipefail
ROOT=$(cd "$(dirname "$0")/.." && pwd)
WINDOW=${1:-60}
SETTLE=${IDLE_SETTLE:-90}
SERVER=${PG_SERVER:-postgres://postgres@127.0.0.1:5432}
DB=idle_cost_$(date +%s)_$$
REDIS_PORT=$(python3 -c 'import socket; s=socket.socket(); s.bind(("127.0.0.1",0)); print(s.getsockname()[1])')
API_PORT=$(python3 -c 'import socket; s=socket.socket(); s.bind(("127.0.0.1",0)); print(s.getsockname()[1])')
TICKS=$(getconf CLK_TCK)
pids=()
cleanup() {
  # The servers first, then their Redis: stopped under them, they would log its loss while shutting down.
  local i
  for ((i = ${#pids[@]} - 1; i >= 0; i--)); do
    kill "${pids[$i]}" 2>/dev/null || true
    wait "${pids[$i]}" 2>/dev/null || true
  done
  psql "$SERVER/postgres" -qc "DROP DATABASE IF EXISTS $DB WITH (FORCE)" >/dev/null
}
trap cleanup EXIT

cd "$ROOT"
npm run --silent build >/dev/null
psql "$SERVER/postgres" -qc "CREATE DATABASE $DB"
export DATABASE_URL="$SERVER/$DB" REDIS_URL="redis://127.0.0.1:$REDIS_PORT" APP_ENV=sandbox LOG_LEVEL=warn
node -e "require('./scripts/migrate.js').migrate(process.env.DATABASE_URL).then(() => process.exit(0), (e) => { console.error(e); process.exit(1); })"
redis-server --port "$REDIS_PORT" --bind 127.0.0.1 --save '' --appendonly no --daemonize no >/dev/null &
pids+=($!); REDIS_PID=$!
PORT=$API_PORT node dist/src/main.js api & pids+=($!); API_PID=$!
node dist/src/main.js worker & pids+=($!); WORKER_PID=$!
until curl -sf "http://127.0.0.1:$API_PORT/health/live" >/dev/null; do sleep 0.5; done
sleep "$SETTLE" # start-up work (function sources, first rounds, the heap given back) done

cpu() { awk '{print $14 + $15}' "/proc/$1/stat" 2>/dev/null || echo 0; }
commits() { psql "$SERVER/postgres" -Atc "SELECT xact_commit FROM pg_stat_database WHERE datname = '$DB'"; }
POSTMASTER=$(head -1 "$(psql "$SERVER/postgres" -Atc 'SHOW data_directory')/postmaster.pid")
postgres_cpu() {
  local total pid
  total=$(awk '{print $14 + $15 + $16 + $17}' "/proc/$POSTMASTER/stat")
  for pid in $(ps -o pid= --ppid "$POSTMASTER"); do total=$((total + $(cpu "$pid"))); done
  echo "$total"
}
declare -A before
for pid in "$API_PID" "$WORKER_PID" "$REDIS_PID"; do before[$pid]=$(cpu "$pid"); done
pg_before=$(postgres_cpu)
commits_before=$(commits)
load_before=$(cut -d' ' -f1 /proc/loadavg)
sleep "$WINDOW"
commits_after=$(commits)
pct() { echo "scale=2; ($(cpu "$1") - ${before[$1]}) * 100 / $TICKS / $WINDOW" | bc; }
pg_ticks=$(($(postgres_cpu) - pg_before))
echo "window ${WINDOW} s after ${SETTLE} s of settling; load average at start ${load_before}, at end $(cut -d' ' -f1 /proc/loadavg)"
echo "api CPU $(pct "$API_PID") %"
echo "worker CPU $(pct "$WORKER_PID") %"
echo "postgres server CPU $(echo "scale=2; $pg_ticks * 100 / $TICKS / $WINDOW" | bc) %"
echo "redis-server CPU $(pct "$REDIS_PID") %"
echo "commits/s $(echo "scale=2; ($commits_after - $commits_before) / $WINDOW" | bc)"
