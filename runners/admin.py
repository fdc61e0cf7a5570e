"""Runners in the operator console: listed with their last call and the work they hold;
issued and revoked through runners.services only."""

from django import forms
from django.contrib import admin, messages
from django.template.response import TemplateResponse
from django.urls import path

from controlplane.admin_site import ConsoleAdmin
from controlplane.errors import Error

from . import selectors, services
from .models import Runner


class IssueRunnerForm(forms.Form):
    name = forms.CharField(max_length=200, help_text="A label shown in listings.")
    namespaces = forms.CharField(
        required=False, help_text="Names separated by spaces or commas; empty: the runner serves every namespace."
    )


@admin.register(Runner)
class RunnerAdmin(ConsoleAdmin):
    list_display = ["runner_id", "name", "serves", "last_seen_at", "held", "state", "version"]
    search_fields = ["runner_id", "name"]
    list_select_related = ["key"]
    actions = ["revoke"]
    show_full_result_count = False

    def get_queryset(self, request):
        return selectors.with_work_held(super().get_queryset(request))

    @admin.display(description="namespaces")
    def serves(self, obj):
        return ", ".join(obj.namespaces) or "all"

    @admin.display(description="work held", ordering="work_held")
    def held(self, obj):
        return obj.work_held

    @admin.display(description="state")
    def state(self, obj):
        return "revoked" if obj.revoked else "active"

    @admin.action(description="Revoke the selected runners (their leases end)")
    def revoke(self, request, queryset):
        for runner in queryset:
            try:
                services.revoke_runner(actor=request.principal, runner_id=runner.runner_id)
            except Error as exc:
                self.message_user(request, f"{runner.runner_id}: {exc.message}", messages.ERROR)
                return
        self.message_user(request, f"Revoked {queryset.count()} runner(s).", messages.SUCCESS)

    def get_urls(self):
        return [
            path("issue/", self.admin_site.admin_view(self.issue_view), name="runners_runner_issue"),
            *super().get_urls(),
        ]

    def issue_view(self, request):
        form = IssueRunnerForm(request.POST or None)
        plaintext = None
        if request.method == "POST" and form.is_valid():
            names = form.cleaned_data["namespaces"].replace(",", " ").split()
            try:
                runner, plaintext = services.issue_runner(
                    actor=request.principal, name=form.cleaned_data["name"], namespaces=names
                )
            except Error as exc:
                form.add_error(None, exc.message)
            else:
                self.message_user(
                    request, f"Issued {runner.runner_id}: its key is shown once, below.", messages.SUCCESS
                )
        context = {
            **self.admin_site.each_context(request),
            "title": "Issue a runner key",
            "form": form,
            "plaintext": plaintext,
            "opts": self.model._meta,
        }
        return TemplateResponse(request, "admin/runners/issue.html", context)
