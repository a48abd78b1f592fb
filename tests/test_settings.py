"""Configuration from the environment, and production-mode safety."""

import json
import os
import platform
import secrets
import subprocess
import sys
from pathlib import Path

import pytest

ROOT = Path(__file__).resolve().parent.parent


def manage(*args, **env):
    clean = {k: v for k, v in os.environ.items() if k not in {"SECRET_KEY", "DEBUG"}}
    clean["DJANGO_SETTINGS_MODULE"] = "controltower.settings"
    return subprocess.run(
        [sys.executable, "manage.py", *args],
        cwd=ROOT,
        env={**clean, **env},
        capture_output=True,
        text=True,
        timeout=120,
    )


def test_production_mode_refuses_to_start_without_a_secret_key():
    result = manage("check")
    assert result.returncode != 0
    assert "SECRET_KEY is not set" in result.stderr


def test_debug_mode_starts_without_a_secret_key():
    assert manage("check", DEBUG="1").returncode == 0


def test_check_deploy_is_clean_in_production_mode():
    result = manage(
        "check", "--deploy", "--fail-level", "WARNING", SECRET_KEY=secrets.token_urlsafe(60)
    )
    assert result.returncode == 0, result.stdout + result.stderr
    assert "no issues" in result.stdout


def test_stale_threshold_and_poll_interval_come_from_the_environment():
    code = "from django.conf import settings as s; print(s.STALE_AFTER_MINUTES, s.POLL_SECONDS)"
    result = manage(
        "shell", "--no-imports", "-c", code, DEBUG="1", STALE_AFTER_MINUTES="45", POLL_SECONDS="9"
    )
    assert result.stdout.split() == ["45", "9"]


def test_a_malformed_number_setting_is_a_clear_error():
    result = manage("check", DEBUG="1", POLL_SECONDS="soon")
    assert result.returncode != 0
    assert "POLL_SECONDS must be a whole number" in result.stderr


def test_database_url_selects_the_database():
    code = "from django.db import connection; print(connection.vendor)"
    url = "postgres://postgres@127.0.0.1:5432/postgres"
    result = manage("shell", "--no-imports", "-c", code, DEBUG="1", DATABASE_URL=url)
    assert result.stdout.strip() == "postgresql"


def test_the_attention_thresholds_come_from_the_environment():
    code = (
        "from django.conf import settings as s;"
        " print(s.BLOCKED_ATTENTION_MINUTES, s.REVIEW_ATTENTION_MINUTES)"
    )
    result = manage(
        "shell",
        "--no-imports",
        "-c",
        code,
        DEBUG="1",
        BLOCKED_ATTENTION_MINUTES="60",
        REVIEW_ATTENTION_MINUTES="120",
    )
    assert result.stdout.split() == ["60", "120"]


@pytest.mark.skipif(
    not (sys.platform == "linux" and platform.machine() == "x86_64"),
    reason="the pinned SQLite wheel is built for Linux x86-64 only",
)
def test_django_s_sqlite_is_the_pinned_wheel_s_not_the_system_s():
    import pysqlite3.dbapi2
    from django.db.backends.sqlite3 import base

    assert base.Database is pysqlite3.dbapi2
    assert base.Database.sqlite_version_info >= (3, 51)


def test_a_setting_no_board_could_work_with_fails_the_check_naming_it():
    result = manage("check", DEBUG="1", POLL_SECONDS="0")
    assert result.returncode != 0
    assert "tower.E001" in result.stderr
    assert "POLL_SECONDS must be a whole number of at least 1, not 0" in result.stderr


def test_a_plan_default_past_what_a_plan_may_name_fails_the_check():
    result = manage("check", DEBUG="1", MAX_ATTEMPTS="101")
    assert result.returncode != 0
    assert "MAX_ATTEMPTS must be a whole number of at least 1 and at most 100, not 101" in (
        result.stderr
    )


@pytest.mark.parametrize(
    ("text", "says"),
    [
        (
            '{"claude-x": {"input": 3, "output": 15, "cache_read": 0.3}}',
            "is not a price table: 'claude-x' must give exactly",
        ),
        ("input: 3", "cannot be read as JSON"),
    ],
)
def test_a_malformed_price_table_stops_the_start_saying_what_is_wrong(tmp_path, text, says):
    table = tmp_path / "prices.json"
    table.write_text(text)
    result = manage("check", DEBUG="1", PRICES_FILE=str(table))
    assert result.returncode != 0
    assert f"PRICES_FILE {table} {says}" in result.stderr


def test_prices_file_prices_what_the_shipped_table_does_not(tmp_path):
    table = tmp_path / "prices.json"
    price = {"input": 1, "output": 2, "cache_read": 0, "cache_write": 0}
    table.write_text(f'{{"our-model": {json.dumps(price)}}}')
    code = (
        "from sessions import config; from sessions.domain import spend;"
        " print(spend.price_of('our-model-20260101', config.prices()).output,"
        " spend.price_of('claude-opus-5', config.prices()))"
    )
    result = manage("shell", "--no-imports", "-c", code, DEBUG="1", PRICES_FILE=str(table))
    assert result.stdout.split() == ["2", "None"], result.stderr


def test_the_tower_s_settings_are_read_again_after_a_change(settings):
    from sessions import config

    before = config.current().stale_after_minutes
    assert config.current() is config.current()  # read once
    settings.STALE_AFTER_MINUTES = before + 7
    assert config.current().stale_after_minutes == before + 7
