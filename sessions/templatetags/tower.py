from datetime import timedelta

from django import template
from django.utils import timezone
from django.utils.timesince import timesince

register = template.Library()


@register.filter
def age(moment):
    """How long ago `moment` was, for people: "just now" under a minute."""
    if moment is None:
        return ""
    if timezone.now() - moment < timedelta(minutes=1):
        return "just now"
    return f"{timesince(moment)} ago"


@register.filter
def words(name):
    """A state's name as words: `upstream_failed` → `upstream failed`."""
    return str(name).replace("_", " ")


@register.filter
def get_item(mapping, key):
    """`mapping[key]`, or None (e.g. a running node's session view)."""
    return mapping.get(key) if mapping and key is not None else None
