"""Realistic synthetic upload records for seed_uploads and the benchmark.

Deterministic for a given seed. Records are in the JSON shape an import file holds (and
ListUploads returns), so they go through the same validation and mapping as imported ones.
"""

from __future__ import annotations

import random
import uuid
from collections.abc import Iterator
from datetime import datetime, timedelta

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
EPOCH = datetime(2023, 1, 1)  # naive UTC: isoformat() + "Z" is the record's RFC 3339 form
SPAN_SECONDS = 3 * 365 * 86400
MONTH_SECONDS = 30 * 86400
MONTH = timedelta(days=30)

METADATA_TYPE = {n: pb.MetadataValueType.Name(n) for n in pb.MetadataValueType.values()}
S, B, N, A, O = (METADATA_TYPE[n] for n in range(1, 6))  # noqa: E741
FOLDER_BEHAVIOR = pb.IntegrationFolderBehavior.Name
MODE = pb.IntegrationMode.Name


def integrations(rng: random.Random) -> list[dict]:
    return [
        {
            "integrationId": str(uuid.UUID(int=rng.getrandbits(128), version=4)),
            "name": name,
            "oauthClientId": f"client-{name.lower()}",
            "folderBehavior": FOLDER_BEHAVIOR(1 + i % 3),
            "folderLinkUrl": f"https://{name.lower()}.example.com/folders",
            "mode": MODE(1 + i % 3),
            "bucketLauncherEnabled": i % 2 == 0,
        }
        for i, name in enumerate(("Drive", "Dropbox", "Box", "SharePoint", "S3"))
    ]


def records(count: int, seed: int = 0) -> Iterator[dict]:
    rng = random.Random(seed)  # noqa: S311 (synthetic data, reproducible by seed)
    pool = integrations(rng)
    for _ in range(count):
        yield _record(rng, pool)


def _uuid4(rng: random.Random) -> str:
    return str(uuid.UUID(int=rng.getrandbits(128), version=4))


def _timestamp(moment: datetime) -> str:
    return moment.isoformat(timespec="microseconds") + "Z"


# Draws by rng.random() arithmetic rather than choice/randrange/sample, which cost ~0.5 µs
# each in pure Python; a seed of a million records makes ~40 million draws.


def _pick(draw, items):
    return items[int(draw() * len(items))]


def _two(draw, items) -> tuple:
    """Two different items."""
    first = int(draw() * len(items))
    second = int(draw() * (len(items) - 1))
    return items[first], items[second + (second >= first)]


def _record(rng: random.Random, pool: list[dict]) -> dict:
    draw = rng.random
    upload_id = _uuid4(rng)
    word, other = _two(draw, WORDS)
    ext = _pick(draw, EXTENSIONS)
    slug = f"{word}-{other}-{int(draw() * 100000)}"
    folder = f"/{_pick(draw, FOLDERS)}/{_pick(draw, WORDS)}"
    created = EPOCH + timedelta(seconds=int(draw() * SPAN_SECONDS), microseconds=int(draw() * 1000000))
    updated = created + timedelta(seconds=int(draw() * MONTH_SECONDS))
    author = _pick(draw, USERS)
    editor = _pick(draw, USERS)
    record = {
        "uploadId": upload_id,
        "path": f"{folder}/{slug}.{ext}",
        "slug": slug,
        "url": f"https://files.example.com/u/{slug}",
        "contentUrl": f"https://cdn.example.com/c/{upload_id}",
        "sizeBytes": str(int(rng.lognormvariate(12, 2.5))),
        "tags": rng.sample(TAGS, int(draw() * 6)),
        "allowAnyExtension": draw() < 0.1,
        "defaultSlugExtension": ext,
        "generatedDescription": f"A {word} {other} {ext} file.",
        "private": draw() < 0.2,
        "createdAt": _timestamp(created),
        "updatedAt": _timestamp(updated),
        "author": {"userId": author[0], "username": author[1]},
        "lastModifiedBy": {"userId": editor[0], "username": editor[1]},
        "thumbnailGenerationVersion": int(draw() * 4),
        "aiDescriptionGenerationVersion": int(draw() * 3),
        "aiTagsGenerationVersion": int(draw() * 3),
        "virusScanGenerationVersion": int(draw() * 2),
        "aiDescriptionInputRef": f"ref-{rng.getrandbits(32):08x}",
        "externalPath": "",
        "order": int(draw() * 1000),
        "isVirtualFile": draw() < 0.02,
        "version": 1 + int(draw() * 5),
        "thumbnailContentTypeUrn": f"urn:mime:{ext}",
        "thumbnailContentTypeIconName": f"icon-{ext}",
        "thumbnailContentTypeIconUrl": f"https://cdn.example.com/icons/{ext}.svg",
        "metadataKvs": _metadata(draw),
    }
    if draw() < 0.3:
        integration = _pick(draw, pool)
        record["integrationId"] = integration["integrationId"]
        record["integration"] = integration
        record["integrationHidden"] = draw() < 0.1
        record["externalPath"] = f"{integration['name'].lower()}:{folder}/{slug}.{ext}"
    if draw() < 0.05:
        record["intentMetadata"] = {"share": {"audience": _pick(draw, DEPARTMENTS), "notify": True}}
    metas = [
        {
            "type": {"name": ("thumbnail", "preview")[n], "n": n, "filename": f"{slug}-{n}.png"},
            "metadataId": f"m-{rng.getrandbits(48):012x}",
            "uploadUrl": f"https://files.example.com/meta/{upload_id}/{n}",
            "downloadUrl": f"https://cdn.example.com/meta/{upload_id}/{n}",
        }
        for n in range(_pick(draw, (0, 0, 1, 1, 2)))
    ]
    if metas:
        record["metaUploads"] = metas
    if draw() < 0.3:
        alias = {
            "aliasId": _uuid4(rng),
            "uploadId": upload_id,
            "path": f"/shared/{slug}.{ext}",
            "slug": f"{slug}-share",
            "url": f"https://files.example.com/a/{slug}-share",
            "hasPassword": draw() < 0.3,
            "maxUses": _pick(draw, (0, 10, 100)),
            "useCount": int(draw() * 10),
            "allowedUserIds": [u[0] for u in rng.sample(USERS, int(draw() * 3))],
            "createdAt": _timestamp(updated),
        }
        if draw() < 0.5:
            alias["expiresAt"] = _timestamp(updated + MONTH)
        record["aliases"] = [alias]
    return record


def _metadata(draw) -> list[dict]:
    kvs = [
        {"key": "status", "valueType": S, "value": {"stringValue": _pick(draw, STATUSES)}, "title": "Status"},
        {"key": "approved", "valueType": B, "value": {"boolValue": draw() < 0.5}, "title": "Approved"},
    ]
    kvs[0]["iconName"] = "flag"
    if draw() < 0.6:
        kvs.append(
            {
                "key": "department",
                "valueType": S,
                "value": {"stringValue": _pick(draw, DEPARTMENTS)},
                "title": "Department",
            }
        )
    if draw() < 0.4:
        kvs.append({"key": "pages", "valueType": N, "value": {"numberValue": 1 + int(draw() * 499)}, "title": "Pages"})
    if draw() < 0.2:
        reviewers = [{"stringValue": user[1]} for user in _two(draw, USERS)]
        kvs.append(
            {
                "key": "reviewers",
                "valueType": A,
                "value": {"arrayValue": reviewers},
                "title": "Reviewers",
                "hiddenFromUsers": True,
            }
        )
    if draw() < 0.1:
        exif = {"width": {"numberValue": _pick(draw, (640, 1280, 1920))}, "color": {"boolValue": True}}
        kvs.append(
            {"key": "exif", "valueType": O, "value": {"objectValue": exif}, "title": "EXIF", "iconName": "camera"}
        )
    return kvs
