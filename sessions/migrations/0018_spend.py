# Spend (docs/rules.md): session_usage, the ninth session type, with its model (under a
# column name of its own) and its four token totals.


from django.db import migrations, models

EVENT_TYPES = [
    "session_start",
    "session_block",
    "session_unblock",
    "session_review",
    "session_close",
    "session_progress",
    "session_message",
    "session_work",
    "session_usage",
    "plan_create",
    "plan_amend",
]


class Migration(migrations.Migration):
    dependencies = [
        ("tower", "0017_done_on_evidence"),
    ]

    operations = [
        migrations.AddField(
            model_name="event",
            name="usage_model",
            field=models.CharField(blank=True, max_length=100, null=True),
        ),
        *[
            migrations.AddField(
                model_name="event",
                name=name,
                field=models.BigIntegerField(blank=True, null=True),
            )
            for name in ("input_tokens", "output_tokens", "cache_read_tokens", "cache_write_tokens")
        ],
        migrations.AlterField(
            model_name="event",
            name="type",
            field=models.CharField(choices=[(t, t) for t in EVENT_TYPES], max_length=16),
        ),
        migrations.AlterField(
            model_name="subscription",
            name="event_type",
            field=models.CharField(
                blank=True,
                choices=[(t, t) for t in EVENT_TYPES],
                max_length=32,
                verbose_name="event type",
            ),
        ),
    ]
