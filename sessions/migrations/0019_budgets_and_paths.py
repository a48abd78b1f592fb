# Budgets and space (docs/rules.md): a plan's budget in US dollars, an amend's per-node
# budgets and path patterns, and a heartbeat's touched paths (the last two, JSON text).


from django.db import migrations, models


class Migration(migrations.Migration):
    dependencies = [
        ("tower", "0018_spend"),
    ]

    operations = [
        migrations.AddField(
            model_name="event",
            name="budget_usd",
            field=models.DecimalField(blank=True, decimal_places=2, max_digits=9, null=True),
        ),
        migrations.AddField(
            model_name="event",
            name="budgets",
            field=models.TextField(blank=True, null=True),
        ),
        migrations.AddField(
            model_name="event",
            name="paths",
            field=models.TextField(blank=True, null=True),
        ),
    ]
