"""Buckets and uploads in the operator console, usable at a million rows: no full COUNT(*) per page.

Buckets are created through uploads.services.create_bucket (validated, audited); no service
renames or moves a bucket or edits an upload, so those pages are read-only.
"""

from django.contrib import admin
from django.core.paginator import Paginator
from django.utils.functional import cached_property

from controlplane.admin_site import ConsoleAdmin, ConsoleInline, through_service

from . import services
from .models import Alias, Bucket, MetaUpload, Upload

COUNT_CAP = 10_000
AUTHOR_FIELDS = ["author_user_id", "author_username", "last_modified_by_user_id", "last_modified_by_username"]
INTEGRATION_FIELDS = ["integration_hidden", "external_path", "is_virtual_file"]
INTEGRATION_FIELDS += ["allow_any_extension", "default_slug_extension"]
GENERATION_FIELDS = ["thumbnail_generation_version", "ai_description_generation_version", "ai_tags_generation_version"]
GENERATION_FIELDS += ["virus_scan_generation_version", "ai_description_input_ref"]
THUMBNAIL_FIELDS = ["thumbnail_content_type_urn", "thumbnail_content_type_icon_name", "thumbnail_content_type_icon_url"]


class CappedCountPaginator(Paginator):
    """Counts at most COUNT_CAP + 1 rows (a bounded index scan), not the whole table;
    beyond that the admin shows the first COUNT_CAP rows' worth of pages."""

    @cached_property
    def count(self):
        return self.object_list.values("pk")[: COUNT_CAP + 1].count()


@admin.register(Bucket)
class BucketAdmin(ConsoleAdmin):
    list_display = ("name", "namespace", "id", "created_at")
    list_filter = ("namespace",)
    search_fields = ("name", "=id")
    list_select_related = ("namespace",)
    readonly_fields = ("id", "created_at")
    service_writes = frozenset({"add"})

    def get_fields(self, request, obj=None):
        return ("namespace", "name", "id", "created_at") if obj is not None else ("namespace", "name")

    def save_model(self, request, obj, form, change):
        bucket = through_service(
            services.create_bucket, actor=request.principal, namespace=obj.namespace.name, name=obj.name
        )
        # The admin's history entry and redirect need the saved row's identity.
        obj.pk, obj.created_at = bucket.pk, bucket.created_at
        obj._state.adding = False


class AliasInline(ConsoleInline, admin.TabularInline):
    model = Alias
    verbose_name_plural = "aliases"
    extra = 0


class MetaUploadInline(ConsoleInline, admin.TabularInline):
    model = MetaUpload
    extra = 0


@admin.register(Upload)
class UploadAdmin(ConsoleAdmin):
    list_display = ("upload_id", "slug", "path", "bucket", "size_bytes", "private", "created_at")
    list_filter = ("bucket", "private", "is_virtual_file", "integration_hidden")
    list_select_related = ("bucket__namespace",)
    # uploadId exactly, or a slug prefix (served by the folded-slug index); never a full scan.
    search_fields = ("=upload_id",)
    search_help_text = "An uploadId, or the beginning of a slug."
    ordering = ("-created_at", "-upload_id")
    show_full_result_count = False
    paginator = CappedCountPaginator
    inlines = (AliasInline, MetaUploadInline)
    date_hierarchy = None
    # The record reads top-down as ListUploads returns it; the rarely needed parts fold away.
    fieldsets = [
        (None, {"fields": ["upload_id", "bucket", "path", "slug", "url", "content_url", "size_bytes", "private"]}),
        (None, {"fields": ["tags", "metadata_kvs", "intent_metadata", "generated_description", "order", "version"]}),
        ("Dates and authors", {"fields": ["created_at", "updated_at", *AUTHOR_FIELDS]}),
        ("Integration", {"fields": ["integration_id", *INTEGRATION_FIELDS]}),
        ("Generation versions", {"fields": GENERATION_FIELDS, "classes": ["collapse"]}),
        ("Thumbnail", {"fields": THUMBNAIL_FIELDS, "classes": ["collapse"]}),
    ]

    def get_search_results(self, request, queryset, search_term):
        term = search_term.strip()
        if not term:
            return queryset, False
        return queryset.filter(upload_id=term) | queryset.filter(slug_folded__startswith=term.lower()), False
