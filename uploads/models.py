"""Buckets and the upload record (spec 001 §2).

Storage choices, for ListUploads at a million rows per bucket:
- every sort field is NOT NULL and has a composite index (bucket, field, upload_id), so a
  page is one index range scan in either direction, from the start or from a cursor;
- tags and metadataKvs are JSON columns in the record's own shape: one row read per
  upload, no child query. On PostgreSQL the tags, metadata and slug-prefix filters are one
  GIN containment on uploads_facets() (migration 0005); elsewhere json_each (page_query.py);
- slug_folded (lower-cased slug) serves the case-insensitive prefix filter from a
  text_pattern_ops index; on PostgreSQL the folder filter has a covering index holding
  every sort key (upl_bucket_path_sorts, migration 0005);
- aliases and metaUploads are child tables (they have ids of their own), aggregated into
  the page's one statement (page_query.py).
"""

import uuid

from django.db import models

from namespaces.models import Namespace


class Bucket(models.Model):
    id = models.UUIDField(primary_key=True, default=uuid.uuid4, editable=False)
    namespace = models.ForeignKey(Namespace, on_delete=models.CASCADE, related_name="buckets")
    name = models.CharField(max_length=63)
    created_at = models.DateTimeField(auto_now_add=True)

    class Meta:
        ordering = ["namespace__name", "name"]
        constraints = [models.UniqueConstraint(fields=["namespace", "name"], name="uniq_bucket_name")]

    def __str__(self):
        return f"{self.namespace.name}/{self.name}"


class Integration(models.Model):
    """An integration as one namespace's upload records describe it.

    Scoped to the namespace: the same integrationId imported in two namespaces is two rows,
    so one tenant's import or seed never changes what another tenant's ListUploads shows.
    """

    class FolderBehavior(models.IntegerChoices):
        UNSPECIFIED = 0
        MIRROR = 1
        FLATTEN = 2
        LINK = 3

    class Mode(models.IntegerChoices):
        UNSPECIFIED = 0
        IMPORT = 1
        SYNC = 2
        EXPORT = 3

    namespace = models.ForeignKey(Namespace, on_delete=models.CASCADE, related_name="integrations")
    integration_id = models.UUIDField()
    name = models.CharField(max_length=256, blank=True)
    oauth_client_id = models.CharField(max_length=256, blank=True)
    folder_behavior = models.PositiveSmallIntegerField(choices=FolderBehavior.choices, default=0)
    folder_link_url = models.TextField(blank=True)
    mode = models.PositiveSmallIntegerField(choices=Mode.choices, default=0)
    bucket_launcher_enabled = models.BooleanField(default=False)

    class Meta:
        constraints = [
            models.UniqueConstraint(fields=["namespace", "integration_id"], name="uniq_integration_per_namespace")
        ]

    def __str__(self):
        return self.name or str(self.integration_id)


class Upload(models.Model):
    upload_id = models.CharField(max_length=64, primary_key=True)
    bucket = models.ForeignKey(Bucket, on_delete=models.CASCADE, related_name="uploads", db_index=False)
    path = models.TextField(blank=True)
    slug = models.TextField(blank=True)
    slug_folded = models.TextField(blank=True, editable=False)  # slug.lower(), for the prefix filter
    url = models.TextField(blank=True)
    content_url = models.TextField(blank=True)
    size_bytes = models.BigIntegerField(default=0)
    tags = models.JSONField(default=list, blank=True)
    # Plain column, not a foreign key: a record may name an integration we hold no row for.
    integration_id = models.UUIDField(null=True, blank=True)
    allow_any_extension = models.BooleanField(default=False)
    default_slug_extension = models.CharField(max_length=64, blank=True)
    generated_description = models.TextField(blank=True)
    private = models.BooleanField(default=False)
    created_at = models.DateTimeField()
    updated_at = models.DateTimeField()
    author_user_id = models.CharField(max_length=128, blank=True)
    author_username = models.CharField(max_length=256, blank=True)
    last_modified_by_user_id = models.CharField(max_length=128, blank=True)
    last_modified_by_username = models.CharField(max_length=256, blank=True)
    thumbnail_generation_version = models.IntegerField(default=0)
    ai_description_generation_version = models.IntegerField(default=0)
    ai_tags_generation_version = models.IntegerField(default=0)
    virus_scan_generation_version = models.IntegerField(default=0)
    ai_description_input_ref = models.TextField(blank=True)
    intent_metadata = models.JSONField(default=dict, blank=True)
    external_path = models.TextField(blank=True)
    order = models.IntegerField(default=0)
    is_virtual_file = models.BooleanField(default=False)
    integration_hidden = models.BooleanField(default=False)
    version = models.IntegerField(default=0)
    thumbnail_content_type_urn = models.TextField(blank=True)
    thumbnail_content_type_icon_name = models.TextField(blank=True)
    thumbnail_content_type_icon_url = models.TextField(blank=True)
    # [{key, valueType, value, title, iconName, hiddenFromUsers}] exactly as in the record.
    metadata_kvs = models.JSONField(default=list, blank=True)

    class Meta:
        indexes = [
            models.Index(fields=["bucket", "created_at", "upload_id"], name="upl_bucket_created"),
            models.Index(fields=["bucket", "updated_at", "upload_id"], name="upl_bucket_updated"),
            models.Index(fields=["bucket", "slug", "upload_id"], name="upl_bucket_slug"),
            models.Index(fields=["bucket", "size_bytes", "upload_id"], name="upl_bucket_size"),
            models.Index(fields=["bucket", "order", "upload_id"], name="upl_bucket_order"),
            # Across buckets: the admin's list and ListUploads without a bucket, newest first.
            models.Index(fields=["created_at", "upload_id"], name="upl_created"),
            models.Index(fields=["slug_folded"], name="upl_slug_folded", opclasses=["text_pattern_ops"]),
            # text_pattern_ops (PostgreSQL only; ignored elsewhere) makes LIKE 'prefix%' indexable.
            models.Index(
                fields=["bucket", "slug_folded"], name="upl_bucket_slug_folded", opclasses=["", "text_pattern_ops"]
            ),
        ]

    def __str__(self):
        return self.slug or self.upload_id


class Alias(models.Model):
    alias_id = models.CharField(max_length=64, primary_key=True)
    upload = models.ForeignKey(Upload, on_delete=models.CASCADE, related_name="aliases")
    position = models.PositiveIntegerField(default=0)
    path = models.TextField(blank=True)
    slug = models.TextField(blank=True)
    url = models.TextField(blank=True)
    has_password = models.BooleanField(default=False)
    expires_at = models.DateTimeField(null=True, blank=True)
    max_uses = models.IntegerField(default=0)
    use_count = models.IntegerField(default=0)
    allowed_user_ids = models.JSONField(default=list, blank=True)
    created_at = models.DateTimeField(null=True, blank=True)
    external_path = models.TextField(blank=True)

    class Meta:
        ordering = ["upload", "position"]

    def __str__(self):
        return self.slug or self.alias_id


class MetaUpload(models.Model):
    upload = models.ForeignKey(Upload, on_delete=models.CASCADE, related_name="meta_uploads")
    position = models.PositiveIntegerField(default=0)
    type_name = models.CharField(max_length=128, blank=True)
    type_n = models.IntegerField(default=0)
    type_filename = models.TextField(blank=True)
    metadata_id = models.CharField(max_length=128, blank=True)
    upload_url = models.TextField(blank=True)
    download_url = models.TextField(blank=True)

    class Meta:
        ordering = ["upload", "position"]

    def __str__(self):
        return f"{self.type_name} #{self.type_n}"


class BucketMetadataKey(models.Model):
    """Which value types each metadata key holds in a bucket: decides whether a key may be
    filtered (STRING/BOOL) without scanning uploads. Maintained by the write services."""

    bucket = models.ForeignKey(Bucket, on_delete=models.CASCADE, related_name="metadata_keys")
    key = models.CharField(max_length=512)
    value_type = models.PositiveSmallIntegerField()

    class Meta:
        constraints = [
            models.UniqueConstraint(fields=["bucket", "key", "value_type"], name="uniq_bucket_metadata_key_type")
        ]

    def __str__(self):
        return f"{self.key} ({self.value_type})"
