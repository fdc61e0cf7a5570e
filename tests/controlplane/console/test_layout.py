"""The console at 1280 px, in Debian's Chromium: no page scrolls sideways (nor any table inside
it), UUIDs stay on one line, breadcrumbs do not repeat themselves, short fields are inputs.

CONSOLE_SCREENSHOTS=DIR keeps a full-page PNG of every page visited, to look at.
"""

from __future__ import annotations

import os
from datetime import timedelta
from pathlib import Path

import pytest
from django.contrib import admin
from django.test import override_settings
from django.urls import reverse
from django.utils import timezone

from apikeys.models import ApiKey
from apikeys.services import issue_api_key, revoke_api_key
from audit.services import record
from controlplane.auth import Role
from tests.conftest import SYSTEM
from tests.support import world
from tests.support.chromium import CHROMIUM, CHROMIUM_ARGS
from tests.support.uploads_factory import add, make_bucket
from tests.support.uploads_factory import record as upload_record

pytestmark = pytest.mark.e2e
WIDTH = 1280

# Every way a page can be wider than the window: the page itself, or a box that scrolls.
OVERFLOW = """() => {
  const wide = [];
  if (document.documentElement.scrollWidth > window.innerWidth) wide.push('page');
  for (const el of document.querySelectorAll('body *')) {
    const style = getComputedStyle(el);
    if (['auto', 'scroll'].includes(style.overflowX) && el.scrollWidth > el.clientWidth + 1) {
      wide.push(`${el.tagName.toLowerCase()}#${el.id}.${el.className}: ${el.scrollWidth} > ${el.clientWidth}`);
    }
  }
  return wide;
}"""
# A table wider than the box it sits in: cut off (overflow hidden) or spilling over.
WIDE_TABLES = """() => {
  const wide = [];
  for (const table of document.querySelectorAll('#content table')) {
    const box = table.parentElement;
    if (table.getBoundingClientRect().right > box.getBoundingClientRect().right + 1) {
      const width = Math.round(table.getBoundingClientRect().width);
      wide.push(`${table.id || 'table'}: ${width} px in ${box.clientWidth} px`);
    }
  }
  return wide;
}"""
# A short value in a list cell ("viewer-demo", a date) set on more than two lines.
SQUEEZED_CELLS = """() => {
  const squeezed = [];
  for (const cell of document.querySelectorAll('#result_list td')) {
    const text = cell.innerText.trim();
    if (!text || text.length > 40) continue;
    const range = document.createRange();
    range.selectNodeContents(cell);
    const lines = new Set([...range.getClientRects()].filter(r => r.width > 0).map(r => Math.round(r.top)));
    if (lines.size > 2) squeezed.push(`${cell.className}: ${text} on ${lines.size} lines`);
  }
  return squeezed;
}"""
# UUIDs (and ids like them) set on more than one line.
WRAPPED_IDS = """() => {
  const wrapped = [];
  const walker = document.createTreeWalker(document.getElementById('content'), NodeFilter.SHOW_TEXT);
  const uuid = /[0-9a-f]{8}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{12}/g;
  for (let node = walker.nextNode(); node; node = walker.nextNode()) {
    for (const match of node.data.matchAll(uuid)) {
      const range = document.createRange();
      range.setStart(node, match.index);
      range.setEnd(node, match.index + match[0].length);
      const lines = new Set([...range.getClientRects()].map(r => Math.round(r.top)));
      if (lines.size > 1) wrapped.push(match[0]);
    }
  }
  return wrapped;
}"""


@pytest.fixture(scope="module")
def browser():
    from playwright.sync_api import sync_playwright

    with pytest.MonkeyPatch.context() as patch, sync_playwright() as playwright:
        patch.setenv("DJANGO_ALLOW_ASYNC_UNSAFE", "true")  # ORM calls beside Playwright's event loop
        browser = playwright.chromium.launch(executable_path=CHROMIUM, args=CHROMIUM_ARGS, timeout=30_000)
        yield browser
        browser.close()


@pytest.fixture
def console_world(transactional_db, admin_user):
    """Rows for every console page, with long values where the pages once overflowed."""
    with override_settings(CONTAINERS_SANDBOXES_ENABLED=True, CONTAINERS_BUILDS_ENABLED=True):
        world.build(attach_own_workspace=True)
    # Keys as an operator has them: expiring, used, named like people name them, in every state.
    soon = timezone.now() + timedelta(days=90)
    for name, role in (("deploy bot for the nightly release", Role.OPERATOR), ("viewer-demo", Role.VIEWER),
                       ("ci-github-actions-main-branch", Role.ADMIN)):  # fmt: skip
        key, _ = issue_api_key(actor=SYSTEM, namespace="team-a", name=name, role=role, expires_at=soon)
        ApiKey.objects.filter(pk=key.pk).update(last_used_at=timezone.now() - timedelta(minutes=3))
    revoked, _ = issue_api_key(actor=SYSTEM, namespace="team-a", name="old-laptop", role=Role.ADMIN, expires_at=soon)
    revoke_api_key(actor=SYSTEM, key_id=revoked.key_id)
    record(
        actor=SYSTEM,
        action="namespace.update",
        target="namespace:team-a",
        namespace="team-a",
        changes={"groups": {"from": [["eng-platform-oncall", "ROLE_VIEWER"]], "to": [["x" * 80, "ROLE_ADMIN"]]}},
    )
    integration = "6f1c2b0e-3d4a-4b5c-8d9e-0f1a2b3c4d5e"
    add(
        make_bucket("team-a", "quarterly-reports"),
        [
            upload_record(
                1,
                uploadId="3b0d6a4e-8f7c-4d2b-9e1a-5c6f7a8b9c0d",
                path="/finance/2024/q1/board-pack/" + "annex-" * 8 + "final.pdf",
                integrationId=integration,
                integration={"integrationId": integration, "name": "Drive", "folderLinkUrl": "https://d.example/x"},
                aliases=[{"aliasId": "7d9e0f1a-2b3c-4d5e-8f6a-7b8c9d0e1f2a", "slug": "board-pack"}],
                metaUploads=[{"type": {"name": "thumbnail", "n": 1, "filename": "thumb.png"}, "metadataId": "m1"}],
            )
        ],
    )


def console_pages() -> list[tuple[str, str]]:
    pages = [("index", reverse("admin:index"))]
    for model, model_admin in admin.site._registry.items():
        opts = model._meta
        name = f"{opts.app_label}_{opts.model_name}"
        pages.append((name, reverse(f"admin:{name}_changelist")))
        row = model._default_manager.first()
        assert row is not None, f"no {opts.label} row to show"
        pages.append((f"{name}_change", reverse(f"admin:{name}_change", args=[row.pk])))
        if "add" in model_admin.service_writes:
            pages.append((f"{name}_add", reverse(f"admin:{name}_add")))
    pages.append(("apikeys_apikey_issue", reverse("admin:apikeys_apikey_issue")))
    return pages


@pytest.fixture
def signed_in(browser, live_server, console_world):
    context = browser.new_context(viewport={"width": WIDTH, "height": 900})
    context.set_default_timeout(15_000)
    page = context.new_page()
    page.goto(live_server.url + reverse("admin:login"))
    page.fill("#id_username", "admin")
    page.fill("#id_password", "password")
    page.click("input[type=submit]")
    page.wait_for_url(live_server.url + reverse("admin:index"))
    yield page
    context.close()


def test_every_console_page_fits_1280_px(signed_in, live_server, tmp_path):
    shots = Path(os.environ.get("CONSOLE_SCREENSHOTS") or tmp_path)
    shots.mkdir(parents=True, exist_ok=True)
    problems = {}
    visited = console_pages()
    for name, url in visited:
        response = signed_in.goto(live_server.url + url)
        assert response.status == 200, url
        signed_in.screenshot(path=str(shots / f"{name}.png"), full_page=True)
        found = [f"overflow {box}" for box in signed_in.evaluate(OVERFLOW)]
        found += [f"wrapped id {value}" for value in signed_in.evaluate(WRAPPED_IDS)]
        found += [f"wide table {table}" for table in signed_in.evaluate(WIDE_TABLES)]
        found += [f"squeezed cell {cell}" for cell in signed_in.evaluate(SQUEEZED_CELLS)]
        trail = signed_in.locator(".breadcrumbs")
        crumbs = [crumb.strip() for crumb in trail.inner_text().split("›")] if trail.count() else []
        if len(crumbs) != len(set(crumbs)):
            found.append(f"breadcrumb {' › '.join(crumbs)}")
        if found:
            problems[url] = found
    assert len(visited) > 20
    assert not problems, "\n".join(f"{url}: {found}" for url, found in problems.items())


def test_short_fields_are_inputs(signed_in, live_server):
    upload = reverse("admin:uploads_upload_change", args=["3b0d6a4e-8f7c-4d2b-9e1a-5c6f7a8b9c0d"])
    for url in (reverse("admin:uploads_bucket_add"), reverse("admin:namespaces_namespace_add"), upload):
        signed_in.goto(live_server.url + url)
        assert signed_in.locator("#content textarea").count() == 0, url
