// The catalog and the materialized views from spark-shell, with the settings of
// examples/conf/spark-defaults.conf (catalog "lance", the default catalog, and the SQL extension):
//
//   spark-shell --properties-file examples/conf/spark-defaults.conf < examples/spark-shell/tour.scala
//
// or type the lines at the scala> prompt. It starts by dropping the namespace "tour", so it can be
// run again. SparkShellTest (examples/src/test/java) feeds this file to the real REPL and checks
// what it prints.

def run(label: String, statement: String): Unit = {
  println("==> " + label)
  spark.sql(statement).show(100, false)
}

run("drop old", "DROP NAMESPACE IF EXISTS tour CASCADE")
run("create namespace", "CREATE NAMESPACE tour")
run("create table", "CREATE TABLE tour.docs (id BIGINT, topic STRING, body STRING, score INT)")
run("insert", "INSERT INTO tour.docs VALUES (1, 'tea', 'Green tea. Black tea.', 5), (2, 'tea', 'Oolong.', 9), (3, 'coffee', 'Espresso. Latte.', 7)")
run("insert more", "INSERT INTO tour.docs VALUES (4, 'coffee', 'Mocha.', 8)")
run("select", "SELECT id, topic, score FROM tour.docs ORDER BY id")
// version 1 is the empty table, 2 the first INSERT
run("time travel", "SELECT id, topic, score FROM tour.docs VERSION AS OF 2 ORDER BY id")

// one materialized view of each kind; each CREATE runs the first refresh and returns its row
run("query view", "CREATE MATERIALIZED VIEW tour.good AS SELECT id, score * 10 AS points FROM tour.docs WHERE score >= 7")
run("chunker view", "CREATE MATERIALIZED VIEW tour.sentences USING CHUNKER 'io.lancerest.spark.mv.chunker.TextSplitter' OPTIONS (input_columns = 'body', separator = '. ') AS SELECT id, body FROM tour.docs")
run("udtf view", "CREATE MATERIALIZED VIEW tour.best USING UDTF 'io.lancerest.spark.mv.udtf.TopKUdtf' PARTITION BY topic OPTIONS (k = '1', order_by = 'score') AS SELECT topic, id, score FROM tour.docs")

// change the source, refresh (query and chunker views incrementally)
run("change", "INSERT INTO tour.docs VALUES (5, 'tea', 'Matcha. Sencha.', 10)")
for (v <- Seq("good", "sentences", "best")) run("refresh " + v, s"REFRESH MATERIALIZED VIEW tour.$v")

run("show views", "SHOW MATERIALIZED VIEWS IN tour")
run("describe", "DESCRIBE MATERIALIZED VIEW tour.best")
run("read good", "SELECT id, points FROM tour.good ORDER BY id")
run("read sentences", "SELECT id, chunk FROM tour.sentences ORDER BY id, char_offset")
run("read best", "SELECT topic, id, score, rank FROM tour.best ORDER BY topic")
