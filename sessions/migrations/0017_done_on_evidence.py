# Done on evidence (docs/rules.md): a plan says what makes a node done, its session's
# close or its pull request's merge.


from django.db import migrations, models


class Migration(migrations.Migration):
    dependencies = [
        ("tower", "0016_where_the_work_lands"),
    ]

    operations = [
        migrations.AddField(
            model_name="event",
            name="done_when",
            field=models.CharField(blank=True, max_length=8, null=True),
        ),
    ]
