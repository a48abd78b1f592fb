# Which agent program appended a session event for its actor (docs/rules.md, "Vocabulary"):
# a nullable column, absent on every event written before.

from django.db import migrations, models


class Migration(migrations.Migration):
    dependencies = [
        ("tower", "0022_node_briefs"),
    ]

    operations = [
        migrations.AddField(
            model_name="event",
            name="agent",
            field=models.CharField(blank=True, max_length=100, null=True),
        ),
    ]
