from django.db import migrations

from sessions import triggers


def install(apps, schema_editor):
    triggers.install(schema_editor.connection)


def remove(apps, schema_editor):
    triggers.remove(schema_editor.connection)


class Migration(migrations.Migration):
    dependencies = [("tower", "0001_initial")]

    operations = [migrations.RunPython(install, remove)]
