#!/usr/bin/env bash
# A local Signet cluster on this machine: its own PostgreSQL and Redis, two API instances (`serve --no-worker`), two
# workers and HAProxy in front of the API instances (X-Forwarded-For, health checks, retries on the other instance).
#
#   scripts/cluster.sh up | down | status
#   scripts/cluster.sh stop|start|kill9 api1|api2|worker1|worker2|redis|pg|haproxy
#
# CLUSTER_DIR (default .cluster/) holds the data, the pid files and logs/; CLUSTER_PORT_BASE (default 7400) places
# HAProxy on the base port, the API instances on base+1 and base+2, PostgreSQL on base+10 and Redis on base+11.
# Everything listens on 127.0.0.1 and is stopped by its own pid; nothing else on the machine is touched.
set -euo pipefail

ROOT=$(cd "$(dirname "$0")/.." && pwd)
DIR=${CLUSTER_DIR:-$ROOT/.cluster}
mkdir -p "$DIR"
DIR=$(cd "$DIR" && pwd)
BASE=${CLUSTER_PORT_BASE:-7400}
LB_PORT=$BASE
PG_PORT=$((BASE + 10))
REDIS_PORT=$((BASE + 11))
LOGS=$DIR/logs
PG_DATA=$DIR/pg
PG_BIN=$(ls -d /usr/lib/postgresql/*/bin 2>/dev/null | sort -V | tail -n1)
export DATABASE_URL=postgres://postgres@127.0.0.1:$PG_PORT/signet
export REDIS_URL=redis://127.0.0.1:$REDIS_PORT
export DATA_DIR=$DIR/data
export BASE_URL=http://127.0.0.1:$LB_PORT
export HOST=127.0.0.1
export TRUST_PROXY=127.0.0.1
export SIGNET_ALLOW_PRIVATE_NETWORK=1
export LOG_LEVEL=${LOG_LEVEL:-info}

say() { echo "cluster: $*" >&2; }
die() {
  say "$*"
  exit 1
}
# PostgreSQL refuses to run as root: its binaries run as the postgres user then.
as_pg() { if [ "$(id -u)" = 0 ]; then runuser -u postgres -- "$@"; else "$@"; fi; }
api_port() { case $1 in api1) echo $((BASE + 1)) ;; api2) echo $((BASE + 2)) ;; esac; }
pid_of() { [ -f "$DIR/$1.pid" ] && cat "$DIR/$1.pid" || true; }
alive() {
  local pid
  pid=$(pid_of "$1")
  [ -n "$pid" ] && kill -0 "$pid" 2>/dev/null
}
wait_for() { # seconds, description, command...
  local n=$(($1 * 10)) what=$2
  shift 2
  for _ in $(seq 1 "$n"); do "$@" >/dev/null 2>&1 && return 0 || sleep 0.1; done
  die "$what did not come up (logs in $LOGS)"
}

start_pg() {
  [ -n "$PG_BIN" ] || die "PostgreSQL binaries not found under /usr/lib/postgresql"
  # The postgres user must reach its files: the cluster folder is made traversable, its own folders are its own.
  chmod o+x "$DIR"
  if [ ! -f "$PG_DATA/PG_VERSION" ]; then
    mkdir -p "$PG_DATA" "$DIR/pg-run"
    [ "$(id -u)" = 0 ] && chown postgres "$PG_DATA" "$DIR/pg-run"
    as_pg "$PG_BIN/initdb" -D "$PG_DATA" -U postgres --auth=trust --no-sync -E UTF8 >"$LOGS/initdb.log" 2>&1
  fi
  if ! as_pg "$PG_BIN/pg_ctl" -D "$PG_DATA" status >/dev/null 2>&1; then
    as_pg "$PG_BIN/pg_ctl" -D "$PG_DATA" -w -t 30 -l "$LOGS/pg.log" \
      -o "-p $PG_PORT -c listen_addresses=127.0.0.1 -k $DIR/pg-run -c fsync=off -c synchronous_commit=off -c full_page_writes=off -c max_connections=200" \
      start >/dev/null
  fi
  wait_for 30 PostgreSQL "$PG_BIN/pg_isready" -h 127.0.0.1 -p "$PG_PORT" -q
  psql -h 127.0.0.1 -p "$PG_PORT" -U postgres -d postgres -Atqc "select 1 from pg_database where datname = 'signet'" |
    grep -q 1 || psql -h 127.0.0.1 -p "$PG_PORT" -U postgres -d postgres -qc 'create database signet'
}
stop_pg() {
  [ -f "$PG_DATA/postmaster.pid" ] && as_pg "$PG_BIN/pg_ctl" -D "$PG_DATA" -m fast -w -t 30 stop >/dev/null 2>&1 || true
}

start_redis() {
  alive redis && return 0
  redis-server --daemonize yes --bind 127.0.0.1 --port "$REDIS_PORT" --save "" --appendonly no \
    --pidfile "$DIR/redis.pid" --logfile "$LOGS/redis.log" --dir "$DIR"
  wait_for 10 Redis redis-cli -p "$REDIS_PORT" ping
}

start_signet() { # name
  alive "$1" && return 0
  local cmd=(serve --no-worker) port=''
  case $1 in
    api1 | api2) port=$(api_port "$1") ;;
    worker1 | worker2) cmd=(worker) ;;
    *) die "unknown member $1" ;;
  esac
  PORT=${port:-0} nohup "$ROOT/bin/signet" "${cmd[@]}" >>"$LOGS/$1.log" 2>&1 &
  echo $! >"$DIR/$1.pid"
  if [ -n "$port" ]; then
    wait_for 60 "$1" curl -fsS "http://127.0.0.1:$port/healthz"
  else
    wait_for 60 "$1" grep -q 'signet worker running' "$LOGS/$1.log"
  fi
}

write_haproxy_cfg() {
  cat >"$DIR/haproxy.cfg" <<EOF
global
  daemon
  pidfile $DIR/haproxy.pid
  stats socket $DIR/haproxy.sock mode 600 level admin
  maxconn 4096

defaults
  mode http
  log stdout format raw local0 err
  timeout connect 1s
  timeout client 60s
  timeout server 60s
  timeout http-keep-alive 10s
  timeout http-request 30s
  option http-keep-alive
  option forwardfor
  # A request that found its instance gone (refused, closed without an answer) is sent again to the other one.
  # Only requests that are safe to repeat: GET/HEAD, or a request carrying an Idempotency-Key.
  retries 3
  option redispatch 1
  retry-on conn-failure empty-response response-timeout

frontend api
  bind 127.0.0.1:$LB_PORT
  http-request disable-l7-retry unless METH_GET || METH_HEAD || { req.hdr(idempotency-key) -m found }
  default_backend signet

backend signet
  balance roundrobin
  option httpchk GET /healthz
  http-check expect status 200
  default-server inter 500ms fastinter 200ms fall 2 rise 2
  http-response set-header X-Served-By %[srv_name]
  server api1 127.0.0.1:$((BASE + 1)) check
  server api2 127.0.0.1:$((BASE + 2)) check
EOF
}
start_haproxy() {
  alive haproxy && return 0
  command -v haproxy >/dev/null || die "haproxy is not installed (apt-get install haproxy)"
  write_haproxy_cfg
  haproxy -f "$DIR/haproxy.cfg" >>"$LOGS/haproxy.log" 2>&1
  wait_for 30 HAProxy curl -fsS "http://127.0.0.1:$LB_PORT/healthz"
}

stop_pidfile() { # name [signal]
  local pid
  pid=$(pid_of "$1")
  if [ -n "$pid" ] && kill -0 "$pid" 2>/dev/null; then
    kill "-${2:-TERM}" "$pid" 2>/dev/null || true
    for _ in $(seq 1 150); do kill -0 "$pid" 2>/dev/null || break; sleep 0.1; done
    kill -0 "$pid" 2>/dev/null && kill -KILL "$pid" 2>/dev/null || true
  fi
  rm -f "$DIR/$1.pid"
}

start_member() {
  case $1 in
    pg) start_pg ;;
    redis) start_redis ;;
    haproxy) start_haproxy ;;
    *) start_signet "$1" ;;
  esac
}
stop_member() {
  case $1 in
    pg) stop_pg ;;
    *) stop_pidfile "$1" ;;
  esac
}

up() {
  mkdir -p "$LOGS" "$DATA_DIR"
  chmod 1777 "$LOGS" # PostgreSQL writes its log here as the postgres user
  start_pg
  start_redis
  "$ROOT/bin/signet" migrate >>"$LOGS/migrate.log" 2>&1
  # One process creates the PKI before the others read it.
  "$ROOT/bin/signet" pki export-ca >"$DIR/ca.pem" 2>>"$LOGS/migrate.log"
  for m in api1 api2 worker1 worker2; do start_signet "$m"; done
  start_haproxy
  echo "BASE_URL=$BASE_URL"
  echo "DATABASE_URL=$DATABASE_URL"
  echo "REDIS_URL=$REDIS_URL"
  echo "CLUSTER_DIR=$DIR"
}

down() {
  stop_pidfile haproxy
  for m in api1 api2 worker1 worker2; do stop_pidfile "$m" & done
  wait
  stop_pidfile redis
  stop_pg
}

status() {
  for m in haproxy api1 api2 worker1 worker2 redis; do
    if alive "$m"; then echo "$m running (pid $(pid_of "$m"))"; else echo "$m stopped"; fi
  done
  if [ -n "$PG_BIN" ] && [ -f "$PG_DATA/PG_VERSION" ] && as_pg "$PG_BIN/pg_ctl" -D "$PG_DATA" status >/dev/null 2>&1; then
    echo "pg running (port $PG_PORT)"
  else
    echo "pg stopped"
  fi
}

case ${1:-} in
  up) up ;;
  down) down ;;
  status) status ;;
  start) start_member "${2:?member}" ;;
  stop) stop_member "${2:?member}" ;;
  kill9) stop_pidfile "${2:?member}" KILL ;;
  *)
    echo "usage: scripts/cluster.sh up|down|status|start <member>|stop <member>|kill9 <member>" >&2
    exit 2
    ;;
esac
