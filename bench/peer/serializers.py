"""Nested ModelSerializers with the JSON field names of the product's API (proto3 JSON)."""

from rest_framework import serializers

from controlplane.auth import Role
from namespaces.models import GroupBinding, ImagePullSecret, InternalTarget, Namespace
from uploads.models import Alias, Integration, MetaUpload, Upload


class EnumNameField(serializers.ReadOnlyField):
    """An IntegerChoices value as its proto enum name, e.g. 3 → "INTEGRATION_MODE_EXPORT"."""

    def __init__(self, enum, prefix: str, **kwargs):
        self.enum, self.prefix = enum, prefix
        super().__init__(**kwargs)

    def to_representation(self, value):
        return f"{self.prefix}{self.enum(value).name}"


# ---- GetNamespace ---------------------------------------------------------------------------


class GroupBindingSerializer(serializers.ModelSerializer):
    oidcGroup = serializers.CharField(source="oidc_group")
    role = EnumNameField(Role, "ROLE_")

    class Meta:
        model = GroupBinding
        fields = ["oidcGroup", "role"]


class InternalTargetSerializer(serializers.ModelSerializer):
    class Meta:
        model = InternalTarget
        fields = ["name", "host", "ports"]


class ImagePullSecretSerializer(serializers.ModelSerializer):
    secretRef = serializers.CharField(source="secret_ref")

    class Meta:
        model = ImagePullSecret
        fields = ["registry", "secretRef"]


class QuotasSerializer(serializers.ModelSerializer):
    maxSandboxes = serializers.IntegerField(source="max_sandboxes")
    maxRunningJobs = serializers.IntegerField(source="max_running_jobs")
    maxWorkspaces = serializers.IntegerField(source="max_workspaces")
    maxEnvironments = serializers.IntegerField(source="max_environments")
    maxEgressGrants = serializers.IntegerField(source="max_egress_grants")

    class Meta:
        model = Namespace
        fields = ["maxSandboxes", "maxRunningJobs", "maxWorkspaces", "maxEnvironments", "maxEgressGrants"]


class NamespaceSerializer(serializers.ModelSerializer):
    namespace = serializers.CharField(source="name")
    groups = GroupBindingSerializer(source="group_bindings", many=True)
    internalTargets = InternalTargetSerializer(source="internal_targets", many=True)
    imagePullSecrets = ImagePullSecretSerializer(source="image_pull_secrets", many=True)
    quotas = QuotasSerializer(source="*")
    createTime = serializers.DateTimeField(source="created_at")
    updateTime = serializers.DateTimeField(source="updated_at")

    class Meta:
        model = Namespace
        fields = ["namespace", "groups", "internalTargets", "imagePullSecrets", "quotas", "createTime", "updateTime"]


# ---- ListUploads ----------------------------------------------------------------------------


class IntegrationSerializer(serializers.ModelSerializer):
    integrationId = serializers.UUIDField(source="integration_id")
    oauthClientId = serializers.CharField(source="oauth_client_id")
    folderBehavior = EnumNameField(Integration.FolderBehavior, "INTEGRATION_FOLDER_BEHAVIOR_", source="folder_behavior")
    folderLinkUrl = serializers.CharField(source="folder_link_url")
    mode = EnumNameField(Integration.Mode, "INTEGRATION_MODE_")
    bucketLauncherEnabled = serializers.BooleanField(source="bucket_launcher_enabled")

    class Meta:
        model = Integration
        fields = ["integrationId", "name", "oauthClientId", "folderBehavior", "folderLinkUrl", "mode"]
        fields += ["bucketLauncherEnabled"]


class MetaUploadTypeSerializer(serializers.ModelSerializer):
    name = serializers.CharField(source="type_name")
    n = serializers.IntegerField(source="type_n")
    filename = serializers.CharField(source="type_filename")

    class Meta:
        model = MetaUpload
        fields = ["name", "n", "filename"]


class MetaUploadSerializer(serializers.ModelSerializer):
    type = MetaUploadTypeSerializer(source="*")
    metadataId = serializers.CharField(source="metadata_id")
    uploadUrl = serializers.CharField(source="upload_url")
    downloadUrl = serializers.CharField(source="download_url")

    class Meta:
        model = MetaUpload
        fields = ["type", "metadataId", "uploadUrl", "downloadUrl"]


class AliasSerializer(serializers.ModelSerializer):
    aliasId = serializers.CharField(source="alias_id")
    uploadId = serializers.CharField(source="upload_id")
    hasPassword = serializers.BooleanField(source="has_password")
    expiresAt = serializers.DateTimeField(source="expires_at")
    maxUses = serializers.IntegerField(source="max_uses")
    useCount = serializers.IntegerField(source="use_count")
    allowedUserIds = serializers.JSONField(source="allowed_user_ids")
    createdAt = serializers.DateTimeField(source="created_at")
    externalPath = serializers.CharField(source="external_path")

    class Meta:
        model = Alias
        fields = ["aliasId", "uploadId", "path", "slug", "url", "hasPassword", "expiresAt", "maxUses", "useCount"]
        fields += ["allowedUserIds", "createdAt", "externalPath"]


class AuthorSerializer(serializers.ModelSerializer):
    userId = serializers.CharField(source="author_user_id")
    username = serializers.CharField(source="author_username")

    class Meta:
        model = Upload
        fields = ["userId", "username"]


class LastModifiedBySerializer(serializers.ModelSerializer):
    userId = serializers.CharField(source="last_modified_by_user_id")
    username = serializers.CharField(source="last_modified_by_username")

    class Meta:
        model = Upload
        fields = ["userId", "username"]


class UploadSerializer(serializers.ModelSerializer):
    uploadId = serializers.CharField(source="upload_id")
    contentUrl = serializers.CharField(source="content_url")
    sizeBytes = serializers.IntegerField(source="size_bytes")
    integrationId = serializers.UUIDField(source="integration_id")
    # No foreign key (a record may name an integration without a row): the view looks the
    # page's integrations up in one query and passes them in the context.
    integration = serializers.SerializerMethodField()
    allowAnyExtension = serializers.BooleanField(source="allow_any_extension")
    defaultSlugExtension = serializers.CharField(source="default_slug_extension")
    generatedDescription = serializers.CharField(source="generated_description")
    metaUploads = MetaUploadSerializer(source="meta_uploads", many=True)
    aliases = AliasSerializer(many=True)
    createdAt = serializers.DateTimeField(source="created_at")
    updatedAt = serializers.DateTimeField(source="updated_at")
    author = AuthorSerializer(source="*")
    lastModifiedBy = LastModifiedBySerializer(source="*")
    thumbnailGenerationVersion = serializers.IntegerField(source="thumbnail_generation_version")
    aiDescriptionGenerationVersion = serializers.IntegerField(source="ai_description_generation_version")
    aiTagsGenerationVersion = serializers.IntegerField(source="ai_tags_generation_version")
    virusScanGenerationVersion = serializers.IntegerField(source="virus_scan_generation_version")
    aiDescriptionInputRef = serializers.CharField(source="ai_description_input_ref")
    intentMetadata = serializers.JSONField(source="intent_metadata")
    externalPath = serializers.CharField(source="external_path")
    isVirtualFile = serializers.BooleanField(source="is_virtual_file")
    integrationHidden = serializers.BooleanField(source="integration_hidden")
    thumbnailContentTypeUrn = serializers.CharField(source="thumbnail_content_type_urn")
    thumbnailContentTypeIconName = serializers.CharField(source="thumbnail_content_type_icon_name")
    thumbnailContentTypeIconUrl = serializers.CharField(source="thumbnail_content_type_icon_url")
    metadataKvs = serializers.JSONField(source="metadata_kvs")

    class Meta:
        model = Upload
        fields = [
            "uploadId", "path", "slug", "url", "contentUrl", "sizeBytes", "tags", "integrationId", "integration",
            "allowAnyExtension", "defaultSlugExtension", "generatedDescription", "metaUploads", "private",
            "aliases", "createdAt", "updatedAt", "author", "lastModifiedBy", "thumbnailGenerationVersion",
            "aiDescriptionGenerationVersion", "aiTagsGenerationVersion", "virusScanGenerationVersion",
            "aiDescriptionInputRef", "intentMetadata", "externalPath", "order", "isVirtualFile",
            "integrationHidden", "version", "thumbnailContentTypeUrn", "thumbnailContentTypeIconName",
            "thumbnailContentTypeIconUrl", "metadataKvs",
        ]  # fmt: skip

    def get_integration(self, upload):
        row = self.context["integrations"].get(upload.integration_id)
        return IntegrationSerializer(row).data if row is not None else None
