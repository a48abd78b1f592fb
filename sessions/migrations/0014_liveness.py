# Liveness (docs/rules.md): plan events carry a lease and a cap on attempts; sessions gain
# progress and messages, so their status, next action and activity are read by indexes
# that skip them.

from django.db import migrations, models


class Migration(migrations.Migration):
    dependencies = [
        ("tower", "0013_keyed_starts"),
    ]

    operations = [
        migrations.RemoveIndex(
            model_name="event",
            name="tower_event_noted",
        ),
        migrations.AddField(
            model_name="event",
            name="lease",
            field=models.PositiveIntegerField(blank=True, null=True),
        ),
        migrations.AddField(
            model_name="event",
            name="max_attempts",
            field=models.PositiveIntegerField(blank=True, null=True),
        ),
        migrations.AlterField(
            model_name="event",
            name="outcome",
            field=models.CharField(
                blank=True,
                choices=[
                    ("done", "done"),
                    ("failed", "failed"),
                    ("abandoned", "abandoned"),
                    ("lapsed", "lapsed"),
                ],
                max_length=16,
                null=True,
            ),
        ),
        migrations.AlterField(
            model_name="event",
            name="type",
            field=models.CharField(
                choices=[
                    ("session_start", "session_start"),
                    ("session_block", "session_block"),
                    ("session_unblock", "session_unblock"),
                    ("session_review", "session_review"),
                    ("session_close", "session_close"),
                    ("session_progress", "session_progress"),
                    ("session_message", "session_message"),
                    ("plan_create", "plan_create"),
                    ("plan_amend", "plan_amend"),
                ],
                max_length=16,
            ),
        ),
        migrations.AlterField(
            model_name="subscription",
            name="event_type",
            field=models.CharField(
                blank=True,
                choices=[
                    ("session_start", "session_start"),
                    ("session_block", "session_block"),
                    ("session_unblock", "session_unblock"),
                    ("session_review", "session_review"),
                    ("session_close", "session_close"),
                    ("session_progress", "session_progress"),
                    ("session_message", "session_message"),
                    ("plan_create", "plan_create"),
                    ("plan_amend", "plan_amend"),
                ],
                max_length=32,
                verbose_name="event type",
            ),
        ),
        migrations.AddIndex(
            model_name="event",
            index=models.Index(
                condition=models.Q(
                    ("note__isnull", False),
                    (
                        "type__in",
                        ["session_start", "session_unblock", "session_review", "session_close"],
                    ),
                ),
                fields=["session", "seq"],
                name="tower_event_next_actions",
            ),
        ),
        migrations.AddIndex(
            model_name="event",
            index=models.Index(
                condition=models.Q(
                    (
                        "type__in",
                        (
                            "session_start",
                            "session_block",
                            "session_unblock",
                            "session_review",
                            "session_close",
                        ),
                    )
                ),
                fields=["session", "seq"],
                name="tower_event_transitions",
            ),
        ),
        migrations.AddIndex(
            model_name="event",
            index=models.Index(
                condition=models.Q(("note__isnull", False), ("type", "session_progress")),
                fields=["session", "seq"],
                name="tower_event_progress_notes",
            ),
        ),
    ]
