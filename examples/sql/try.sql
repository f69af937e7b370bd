-- Try it: the statements of README.md's "Configure Spark" section, then a change and a refresh.
-- From the repository root:
--   mvn -B -Pquickstart -DskipTests -pl examples -am verify \
--       -Dquickstart.main=io.lancerest.examples.SqlRunner -Dquickstart.args="--file examples/sql/try.sql"
-- SqlRunnerTest runs this file.

-- Start from scratch, so that the script can run again on the same warehouse.
DROP NAMESPACE IF EXISTS lance.shop CASCADE;

CREATE NAMESPACE lance.shop;
CREATE TABLE lance.shop.items (id BIGINT, category STRING, price DOUBLE);
INSERT INTO lance.shop.items VALUES (1, 'tea', 3.5);
SELECT * FROM lance.shop.items VERSION AS OF 2;

-- The three dearest items of each category: a UDTF materialized view, filled when created.
CREATE MATERIALIZED VIEW lance.shop.top3 USING UDTF 'io.lancerest.spark.mv.udtf.TopKUdtf'
  PARTITION BY category OPTIONS (k = '3', order_by = 'price')
  AS SELECT category, id, price FROM lance.shop.items;
-- Nothing changed since: SKIPPED.
REFRESH MATERIALIZED VIEW lance.shop.top3;

-- Change the source; the next refresh computes the view again.
INSERT INTO lance.shop.items VALUES (2, 'tea', 5.0), (3, 'cake', 4.25), (4, 'tea', 1.0), (5, 'tea', 2.0);
REFRESH MATERIALIZED VIEW lance.shop.top3;
SELECT category, rank, id, price FROM lance.shop.top3 ORDER BY category, rank;
SHOW MATERIALIZED VIEWS IN lance.shop;
