# Running the plan (docs/rules.md): a session's close may say `released`, its worker
# handing the node back unfinished. The column is unchanged (text of at most 16
# characters); only the choices Django checks a model against grow.

from django.db import migrations, models


class Migration(migrations.Migration):
    dependencies = [
        ("tower", "0020_space_indexes"),
    ]

    operations = [
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
                    ("released", "released"),
                ],
                max_length=16,
                null=True,
            ),
        ),
    ]
