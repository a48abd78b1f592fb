"""A token stands for its user: the lookup reads a few fields and the rest on demand."""

from sessions.tokens import user_for_token


def test_a_token_user_has_the_flags_and_fields_of_the_stored_user(make_user, token_for):
    staff = make_user("sam", is_staff=True, email="sam@example.com", first_name="Sam")
    user = user_for_token(token_for(staff))
    assert (user.pk, user.get_username(), user.is_active, user.is_staff, user.is_superuser) == (
        staff.pk,
        "sam",
        True,
        True,
        False,
    )
    assert (user.email, user.first_name) == ("sam@example.com", "Sam")


def test_an_unknown_token_stands_for_nobody(db):
    assert user_for_token("ct_not-a-token") is None
