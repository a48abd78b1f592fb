from django.apps import AppConfig


class TowerConfig(AppConfig):
    # The label "sessions" belongs to django.contrib.sessions.
    name = "sessions"
    label = "tower"
    verbose_name = "Control Tower"
    default_auto_field = "django.db.models.BigAutoField"

    def ready(self):
        from sessions import config  # (and registers the settings' checks)
        from sessions.rules import identity
        from sessions.rules import subscriptions as webhooks

        config.prices()  # a malformed PRICES_FILE stops the start, naming what is wrong
        identity.connect()
        webhooks.connect()
