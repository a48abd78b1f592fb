"""Settings for the test suite: production settings, with what tests need on top."""

import os
import secrets

os.environ.setdefault("SECRET_KEY", secrets.token_urlsafe(50))
# The tests' webhook receivers listen on loopback, as an operator's internal receiver
# would be allowed (tests of the address rules set it empty). The worker processes the
# tests start read the same settings.
os.environ.setdefault("WEBHOOK_ALLOWED_NETWORKS", "127.0.0.0/8,::1/128")

from controltower.settings import *  # noqa: F403
from controltower.settings import BASE_DIR, DATABASES, INSTALLED_APPS

# Its `flush` lifts the immutability triggers while Django empties the test database
# between transactional tests, and puts them back.
INSTALLED_APPS = ["tests.flushing", *INSTALLED_APPS]

# The live server and test clients speak plain HTTP.
SECURE_SSL_REDIRECT = False
SESSION_COOKIE_SECURE = False
CSRF_COOKIE_SECURE = False
SECURE_HSTS_SECONDS = 0

STORAGES = {
    "default": {"BACKEND": "django.core.files.storage.FileSystemStorage"},
    "staticfiles": {"BACKEND": "django.contrib.staticfiles.storage.StaticFilesStorage"},
}
PASSWORD_HASHERS = ["django.contrib.auth.hashers.MD5PasswordHasher"]

if DATABASES["default"]["ENGINE"] == "django.db.backends.sqlite3":
    # A real file, so that other threads and processes share it.
    DATABASES["default"]["TEST"] = {
        "NAME": os.environ.get("TEST_SQLITE_PATH", str(BASE_DIR / ".test-db.sqlite3"))
    }

# Static files come straight from static/ (no collectstatic before tests).
STATIC_ROOT = None
WHITENOISE_USE_FINDERS = True
