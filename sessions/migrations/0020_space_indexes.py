# Space (docs/rules.md): the plans that name a repository, and a session's reports of
# the paths it wrote, each found by a partial index of their few events.


from django.db import migrations, models

PLAN_EVENT_TYPES = ["plan_create", "plan_amend"]


class Migration(migrations.Migration):
    dependencies = [
        ("tower", "0019_budgets_and_paths"),
    ]

    operations = [
        migrations.AddIndex(
            model_name="event",
            index=models.Index(
                condition=models.Q(type__in=PLAN_EVENT_TYPES, repo__isnull=False),
                fields=["session", "seq"],
                name="tower_event_plan_repos",
            ),
        ),
        migrations.AddIndex(
            model_name="event",
            index=models.Index(
                condition=models.Q(type="session_progress", paths__isnull=False),
                fields=["session", "seq"],
                name="tower_event_touched",
            ),
        ),
    ]
