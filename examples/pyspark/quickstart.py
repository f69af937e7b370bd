"""PySpark against a Lance REST namespace server, with the settings of conf/spark-defaults.conf.

    python examples/pyspark/quickstart.py            # uri from the file (the dev server's)
    LANCE_REST_URI=http://host:2333 python examples/pyspark/quickstart.py

The settings are read from examples/conf/spark-defaults.conf, the file that
SparkDefaultsConfTest exercises; edit the jar paths in it first (docs/packaging.md).
They must be set before the first SparkSession starts (extraClassPath in particular).
In a notebook whose session already exists, restart the kernel after changing them.
"""
import os
from pathlib import Path

from pyspark.sql import SparkSession

CONF = Path(__file__).resolve().parent.parent / "conf/spark-defaults.conf"


def spark_defaults(path):
    """The key/value pairs of a spark-defaults.conf file (whitespace separated, # comments)."""
    settings = {}
    for line in path.read_text().splitlines():
        line = line.strip()
        if line and not line.startswith("#"):
            key, _, value = line.partition(" ")
            settings[key] = value.strip()
    return settings


builder = SparkSession.builder.appName("lance-rest-pyspark")
for key, value in spark_defaults(CONF).items():
    builder = builder.config(key, value)
if "LANCE_REST_URI" in os.environ:
    builder = builder.config("spark.sql.catalog.lance.uri", os.environ["LANCE_REST_URI"])
spark = builder.getOrCreate()

spark.sql("CREATE NAMESPACE IF NOT EXISTS py")
spark.sql("CREATE TABLE IF NOT EXISTS py.words (id BIGINT, word STRING)")
spark.createDataFrame([(1, "lance"), (2, "spark")], "id BIGINT, word STRING") \
    .writeTo("lance.py.words").append()
spark.sql("SELECT * FROM py.words ORDER BY id").show()
spark.sql("CREATE MATERIALIZED VIEW IF NOT EXISTS py.long_words AS "
          "SELECT id, word FROM py.words WHERE length(word) > 4").show()
spark.sql("REFRESH MATERIALIZED VIEW py.long_words").show()
spark.table("py.long_words").show()
spark.stop()
