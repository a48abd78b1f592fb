"""Exit 0 when the PostgreSQL server of the URL in argv[1] accepts connections, else 1."""

import sys

import psycopg

try:
    # The server's own database: the URL's may not exist until the tests create theirs.
    psycopg.connect(sys.argv[1], dbname="postgres", connect_timeout=3).close()
except psycopg.Error as exc:
    print(f"PostgreSQL not reachable: {exc}", file=sys.stderr)
    sys.exit(1)
