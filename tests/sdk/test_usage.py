"""How the SDK meets a user before any call: credentials, base URL, arguments, exports (issue 22 finding 7)."""

from __future__ import annotations

import asyncio
import inspect

import cpsdk
import pytest
from cpsdk import AsyncClient, Client, errors

KEY = "cpk_" + "a1B2" * 9


def test_surrounding_whitespace_is_stripped_from_the_credential():
    for raw in (KEY + "\n", f"  {KEY}\r\n", f"\t{KEY} "):
        client = Client("http://127.0.0.1:9", raw)
        assert client._transport.headers == {"authorization": f"Bearer {KEY}"}


@pytest.mark.parametrize("bad", [KEY[:8] + "\n" + KEY[8:], KEY[:8] + " " + KEY[8:], KEY + "\x00", KEY + "é"])
def test_a_malformed_credential_is_a_typed_error_without_the_secret(bad):
    with pytest.raises(errors.ConfigurationError) as raised:
        Client("http://127.0.0.1:9", bad)
    text = str(raised.value) + repr(raised.value)
    assert "api_key" in text and KEY[:8] not in text and KEY[9:] not in text
    assert isinstance(raised.value, ValueError)  # what code catching ValueError before still catches


@pytest.mark.parametrize("url", ["127.0.0.1:8000", "localhost:8000", "ftp://host", "http://", "//host:1"])
def test_a_base_url_without_scheme_is_refused_before_any_call(url):
    with pytest.raises(errors.ConfigurationError, match="not an http:// or https:// address"):
        Client(url, KEY)


def test_command_must_be_a_list():
    client = Client("http://127.0.0.1:9", KEY, namespace="team-a")
    with pytest.raises(TypeError, match="list of arguments"):
        client.jobs.run("busybox:1.36", command="echo hi")


def test_every_error_class_is_exported_at_the_top_level():
    classes = {
        name
        for name, value in vars(errors).items()
        if inspect.isclass(value) and issubclass(value, Exception) and value.__module__ == errors.__name__
    }
    classes |= {"FieldViolation", "QuotaViolation"}
    assert classes <= set(cpsdk.__all__)
    from cpsdk import DeadlineExceeded  # the reported case

    assert DeadlineExceeded is errors.DeadlineExceeded


def test_namespace_is_a_property_on_both_clients():
    assert isinstance(inspect.getattr_static(Client, "namespace"), property)
    assert isinstance(inspect.getattr_static(AsyncClient, "namespace"), property)
    assert AsyncClient("http://127.0.0.1:9", KEY, namespace="team-a").namespace == "team-a"
    pending = AsyncClient("http://127.0.0.1:9", KEY, namespace="team-a").resolve_namespace()
    assert inspect.isawaitable(pending) and asyncio.run(pending) == "team-a"  # known: no call made


def test_quota_docstring_names_the_wire_subject():
    assert "maxSandboxes" in errors.Error.quota_violations.__doc__
