"""Run every benchmark on SQLite and PostgreSQL, one after another (`make bench`)."""

import subprocess
import sys
from pathlib import Path

from common import machine

HERE = Path(__file__).resolve().parent

if __name__ == "__main__":
    print(f"machine: {machine()}", flush=True)
    for script in (
        "append_inprocess.py",
        "append_http.py",
        "board.py",
        "stream_length.py",
        "hand_sql.py",
        "plans.py",
        "time_attention.py",
        "feed.py",
        "webhooks.py",
        "mcp_overhead.py",
    ):
        for engine in ("sqlite", "postgresql"):
            subprocess.run([sys.executable, str(HERE / script), engine, *sys.argv[1:]], check=True)
    # The plan page's graph: its layout touches no database, so SQLite only.
    subprocess.run([sys.executable, str(HERE / "plan_page.py")], check=True)
