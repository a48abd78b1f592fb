"""A token stands for its user: the lookup reads a few fields and the rest on demand."""

from django.contrib.auth.base_user import AbstractBaseUser
from django.contrib.auth.models import User
from django.db import models

from sessions.rules.tokens import bearer_for_token
from sessions.store.tokens import _user_query


def test_a_token_user_has_the_flags_and_fields_of_the_stored_user(make_user, token_for):
    staff = make_user("sam", is_staff=True, email="sam@example.com", first_name="Sam")
    user = bearer_for_token(token_for(staff)).user
    assert (user.pk, user.get_username(), user.is_active, user.is_staff, user.is_superuser) == (
        staff.pk,
        "sam",
        True,
        True,
        False,
    )
    assert (user.email, user.first_name) == ("sam@example.com", "Sam")


def test_an_unknown_token_stands_for_nobody(db):
    assert bearer_for_token("ct_not-a-token") is None


class Member(AbstractBaseUser):
    """A custom user model: its own primary key column and no `is_active` field."""

    uid = models.BigAutoField(primary_key=True, db_column="member_uid")
    handle = models.CharField(max_length=40, unique=True)
    USERNAME_FIELD = "handle"

    class Meta:
        app_label = "flushing"
        managed = False
        db_table = "member"


def test_the_token_lookup_is_built_from_a_custom_user_models_own_names():
    sql, fields = _user_query("sqlite", Member)
    assert 'u."member_uid"' in sql and '"member" u' in sql
    assert "is_active" not in sql and "u.id" not in sql
    assert fields == ["uid", "handle"]


def test_the_token_lookup_filters_on_is_active_where_the_model_has_it():
    sql, fields = _user_query("sqlite", User)
    assert 'u."is_active"' in sql and "is_active" in fields
