"""Control Tower's Django project.

SQLite comes from the pinned pysqlite3-binary wheel where it is installed (Linux x86-64),
else from Python's own module. The wheel carries SQLite 3.51 built with its small-block
allocator; Debian 12's Python has 3.40, built without it (OMIT_LOOKASIDE), on which the
flow metrics take 1.3 s instead of 0.92 (bench/RESULTS.md §10). Django's SQLite backend
imports `sqlite3` by name, so the module is put in its place here, before any database
code is loaded (the settings are this package's).
"""

import sys

try:
    import pysqlite3.dbapi2
except ImportError:  # another platform: Python's own SQLite
    pass
else:
    sys.modules["sqlite3"] = pysqlite3
    sys.modules["sqlite3.dbapi2"] = pysqlite3.dbapi2
