"""Settings for Control Tower, read from the environment (see README, "Configuration")."""

import os
from datetime import timedelta
from pathlib import Path

import dj_database_url
from django.core.exceptions import ImproperlyConfigured

BASE_DIR = Path(__file__).resolve().parent.parent


def env_bool(name, default=False):
    value = os.environ.get(name)
    if value is None or value == "":
        return default
    return value.strip().lower() in {"1", "true", "yes", "on"}


def env_int(name, default):
    value = os.environ.get(name)
    if value is None or value == "":
        return default
    try:
        return int(value)
    except ValueError as exc:
        raise ImproperlyConfigured(f"{name} must be a whole number, not {value!r}") from exc


DEBUG = env_bool("DEBUG")

SECRET_KEY = os.environ.get("SECRET_KEY", "")
if not SECRET_KEY:
    if not DEBUG:
        raise ImproperlyConfigured(
            "SECRET_KEY is not set. Set SECRET_KEY in the environment to run with DEBUG off "
            "(production mode), or set DEBUG=1 for local development."
        )
    SECRET_KEY = "django-insecure-local-development-only"


def env_list(name, default=""):
    return [item.strip() for item in os.environ.get(name, default).split(",") if item.strip()]


ALLOWED_HOSTS = env_list("ALLOWED_HOSTS", "localhost,127.0.0.1")
# Behind a TLS-terminating proxy: the origins people sign in from (https://tower.example)
# and the header by which the proxy says the request came over HTTPS.
CSRF_TRUSTED_ORIGINS = env_list("CSRF_TRUSTED_ORIGINS")
if os.environ.get("SECURE_PROXY_SSL_HEADER"):
    header, _, value = os.environ["SECURE_PROXY_SSL_HEADER"].partition("=")
    SECURE_PROXY_SSL_HEADER = (header.strip(), value.strip() or "https")

INSTALLED_APPS = [
    "sessions.apps.TowerConfig",
    "django.contrib.admin",
    "django.contrib.auth",
    "django.contrib.contenttypes",
    "django.contrib.sessions",
    "django.contrib.messages",
    "django.contrib.staticfiles",
    "django_htmx",
    "ninja",
    "axes",
]

MIDDLEWARE = [
    "django.middleware.security.SecurityMiddleware",
    "sessions.http.PagePolicy",
    "sessions.http.RequestChecks",
    "whitenoise.middleware.WhiteNoiseMiddleware",
    "django.contrib.sessions.middleware.SessionMiddleware",
    "django.middleware.common.CommonMiddleware",
    "django.middleware.csrf.CsrfViewMiddleware",
    "django.contrib.auth.middleware.AuthenticationMiddleware",
    "sessions.http.PageMessageMiddleware",  # messages, for the pages alone
    "django.middleware.clickjacking.XFrameOptionsMiddleware",
    "django_htmx.middleware.HtmxMiddleware",
    # Last, as django-axes asks: it turns a locked-out sign-in into its answer.
    "axes.middleware.AxesMiddleware",
]

AUTHENTICATION_BACKENDS = [
    # First, so that a locked-out username and address is refused before any password
    # is checked (sign-in page and admin alike).
    "axes.backends.AxesStandaloneBackend",
    "django.contrib.auth.backends.ModelBackend",
]
# Sign-in throttling (django-axes): after LOGIN_FAILURE_LIMIT wrong passwords for one
# username from one address, that pair is refused for LOGIN_COOLOFF_MINUTES (429).
AXES_FAILURE_LIMIT = env_int("LOGIN_FAILURE_LIMIT", 5)
AXES_COOLOFF_TIME = timedelta(minutes=env_int("LOGIN_COOLOFF_MINUTES", 15))
AXES_LOCKOUT_PARAMETERS = [["username", "ip_address"]]
AXES_RESET_ON_SUCCESS = True
AXES_LOCKOUT_TEMPLATE = "registration/locked_out.html"
# Behind a reverse proxy the client's address is in X-Forwarded-For: say how many
# proxies stand in front (see README, "Deploying").
AXES_IPWARE_PROXY_COUNT = env_int("PROXY_COUNT", 0) or None
AXES_IPWARE_META_PRECEDENCE_ORDER = (
    ["HTTP_X_FORWARDED_FOR", "REMOTE_ADDR"] if AXES_IPWARE_PROXY_COUNT else ["REMOTE_ADDR"]
)

ROOT_URLCONF = "controltower.urls"
WSGI_APPLICATION = "controltower.wsgi.application"

TEMPLATES = [
    {
        "BACKEND": "django.template.backends.django.DjangoTemplates",
        "DIRS": [BASE_DIR / "templates"],
        "APP_DIRS": True,
        "OPTIONS": {
            "context_processors": [
                "django.template.context_processors.request",
                "django.contrib.auth.context_processors.auth",
                "django.contrib.messages.context_processors.messages",
            ],
        },
    },
]

DATABASES = {
    "default": dj_database_url.parse(
        os.environ.get("DATABASE_URL") or f"sqlite:///{BASE_DIR / 'db.sqlite3'}",
        # Persistent connections: opening one per request cost more than the append.
        conn_max_age=env_int("CONN_MAX_AGE", 60),
        conn_health_checks=True,
    )
}
if DATABASES["default"]["ENGINE"] == "django.db.backends.sqlite3":
    # Concurrent writers: take the write lock when the transaction begins (no upgrade
    # deadlocks), let readers run beside the writer (WAL), and wait rather than fail.
    DATABASES["default"]["OPTIONS"] = {
        "transaction_mode": "IMMEDIATE",
        "timeout": 30,
        "init_command": "PRAGMA journal_mode=WAL; PRAGMA synchronous=NORMAL;",
    }
else:
    # The hot statements run prepared (`sessions.store.run_prepared`), planned once per
    # connection: planning cost more than running them. Django turns prepared statements
    # off for connection poolers; a pooler in front of this database must keep each
    # connection to one client (PgBouncer's session mode).
    DATABASES["default"].setdefault("OPTIONS", {})["prepare_threshold"] = 5
    # A transaction left open after writing holds the feed's safe position back for every
    # reader (`sessions.store.feed.SafePosition`): the server ends one of the app's after
    # this long idle.
    idle_ms = env_int("IDLE_TRANSACTION_SECONDS", 60) * 1000
    # No statement runs on after its request was given up on, holding a thread and a
    # connection: past this the server stops it, and the request answers 503 saying so
    # (`sessions.store.connections.StatementTimedOut`). 0 turns it off (a long
    # maintenance task run by hand).
    statement_ms = env_int("STATEMENT_TIMEOUT_SECONDS", 10) * 1000
    given = DATABASES["default"]["OPTIONS"].get("options", "")
    DATABASES["default"]["OPTIONS"]["options"] = (
        f"{given} -c idle_in_transaction_session_timeout={idle_ms}"
        f" -c statement_timeout={statement_ms}"
    ).strip()

AUTH_PASSWORD_VALIDATORS = [
    {"NAME": "django.contrib.auth.password_validation.UserAttributeSimilarityValidator"},
    {"NAME": "django.contrib.auth.password_validation.MinimumLengthValidator"},
    {"NAME": "django.contrib.auth.password_validation.CommonPasswordValidator"},
    {"NAME": "django.contrib.auth.password_validation.NumericPasswordValidator"},
]

LANGUAGE_CODE = "en-us"
TIME_ZONE = "UTC"
FORMAT_MODULE_PATH = ["controltower.formats"]
USE_I18N = True
USE_TZ = True

STATIC_URL = "static/"
STATICFILES_DIRS = [BASE_DIR / "static"]
STATIC_ROOT = BASE_DIR / "staticfiles"
STORAGES = {
    "default": {"BACKEND": "django.core.files.storage.FileSystemStorage"},
    "staticfiles": {"BACKEND": "whitenoise.storage.CompressedManifestStaticFilesStorage"},
}

DEFAULT_AUTO_FIELD = "django.db.models.BigAutoField"

LOGIN_URL = "login"
LOGIN_REDIRECT_URL = "board"
LOGOUT_REDIRECT_URL = "login"

# A request body larger than this is refused with 413 before it is parsed.
DATA_UPLOAD_MAX_MEMORY_SIZE = 64 * 1024

# Control Tower's own settings.
STALE_AFTER_MINUTES = env_int("STALE_AFTER_MINUTES", 30)
BLOCKED_ATTENTION_MINUTES = env_int("BLOCKED_ATTENTION_MINUTES", 240)
REVIEW_ATTENTION_MINUTES = env_int("REVIEW_ATTENTION_MINUTES", 1440)
ATTENTION_LINES = 20  # the board's Needs attention strip shows the most overdue
# Board loads closer together than this are one visit: "since you last looked" marks
# the cards changed since the end of the viewer's previous visit.
VISIT_GAP_MINUTES = env_int("VISIT_GAP_MINUTES", 30)
POLL_SECONDS = env_int("POLL_SECONDS", 5)
# How long a closed session stays in the board's (folded) Closed column.
RECENTLY_CLOSED_HOURS = env_int("RECENTLY_CLOSED_HOURS", 24)
# Cards shown per board column before "Show all" (the counts always cover every session).
BOARD_COLUMN_LIMIT = env_int("BOARD_COLUMN_LIMIT", 50)
# The most webhooks one person may have: each is a thread of the delivery worker.
WEBHOOKS_PER_USER = env_int("WEBHOOKS_PER_USER", 10)
# The delivery worker's timeout for connecting and for each read, per POST and per ping
# (`manage.py deliver --timeout-seconds` and `--ping-timeout-seconds` override them).
WEBHOOK_TIMEOUT_SECONDS = env_int("WEBHOOK_TIMEOUT_SECONDS", 10)
# The most a feed request waits for an event (`wait`, a long poll) before it answers with
# none; 0 answers at once. Each waiting request holds a server thread meanwhile.
FEED_WAIT_SECONDS = env_int("FEED_WAIT_SECONDS", 20)
WEBHOOK_PING_TIMEOUT_SECONDS = env_int("WEBHOOK_PING_TIMEOUT_SECONDS", 5)
# Internal networks (CIDRs) a webhook may point into; by default none: loopback, private,
# link-local, CGNAT, multicast and reserved addresses are refused (sessions/rules/addresses.py).
WEBHOOK_ALLOWED_NETWORKS = env_list("WEBHOOK_ALLOWED_NETWORKS")
# Written into a new plan that names none (docs/rules.md, "Liveness"): the minutes of silence
# a node's active session may keep before it lapses, and the cap on attempts at a node
# past which a lapsed one is no longer reclaimed.
LEASE_MINUTES = env_int("LEASE_MINUTES", 30)
MAX_ATTEMPTS = env_int("MAX_ATTEMPTS", 3)
# Where the work lands (docs/rules.md): the secret of the repository's (or GitHub App's)
# webhook — without it /integrations/github answers 404 — and the user its deliveries
# append as (made on first use, never able to sign in).
GITHUB_WEBHOOK_SECRET = os.environ.get("GITHUB_WEBHOOK_SECRET", "")
GITHUB_ACTOR = os.environ.get("GITHUB_ACTOR") or "github"
# Branches many work on at once: two sessions there are not duplicate work.
SHARED_BRANCHES = env_list("SHARED_BRANCHES", "main,master,trunk,develop")
# Spend: a JSON price table (USD per million tokens per model) instead of the shipped one.
PRICES_FILE = os.environ.get("PRICES_FILE", "")

if not DEBUG:
    SECURE_SSL_REDIRECT = env_bool("SECURE_SSL_REDIRECT", True)
    SESSION_COOKIE_SECURE = True
    CSRF_COOKIE_SECURE = True
    SECURE_HSTS_SECONDS = env_int("SECURE_HSTS_SECONDS", 60 * 60 * 24 * 365)
    SECURE_HSTS_INCLUDE_SUBDOMAINS = True
    SECURE_HSTS_PRELOAD = True
    SECURE_CONTENT_TYPE_NOSNIFF = True
    X_FRAME_OPTIONS = "DENY"

# The event table's covering indexes name non-key columns (INCLUDE) for PostgreSQL;
# SQLite builds them without those columns, as Django's warning W040 says: intended, so
# a newcomer's `make run` starts without it.
SILENCED_SYSTEM_CHECKS = ["models.W040"]

# What every answer tells the browser (sessions.http.PagePolicy). Scripts and styles come
# from our own static files only: no inline script, no style attribute, no eval (htmx's
# own are turned off in base.html's htmx-config); images may be data: URLs (Swagger UI's
# icons). Nothing is loaded from elsewhere, and no page may be framed.
CONTENT_SECURITY_POLICY = (
    "default-src 'self'; script-src 'self'; style-src 'self'; img-src 'self' data:;"
    " font-src 'self'; connect-src 'self'; object-src 'none'; base-uri 'self';"
    " form-action 'self'; frame-ancestors 'none'"
)
PERMISSIONS_POLICY = (
    "camera=(), microphone=(), geolocation=(), payment=(), usb=(), interest-cohort=()"
)
# Django's SecurityMiddleware sends these; said here so that they hold with DEBUG on too.
SECURE_CONTENT_TYPE_NOSNIFF = True
SECURE_REFERRER_POLICY = "same-origin"

LOGGING = {
    "version": 1,
    "disable_existing_loggers": False,
    "handlers": {"console": {"class": "logging.StreamHandler"}},
    "root": {"handlers": ["console"], "level": os.environ.get("LOG_LEVEL", "WARNING")},
}
