#!/usr/bin/env bash
# Starts a throwaway Prometheus server for the live import test and prints
# its URL on standard output: Debian's prometheus package (installed if
# missing), a temporary directory for its configuration and data, listening
# on 127.0.0.1 only, scraping the test's dcgm-exporter stand-in every second.
#   export CLOCKGATE_TEST_PROMETHEUS=$(scripts/prometheus.sh start)
#   export CLOCKGATE_TEST_PROMETHEUS_EXPORTER=127.0.0.1:9479
#   scripts/prometheus.sh stop
set -euo pipefail
port=${CLOCKGATE_PROM_PORT:-19090}
exporter=${CLOCKGATE_TEST_PROMETHEUS_EXPORTER:-127.0.0.1:19479}
dir=${CLOCKGATE_PROM_DIR:-/tmp/clockgate-prom-$port}

case "${1:-}" in
start)
  if ! command -v prometheus >/dev/null 2>&1; then
    apt-get update -qq >&2
    DEBIAN_FRONTEND=noninteractive apt-get install -y -qq --no-install-recommends prometheus >&2
  fi
  if [ -f "$dir/pid" ] && kill -0 "$(cat "$dir/pid")" 2>/dev/null; then
    echo "http://127.0.0.1:$port"
    exit 0
  fi
  rm -rf "$dir"
  mkdir -p "$dir/data"
  cat >"$dir/prometheus.yml" <<YML
global:
  scrape_interval: 1s
  scrape_timeout: 1s
scrape_configs:
  - job_name: dcgm-exporter
    static_configs:
      - targets: ["$exporter"]
YML
  # Debian's package starts a system service on install; this server is
  # our own, on its own port and directory.
  nohup prometheus --config.file="$dir/prometheus.yml" --storage.tsdb.path="$dir/data" \
    --web.listen-address="127.0.0.1:$port" >"$dir/log" 2>&1 &
  echo $! >"$dir/pid"
  for _ in $(seq 1 100); do
    if curl -fsS "http://127.0.0.1:$port/-/ready" >/dev/null 2>&1; then
      echo "http://127.0.0.1:$port"
      exit 0
    fi
    sleep 0.2
  done
  echo "prometheus did not become ready; its log:" >&2
  cat "$dir/log" >&2
  exit 1
  ;;
stop)
  if [ -f "$dir/pid" ]; then
    kill "$(cat "$dir/pid")" 2>/dev/null || true
    rm -f "$dir/pid"
  fi
  ;;
*)
  echo "usage: scripts/prometheus.sh start|stop" >&2; exit 2 ;;
esac
