"""Realistic synthetic upload records for seed_uploads and the benchmark.

Deterministic for a given seed. Records are proto `Upload` messages, so they go through
the same validation and mapping as imported ones.
"""

from __future__ import annotations

import random
import uuid
from collections.abc import Iterator
from datetime import UTC, datetime, timedelta

from uploads.api.v1 import uploads_pb2 as pb

WORDS = [
    "alpha",
    "beta",
    "gamma",
    "delta",
    "report",
    "invoice",
    "photo",
    "scan",
    "draft",
    "final",
    "summary",
    "budget",
    "contract",
    "diagram",
    "notes",
    "slides",
    "memo",
    "plan",
    "review",
    "design",
    "spec",
    "logo",
    "banner",
    "audio",
    "video",
    "backup",
    "export",
]
TAGS = [
    "finance",
    "legal",
    "marketing",
    "hr",
    "engineering",
    "design",
    "sales",
    "support",
    "urgent",
    "archived",
    "q1",
    "q2",
    "q3",
    "q4",
    "2023",
    "2024",
    "2025",
    "public",
    "internal",
    "confidential",
    "draft",
    "approved",
    "pending",
    "customer",
    "vendor",
    "partner",
    "image",
    "document",
    "spreadsheet",
    "presentation",
    "media",
]
EXTENSIONS = ("pdf", "png", "jpg", "docx", "xlsx", "pptx", "mp4", "txt", "csv", "zip")
FOLDERS = ("projects", "clients", "archive", "shared", "team", "assets", "inbox")
STATUSES = ("draft", "review", "final", "rejected")
DEPARTMENTS = ("eng", "ops", "sales", "legal", "hr", "finance", "design", "support", "it", "exec")
USERS = [(f"u-{i:04d}", f"user{i}") for i in range(200)]
EPOCH = datetime(2023, 1, 1, tzinfo=UTC)
SPAN_SECONDS = 3 * 365 * 86400

S = pb.METADATA_VALUE_TYPE_STRING
B = pb.METADATA_VALUE_TYPE_BOOL
N = pb.METADATA_VALUE_TYPE_NUMBER
A = pb.METADATA_VALUE_TYPE_ARRAY
O = pb.METADATA_VALUE_TYPE_OBJECT  # noqa: E741


def integrations(rng: random.Random) -> list[pb.Integration]:
    return [
        pb.Integration(
            integration_id=str(uuid.UUID(int=rng.getrandbits(128), version=4)),
            name=name,
            oauth_client_id=f"client-{name.lower()}",
            folder_behavior=1 + i % 3,
            folder_link_url=f"https://{name.lower()}.example.com/folders",
            mode=1 + i % 3,
            bucket_launcher_enabled=i % 2 == 0,
        )
        for i, name in enumerate(("Drive", "Dropbox", "Box", "SharePoint", "S3"))
    ]


def records(count: int, seed: int = 0) -> Iterator[pb.Upload]:
    rng = random.Random(seed)  # noqa: S311 (synthetic data, reproducible by seed)
    pool = integrations(rng)
    for _ in range(count):
        yield _record(rng, pool)


def _record(rng: random.Random, pool: list[pb.Integration]) -> pb.Upload:
    upload_id = str(uuid.UUID(int=rng.getrandbits(128), version=4))
    words = rng.sample(WORDS, 2)
    ext = rng.choice(EXTENSIONS)
    slug = f"{words[0]}-{words[1]}-{rng.randrange(100000)}"
    folder = f"/{rng.choice(FOLDERS)}/{rng.choice(WORDS)}"
    created = EPOCH + timedelta(seconds=rng.randrange(SPAN_SECONDS), microseconds=rng.randrange(1000000))
    updated = created + timedelta(seconds=rng.randrange(30 * 86400))
    author = rng.choice(USERS)
    editor = rng.choice(USERS)
    record = pb.Upload(
        upload_id=upload_id,
        path=f"{folder}/{slug}.{ext}",
        slug=slug,
        url=f"https://files.example.com/u/{slug}",
        content_url=f"https://cdn.example.com/c/{upload_id}",
        size_bytes=int(rng.lognormvariate(12, 2.5)),
        tags=rng.sample(TAGS, rng.randrange(6)),
        allow_any_extension=rng.random() < 0.1,
        default_slug_extension=ext,
        generated_description=f"A {words[0]} {words[1]} {ext} file.",
        author=pb.UserRef(user_id=author[0], username=author[1]),
        last_modified_by=pb.UserRef(user_id=editor[0], username=editor[1]),
        thumbnail_generation_version=rng.randrange(4),
        ai_description_generation_version=rng.randrange(3),
        ai_tags_generation_version=rng.randrange(3),
        virus_scan_generation_version=rng.randrange(2),
        ai_description_input_ref=f"ref-{rng.getrandbits(32):08x}",
        external_path="",
        order=rng.randrange(1000),
        is_virtual_file=rng.random() < 0.02,
        version=1 + rng.randrange(5),
        thumbnail_content_type_urn=f"urn:mime:{ext}",
        thumbnail_content_type_icon_name=f"icon-{ext}",
        thumbnail_content_type_icon_url=f"https://cdn.example.com/icons/{ext}.svg",
    )
    setattr(record, "private", rng.random() < 0.2)  # noqa: B010
    record.created_at.FromDatetime(created)
    record.updated_at.FromDatetime(updated)
    if rng.random() < 0.3:
        integration = rng.choice(pool)
        record.integration_id = integration.integration_id
        record.integration.CopyFrom(integration)
        record.integration_hidden = rng.random() < 0.1
        record.external_path = f"{integration.name.lower()}:{folder}/{slug}.{ext}"
    if rng.random() < 0.05:
        record.intent_metadata["share"].update({"audience": rng.choice(DEPARTMENTS), "notify": True})
    _metadata(rng, record)
    for n in range(rng.choice((0, 0, 1, 1, 2))):
        record.meta_uploads.add(
            type=pb.MetaUploadType(name=("thumbnail", "preview")[n], n=n, filename=f"{slug}-{n}.png"),
            metadata_id=f"m-{rng.getrandbits(48):012x}",
            upload_url=f"https://files.example.com/meta/{upload_id}/{n}",
            download_url=f"https://cdn.example.com/meta/{upload_id}/{n}",
        )
    if rng.random() < 0.3:
        alias = record.aliases.add(
            alias_id=str(uuid.UUID(int=rng.getrandbits(128), version=4)),
            upload_id=upload_id,
            path=f"/shared/{slug}.{ext}",
            slug=f"{slug}-share",
            url=f"https://files.example.com/a/{slug}-share",
            has_password=rng.random() < 0.3,
            max_uses=rng.choice((0, 10, 100)),
            use_count=rng.randrange(10),
            allowed_user_ids=[u[0] for u in rng.sample(USERS, rng.randrange(3))],
        )
        alias.created_at.FromDatetime(updated)
        if rng.random() < 0.5:
            alias.expires_at.FromDatetime(updated + timedelta(days=30))
    return record


def _metadata(rng: random.Random, record: pb.Upload) -> None:
    kv = record.metadata_kvs.add(key="status", value_type=S, title="Status", icon_name="flag")
    kv.value.string_value = rng.choice(STATUSES)
    kv = record.metadata_kvs.add(key="approved", value_type=B, title="Approved")
    kv.value.bool_value = rng.random() < 0.5
    if rng.random() < 0.6:
        kv = record.metadata_kvs.add(key="department", value_type=S, title="Department")
        kv.value.string_value = rng.choice(DEPARTMENTS)
    if rng.random() < 0.4:
        kv = record.metadata_kvs.add(key="pages", value_type=N, title="Pages")
        kv.value.number_value = rng.randrange(1, 500)
    if rng.random() < 0.2:
        kv = record.metadata_kvs.add(key="reviewers", value_type=A, title="Reviewers", hidden_from_users=True)
        for user in rng.sample(USERS, 2):
            kv.value.array_value.add(string_value=user[1])
    if rng.random() < 0.1:
        kv = record.metadata_kvs.add(key="exif", value_type=O, title="EXIF", icon_name="camera")
        kv.value.object_value["width"].number_value = rng.choice((640, 1280, 1920))
        kv.value.object_value["color"].bool_value = True
