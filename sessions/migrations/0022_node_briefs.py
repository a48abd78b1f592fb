# A node's brief (docs/rules.md, "Running the plan"): a plan_create's nodes carry it in
# their JSON; an amend's per-node briefs (`{key: text or null}`) are JSON text of their own.

from django.db import migrations, models


class Migration(migrations.Migration):
    dependencies = [
        ("tower", "0021_released_outcome"),
    ]

    operations = [
        migrations.AddField(
            model_name="event",
            name="briefs",
            field=models.TextField(blank=True, null=True),
        ),
    ]
