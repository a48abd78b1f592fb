"""The hooks' log (`hook.log` in the state folder): what a hook or its background flusher
could not do, for a person to read later. A hook never says it to the agent, and never
stops for it."""

import contextlib
import os
import time

from ct import files


def log(text: str) -> None:
    with contextlib.suppress(OSError):  # a log that cannot be written must not stop the agent
        path = files.private_folder(files.state_home()) / "hook.log"
        descriptor = os.open(path, os.O_WRONLY | os.O_APPEND | os.O_CREAT, 0o600)
        with os.fdopen(descriptor, "a") as out:
            out.write(f"{time.strftime('%Y-%m-%dT%H:%M:%S')} {text.rstrip()}\n")
