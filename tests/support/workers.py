"""Append workers for the concurrency tests, run in threads or in fresh processes.

Kept apart from the test modules: a spawned process imports this module before Django is
set up, so Django is imported only inside the functions.
"""

import os
import traceback


def append_blocks(username, session_id, reasons, expected_seq=None, barrier=None):
    """Append one block per reason; return what happened to each, in order."""
    from django.contrib.auth.models import User
    from django.db import connection

    from sessions.domain.vocabulary import BLOCK
    from sessions.rules.append import append_event
    from sessions.rules.refusals import Conflict

    user = User.objects.get(username=username)
    if barrier is not None:
        barrier.wait(timeout=60)
    outcomes = []
    try:
        for reason in reasons:
            try:
                event = append_event(
                    session_id, BLOCK, {"reason": reason}, user=user, expected_seq=expected_seq
                ).event
                outcomes.append(("stored", session_id, event.seq, reason))
            except Conflict:
                outcomes.append(("conflict", session_id, None, reason))
    finally:
        connection.close()
    return outcomes


def process_main(database_url, queue, args, barrier=None):
    """Entry point of a spawned process: set Django up on the given database, then append."""
    os.environ["DATABASE_URL"] = database_url
    os.environ["DJANGO_SETTINGS_MODULE"] = "tests.settings"
    import django

    django.setup()
    try:
        queue.put(append_blocks(*args, barrier=barrier))
    except Exception:  # reported to the test, which fails on it
        queue.put(traceback.format_exc())
