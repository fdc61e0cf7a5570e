"""Deploy checks for the browser-only middleware (controlplane.auth.middleware).

Django's security.W002/W003 look for its own dotted paths in MIDDLEWARE; ours are subclasses
that step aside only for bearer RPC calls. These checks take their place: they fail when
the CSRF or framing protection is missing from MIDDLEWARE under either name.
"""

from django.conf import settings
from django.core import checks

_REQUIRED = {
    "CsrfViewMiddleware": ("django.middleware.csrf", "security.W003", "cross-site request forgery"),
    "XFrameOptionsMiddleware": ("django.middleware.clickjacking", "security.W002", "X-Frame-Options"),
}


@checks.register(checks.Tags.security, deploy=True)
def check_browser_middleware(app_configs=None, **kwargs):
    problems = []
    for name, (django_module, check_id, what) in _REQUIRED.items():
        accepted = {f"controlplane.auth.middleware.{name}", f"{django_module}.{name}"}
        if not accepted & set(settings.MIDDLEWARE):
            problems.append(
                checks.Warning(
                    f"MIDDLEWARE has no {name}: the console would go without {what} protection",
                    hint=f"add controlplane.auth.middleware.{name} (it replaces Django's {check_id})",
                    id=f"controlplane.{check_id.replace('security.', '')}",
                )
            )
    return problems
