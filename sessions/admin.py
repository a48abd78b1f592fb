"""The admin: a read-only audit trail of every event, and API token management."""

from django.contrib import admin
from django.contrib.auth import get_user_model
from django.contrib.auth.admin import UserAdmin
from django.utils import timezone
from django.utils.html import format_html

from sessions.models import ApiToken, Event
from sessions.rules import identity

# Control Tower's audit trail, by its own name (the templates/admin/base_site.html header).
admin.site.site_header = "Control Tower · audit"
admin.site.site_title = "Control Tower audit"
admin.site.index_title = "The audit trail, users and tokens"


@admin.register(Event)
class EventAdmin(admin.ModelAdmin):
    list_display = ["timestamp", "session", "seq", "type", "actor", "agent", "note_or_reason"]
    list_filter = ["type", "actor", "agent", ("timestamp", admin.DateFieldListFilter)]
    search_fields = ["session", "note", "reason", "title"]
    date_hierarchy = "timestamp"
    ordering = ["-timestamp", "-id"]
    list_per_page = 100
    show_full_result_count = False

    class Media:
        css = {"all": ["css/audit.css"]}

    @admin.display(description="note / reason")
    def note_or_reason(self, event):
        text = event.reason if event.reason is not None else (event.note or event.title or "")
        return format_html('<span class="audit-text">{}</span>', text)

    # An audit view: nobody, superusers included, may add, change or delete events.
    def has_add_permission(self, request):
        return False

    def has_change_permission(self, request, obj=None):
        return False

    def has_delete_permission(self, request, obj=None):
        return False


@admin.register(ApiToken)
class ApiTokenAdmin(admin.ModelAdmin):
    list_display = ["name", "user", "prefix", "created_at", "last_used_at", "revoked_at"]
    list_filter = ["revoked_at"]
    search_fields = ["name", "prefix", "user__username"]
    readonly_fields = ["user", "prefix", "created_at", "last_used_at", "revoked_at"]
    fields = ["name", "user", "prefix", "created_at", "last_used_at", "revoked_at"]
    actions = ["revoke"]

    # Tokens are made by `manage.py create_token`, which shows the secret once.
    def has_add_permission(self, request):
        return False

    @admin.action(description="Revoke the selected tokens")
    def revoke(self, request, queryset):
        count = queryset.filter(revoked_at__isnull=True).update(revoked_at=timezone.now())
        self.message_user(request, f"Revoked {count} token(s).")


class TowerUserAdmin(UserAdmin):
    """Users who have appended events keep their username for good (`identity`): the
    admin offers to deactivate them, never to delete or rename them."""

    def get_actions(self, request):
        actions = super().get_actions(request)
        actions.pop("delete_selected", None)
        return actions

    def has_delete_permission(self, request, obj=None):
        if obj is not None and identity.has_acted(obj.get_username()):
            return False
        return super().has_delete_permission(request, obj)

    def get_readonly_fields(self, request, obj=None):
        readonly = list(super().get_readonly_fields(request, obj))
        if obj is not None and identity.has_acted(obj.get_username()):
            readonly.append(obj.USERNAME_FIELD)
        return readonly


if admin.site.is_registered(get_user_model()):
    admin.site.unregister(get_user_model())
admin.site.register(get_user_model(), TowerUserAdmin)
