# Tokens with a scope (read, or read and write) and an end (docs/rules.md, "Surfaces").

from django.db import migrations, models


class Migration(migrations.Migration):
    dependencies = [
        ("tower", "0014_liveness"),
    ]

    operations = [
        migrations.AddField(
            model_name="apitoken",
            name="expires_at",
            field=models.DateTimeField(blank=True, null=True),
        ),
        migrations.AddField(
            model_name="apitoken",
            name="scope",
            field=models.CharField(
                choices=[("read", "read"), ("write", "read and write")],
                default="write",
                max_length=5,
            ),
        ),
    ]
