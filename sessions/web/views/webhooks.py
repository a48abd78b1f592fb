"""A person's webhooks: added, listed with their recent deliveries, pinged, removed."""

from django.http import Http404
from django.shortcuts import redirect, render

from sessions.domain import webhooks
from sessions.rules import subscriptions
from sessions.web.forms import (
    SubscriptionForm,
)
from sessions.web.pages import (
    WITH_FORM,
    action,
    page,
)


@page("webhooks/", "webhooks", methods=WITH_FORM)
def webhook_list(request):
    """A person's webhooks: add one (filters and payload), see each one's recent
    deliveries and their last status, send a ping, remove one."""
    form = SubscriptionForm(request.POST or None)
    if request.method == "POST" and form.is_valid():
        try:
            subscriptions.subscribe(request.user, **form.cleaned_data)
            return redirect("webhooks")
        except subscriptions.UnsafeWebhookUrl as refused:
            form.add_error("url", refused.detail)
        except subscriptions.TooManyWebhooks as refused:
            form.add_error(None, refused.detail)
    context = {
        "form": form,
        # Each webhook, its latest deliveries, and whether a ping waits for the worker
        # (its section then refreshes itself until the answer comes).
        "subscriptions": [
            (row, shown, any(d.position is None and not d.attempts for d in shown))
            for row in subscriptions.visible_subscriptions(request.user)
            for shown in [subscriptions.recent_deliveries(row)]
        ],
        "signature_header": webhooks.SIGNATURE_HEADER,
        "timestamp_header": webhooks.TIMESTAMP_HEADER,
        "delivery_header": webhooks.DELIVERY_HEADER,
    }
    return render(request, "sessions/webhooks.html", context, status=400 if form.errors else 200)


def _visible_subscription(request, subscription_id):
    found = subscriptions.visible_subscription(request.user, subscription_id)
    if found is None:
        raise Http404("No such webhook.")
    return found


@action("webhooks/<int:subscription_id>/ping", "webhook_ping")
def webhook_ping(request, subscription_id):
    subscriptions.request_ping(_visible_subscription(request, subscription_id))
    return redirect("webhooks")


@action("webhooks/<int:subscription_id>/remove", "webhook_remove")
def webhook_remove(request, subscription_id):
    subscriptions.remove(_visible_subscription(request, subscription_id))
    return redirect("webhooks")
