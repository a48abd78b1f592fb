# Where the work lands (docs/rules.md): session_work, the eighth session type, with its
# fields (commit and check under column names of their own: SQL keywords), and the
# indexes a forge delivery finds its sessions by (a branch, a commit).


from django.db import migrations, models


class Migration(migrations.Migration):
    dependencies = [
        ("tower", "0015_token_scope_and_expiry"),
    ]

    operations = [
        migrations.AddField(
            model_name="event",
            name="branch",
            field=models.CharField(blank=True, max_length=255, null=True),
        ),
        migrations.AddField(
            model_name="event",
            name="check_name",
            field=models.CharField(blank=True, max_length=200, null=True),
        ),
        migrations.AddField(
            model_name="event",
            name="check_state",
            field=models.CharField(blank=True, max_length=8, null=True),
        ),
        migrations.AddField(
            model_name="event",
            name="commit_sha",
            field=models.CharField(blank=True, max_length=40, null=True),
        ),
        migrations.AddField(
            model_name="event",
            name="pr",
            field=models.PositiveIntegerField(blank=True, null=True),
        ),
        migrations.AddField(
            model_name="event",
            name="pr_state",
            field=models.CharField(blank=True, max_length=8, null=True),
        ),
        migrations.AddField(
            model_name="event",
            name="pr_url",
            field=models.CharField(blank=True, max_length=500, null=True),
        ),
        migrations.AddField(
            model_name="event",
            name="repo",
            field=models.CharField(blank=True, max_length=200, null=True),
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
                    ("session_work", "session_work"),
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
                    ("session_work", "session_work"),
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
                condition=models.Q(("branch__isnull", False), ("type", "session_work")),
                fields=["branch", "session"],
                name="tower_event_work_branches",
            ),
        ),
        migrations.AddIndex(
            model_name="event",
            index=models.Index(
                condition=models.Q(("commit_sha__isnull", False), ("type", "session_work")),
                fields=["commit_sha", "session", "seq"],
                name="tower_event_work_commits",
            ),
        ),
    ]
