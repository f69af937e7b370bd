#!/usr/bin/env bash
# The materialized-view service over HTTP, from nothing, with curl.
#
# Run from anywhere in a clone (Java 17, Maven 3.8+, curl):
#
#   examples/curl/walkthrough.sh
#
# It starts lance-core's dir server (the upstream namespace) and the view service in front of
# it, creates a namespace (REST), a table with rows (one SQL command), a query view (REST,
# without output_schema: the service derives it), refreshes it, follows the job, asks for a
# second refresh and cancels it, and lists the view's jobs. At the end it stops both servers
# and removes its folder, so it can be run again.
#
# Settings (environment variables, all optional):
#   LANCE_PORT       port of the dir server (default 2333)
#   SERVICE_PORT     port of the view service (default 2334)
#   WORK             folder for the warehouse and the logs, emptied first and removed at the
#                    end (default examples/target/curl-walkthrough)
#   LANCE_CLASSPATH  the Java class path to run with; by default Maven builds the modules and
#                    resolves it (examples/target/walkthrough.classpath)
#   WAIT_SECONDS     the longest wait for a server to answer or a job to end (default 180)
set -euo pipefail
cd "$(dirname "$0")/../.."   # the repository root

LANCE_PORT=${LANCE_PORT:-2333}
SERVICE_PORT=${SERVICE_PORT:-2334}
WORK=${WORK:-examples/target/curl-walkthrough}
WAIT_SECONDS=${WAIT_SECONDS:-180}
UPSTREAM="http://127.0.0.1:$LANCE_PORT"   # the dir server
SERVICE="http://127.0.0.1:$SERVICE_PORT"  # the view service; every other route is forwarded
# Spark's Java 17 flags, as the root pom.xml lists them
OPENS=$(sed -n 's:.*<spark.java17.opens>\(.*\)</spark.java17.opens>.*:\1:p' pom.xml)

if [ -z "${LANCE_CLASSPATH:-}" ]; then
  echo "== building the modules and resolving the class path (Maven, quiet; about 1 min, plus"\
    "about 0.5 GB of jars to download the first time)"
  mvn -B -q -DskipTests -pl examples -am package dependency:build-classpath \
    -Dmdep.includeScope=runtime -Dmdep.outputFile="$PWD/examples/target/walkthrough.classpath" >/dev/null
  LANCE_CLASSPATH="$PWD/examples/target/classes:$(cat examples/target/walkthrough.classpath)"
fi

for port in "$LANCE_PORT" "$SERVICE_PORT"; do
  if curl -s -o /dev/null --max-time 2 "http://127.0.0.1:$port/"; then
    echo "walkthrough: port $port is in use (a dev server or a service of an earlier run?);" \
      "stop it, or choose other ports: LANCE_PORT=2343 SERVICE_PORT=2344 $0" >&2
    exit 1
  fi
done
rm -rf "$WORK"
mkdir -p "$WORK"
PIDS=()
stop() {
  for p in "${PIDS[@]}"; do kill "$p" 2>/dev/null || true; done
  for p in "${PIDS[@]}"; do wait "$p" 2>/dev/null || true; done
  rm -rf "$WORK"
}
trap stop EXIT

# Waits until $1 answers HTTP at all; fails naming $2 and the tail of its log $3.
await_http() {
  local deadline=$((SECONDS + WAIT_SECONDS))
  until curl -s -o /dev/null --max-time 2 "$1"; do
    if [ $SECONDS -ge $deadline ] || ! kill -0 "$4" 2>/dev/null; then
      echo "walkthrough: $2 did not answer at $1 within ${WAIT_SECONDS}s; the end of $3:" >&2
      tail -20 "$3" >&2
      exit 1
    fi
    sleep 1
  done
}

# POST $2 (JSON) to the service's route $1, showing the command and the answer; stops the
# walkthrough on an error answer.
post() {
  echo "\$ curl -s -X POST '$SERVICE$1' -H 'Content-Type: application/json' -d '$2'"
  local out code
  out=$(curl -s -w '\n%{http_code}' -X POST "$SERVICE$1" -H 'Content-Type: application/json' -d "$2")
  code=${out##*$'\n'}
  ANSWER=${out%$'\n'*}
  echo "$ANSWER"
  if [ "$code" -ge 400 ]; then
    echo "walkthrough: POST $1 answered HTTP $code; the service's log: $WORK/service.log" >&2
    exit 1
  fi
}

# The string field $1 of the last answer.
field() {
  sed -n 's/.*"'"$1"'":"\([^"]*\)".*/\1/p' <<<"$ANSWER"
}

# Polls job/describe of job $1 until it has ended, or with $2 = RUNNING until it runs.
follow() {
  local deadline=$((SECONDS + WAIT_SECONDS)) status
  while :; do
    ANSWER=$(curl -s -X POST "$SERVICE/v1/materialized_view/shop%24big_orders/job/describe" \
      -d '{"job_id":"'"$1"'"}')
    status=$(field status)
    if [ "$status" = RUNNING ] && [ "${2:-}" = RUNNING ]; then
      break
    fi
    if [ -n "$status" ] && [ "$status" != SUBMITTED ] && [ "$status" != RUNNING ]; then
      break
    fi
    if [ $SECONDS -ge $deadline ]; then
      echo "walkthrough: job $1 did not end within ${WAIT_SECONDS}s; last answer: $ANSWER" >&2
      exit 1
    fi
    sleep 0.2
  done
}

echo "== 1. the dir server on $UPSTREAM (log: $WORK/dev-server.log)"
java $OPENS -cp "$LANCE_CLASSPATH" io.lancerest.examples.DevServer \
  --root "$WORK/warehouse" --port "$LANCE_PORT" >"$WORK/dev-server.log" 2>&1 &
PIDS+=($!)
await_http "$UPSTREAM/" "the dir server" "$WORK/dev-server.log" "${PIDS[0]}"

echo "== 2. the view service on $SERVICE in front of it (log: $WORK/service.log)"
java $OPENS -cp "$LANCE_CLASSPATH" io.lancerest.spark.mv.server.MaterializedViewServer \
  --upstream "$UPSTREAM" --port "$SERVICE_PORT" >"$WORK/service.log" 2>&1 &
PIDS+=($!)
await_http "$SERVICE/" "the view service" "$WORK/service.log" "${PIDS[1]}"

echo "== 3. a namespace, through the service (forwarded to the dir server)"
post /v1/namespace/shop/create '{}'

echo "== 4. a table and its rows: one SQL command (SqlRunner, a local Spark with the catalog)"
java $OPENS -cp "$LANCE_CLASSPATH" io.lancerest.examples.SqlRunner --uri "$SERVICE" -e "
  CREATE TABLE shop.orders (id BIGINT, item STRING, amount DOUBLE);
  INSERT INTO shop.orders VALUES (1, 'tea', 12.5), (2, 'kettle', 140.0), (3, 'cups', 30.0),
    (4, 'grinder', 210.0), (5, 'scale', 115.0)" 2>"$WORK/sql.log" || {
  echo "walkthrough: SqlRunner failed; the end of $WORK/sql.log:" >&2
  tail -20 "$WORK/sql.log" >&2
  exit 1
}

echo "== 5. a query view of the orders of 100 or more (no output_schema: the service derives it)"
post /v1/materialized_view/shop%24big_orders/create '{"kind": "query",
  "source_query": "{\"format\":\"lancerest.source_query.v1\",\"dialect\":\"spark-sql\",\"source_table_id\":[\"shop\",\"orders\"],\"source_namespace\":[\"shop\"],\"projection\":[{\"name\":\"id\",\"expr\":\"id\"},{\"name\":\"item\",\"expr\":\"item\"},{\"name\":\"amount\",\"expr\":\"amount\"}],\"filter\":\"amount >= 100\"}",
  "with_no_data": true}'

echo "== 6. refresh it, and follow the job until it runs"
post /v1/materialized_view/shop%24big_orders/refresh '{}'
FIRST=$(field job_id)
follow "$FIRST" RUNNING
echo "$ANSWER"

echo "== 7. ask again while it runs: a second job waits behind it; cancel that one"
post /v1/materialized_view/shop%24big_orders/refresh '{}'
SECOND=$(field job_id)
post /v1/materialized_view/shop%24big_orders/job/cancel '{"job_id":"'"$SECOND"'"}'

echo "== 8. follow the first job to its end"
follow "$FIRST"
echo "$ANSWER"

echo "== 9. the view's jobs, newest first"
post /v1/materialized_view/shop%24big_orders/job/list '{"limit":10}'

echo "== done: stopping both servers and removing $WORK"
