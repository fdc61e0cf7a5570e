"""The Connect unary protocol, rule by rule (connectrpc.com/docs/protocol)."""

from __future__ import annotations

import base64
import gzip
import json
import logging
import time

import brotli
import pytest
import zstandard
from django.db import connection
from google.protobuf import json_format, message_factory
from google.rpc import error_details_pb2

from containers.api.v1 import namespace_pb2 as pb
from namespaces.models import Namespace
from tests.support.connect import NAMESPACE_SERVICE, NS, assert_error
from tests.support.roundtrips import RoundTrips
from tests.support.testing_service import PATH, SECRET_IN_CRASH, TESTING_SERVICE

pytestmark = pytest.mark.django_db

GET = NS + "GetNamespace"


@pytest.fixture
def call(rpc, admin_key):
    """An admin's call: call(procedure, body, **rpc options)."""

    def send(procedure, body=None, **options):
        return rpc(procedure, body, token=admin_key, **options)

    send.request_type = lambda procedure: message_factory.GetMessageClass(
        NAMESPACE_SERVICE.methods_by_name[procedure.rsplit("/", 1)[1]].input_type
    )
    return send


@pytest.fixture
def testing_service(settings):
    settings.RPC_SERVICES = [*settings.RPC_SERVICES, TESTING_SERVICE]


# ---- codecs ---------------------------------------------------------------------------------


@pytest.mark.parametrize(
    "content_type", ["application/json", "application/json; charset=utf-8", "application/json;charset=UTF-8"]
)
def test_json_codec_with_or_without_charset(call, content_type):
    result = call(GET, {"namespace": "team-a"}, content_type=content_type)
    assert result.status == 200, result
    assert result.response["Content-Type"] == "application/json"
    assert result.body["namespace"] == "team-a"


def test_binary_codec_round_trip(call):
    request = pb.CreateNamespaceRequest(
        namespace="team-bin", groups=[pb.GroupBinding(oidc_group="eng", role=pb.ROLE_OPERATOR)]
    )
    result = call(NS + "CreateNamespace", data=request.SerializeToString(), content_type="application/proto")
    assert result.status == 200, result
    assert result.response["Content-Type"] == "application/proto"
    reply = pb.Namespace.FromString(result.raw)
    assert reply.namespace == "team-bin"
    assert [(g.oidc_group, g.role) for g in reply.groups] == [("eng", pb.ROLE_OPERATOR)]


def test_binary_request_errors_are_json(call):
    data = pb.GetNamespaceRequest(namespace="nope").SerializeToString()
    assert_error(call(GET, data=data, content_type="application/proto"), "not_found")


def test_invalid_binary_message_is_invalid_argument(call):
    assert_error(call(GET, data=b"\xff\xff\xff", content_type="application/proto"), "invalid_argument")


@pytest.mark.parametrize(
    "content_type",
    [
        "text/plain",
        "application/xml",
        "application/grpc",
        "application/connect+json",
        "application/x-www-form-urlencoded",
        "multipart/form-data; boundary=xyz",
        "",
    ],
)
def test_other_content_types_are_415_with_accept_post(call, content_type):
    result = call(GET, {"namespace": "team-a"}, content_type=content_type)
    assert result.status == 415, result
    accepted = {t.strip() for t in result.response["Accept-Post"].split(",")}
    assert {"application/json", "application/proto"} <= accepted


def test_form_posts_are_415(client, admin_key):
    auth = {"HTTP_AUTHORIZATION": f"Bearer {admin_key}"}
    multipart = client.post("/" + GET, {"namespace": "team-a"}, **auth)
    urlencoded = client.post("/" + GET, "namespace=team-a", content_type="application/x-www-form-urlencoded", **auth)
    assert (multipart.status_code, urlencoded.status_code) == (415, 415)
    assert "Accept-Post" in multipart and "Accept-Post" in urlencoded


# ---- compression ----------------------------------------------------------------------------


@pytest.mark.parametrize("codec", ["json", "proto"])
def test_gzip_request_bodies_are_accepted(call, codec):
    if codec == "json":
        data, content_type = json.dumps({"namespace": "team-a"}).encode(), "application/json"
    else:
        data, content_type = pb.GetNamespaceRequest(namespace="team-a").SerializeToString(), "application/proto"
    result = call(GET, data=gzip.compress(data), content_type=content_type, headers={"Content-Encoding": "gzip"})
    assert result.status == 200, result


COMPRESS = {"gzip": gzip.compress, "br": brotli.compress, "zstd": zstandard.compress}


@pytest.mark.parametrize("encoding", ["br", "zstd"])
@pytest.mark.parametrize("codec", ["json", "proto"])
def test_br_and_zstd_request_bodies_are_accepted(call, codec, encoding):
    if codec == "json":
        data, content_type = json.dumps({"namespace": "team-a"}).encode(), "application/json"
    else:
        data, content_type = pb.GetNamespaceRequest(namespace="team-a").SerializeToString(), "application/proto"
    compressed = COMPRESS[encoding](data)
    result = call(GET, data=compressed, content_type=content_type, headers={"Content-Encoding": encoding})
    assert result.status == 200, result


@pytest.mark.parametrize(
    "accept, encoding",
    [
        ("gzip", "gzip"),
        ("br", "br"),
        ("zstd", "zstd"),
        ("deflate, zstd, gzip", "zstd"),  # the caller's first choice we support
        ("gzip;q=0", "identity"),
        ("deflate", "identity"),
        (None, "identity"),
    ],
)
def test_compressed_responses_when_asked(call, accept, encoding):
    headers = {"Accept-Encoding": accept} if accept is not None else {}
    result = call(GET, {"namespace": "team-a"}, headers=headers)
    assert result.status == 200, result
    assert result.response.get("Content-Encoding", "identity") == encoding
    assert result.body["namespace"] == "team-a"  # RpcResult decompresses what Content-Encoding says


@pytest.mark.parametrize("encoding", ["gzip", "br", "zstd"])
def test_zero_length_compressed_body_is_the_empty_message(call, encoding):
    # connect-node sends an empty compressed body for the empty message (protocol spec).
    result = call(NS + "ListNamespaces", data=b"", headers={"Content-Encoding": encoding})
    assert result.status == 200, result
    assert [n["namespace"] for n in result.body["namespaces"]] == ["team-a"]


@pytest.mark.parametrize("encoding", ["deflate", "compress", "snappy"])
def test_unsupported_content_encoding_is_unimplemented(call, encoding):
    assert_error(call(GET, {"namespace": "team-a"}, headers={"Content-Encoding": encoding}), "unimplemented")


def test_identity_encoding_is_accepted(call):
    assert call(GET, {"namespace": "team-a"}, headers={"Content-Encoding": "identity"}).status == 200


def test_corrupt_gzip_is_invalid_argument(call):
    truncated = gzip.compress(b'{"namespace": "team-a"}')[:-6]
    for data in (b"not gzip at all", truncated):
        assert_error(call(GET, data=data, headers={"Content-Encoding": "gzip"}), "invalid_argument")


# ---- protocol headers -----------------------------------------------------------------------


@pytest.mark.parametrize("version", [None, "1"])
def test_protocol_version_absent_or_1(call, version):
    headers = {"Connect-Protocol-Version": version} if version else {}
    assert call(GET, {"namespace": "team-a"}, headers=headers).status == 200


@pytest.mark.parametrize("version", ["2", "0", "1.0", "", "v1"])
def test_other_protocol_versions_are_invalid_argument(call, version):
    result = call(GET, {"namespace": "team-a"}, headers={"Connect-Protocol-Version": version})
    assert_error(result, "invalid_argument")


@pytest.mark.parametrize("timeout", ["2000", "30000", "9999999999"])
def test_valid_timeouts(call, timeout):
    assert call(GET, {"namespace": "team-a"}, headers={"Connect-Timeout-Ms": timeout}).status == 200


@pytest.mark.parametrize("timeout", ["-1", "-500", "12345678901", "abc", "1.5", "1e3", "+5", "0x10"])
def test_invalid_timeouts_are_invalid_argument(call, timeout):
    result = call(GET, {"namespace": "team-a"}, headers={"Connect-Timeout-Ms": timeout})
    assert_error(result, "invalid_argument")
    assert "timeout" in result.body["message"].lower()


def test_zero_timeout_has_already_expired(call):
    assert_error(call(GET, {"namespace": "team-a"}, headers={"Connect-Timeout-Ms": "0"}), "deadline_exceeded")


# ---- deadlines ------------------------------------------------------------------------------


def test_deadline_cancels_a_slow_query_and_its_transaction(call, testing_service):
    started = time.monotonic()
    result = call(PATH + "SlowQuery", {}, headers={"Connect-Timeout-Ms": "300"})
    elapsed = time.monotonic() - started
    assert_error(result, "deadline_exceeded")
    assert elapsed < 2.5, f"the slow query was not cancelled: {elapsed:.1f}s"
    # The write before the slow query was rolled back; the connection still works.
    assert not Namespace.objects.filter(name="made-before-the-slow-query").exists()
    with connection.cursor() as cursor:
        cursor.execute("SELECT 1")
        assert cursor.fetchone() == (1,)


@pytest.mark.django_db(transaction=True)  # a read runs in autocommit, as in production
def test_deadline_cancels_a_slow_read_outside_any_transaction(call, testing_service):
    assert call(GET, {"namespace": "team-a"}).status == 200  # the key's first use writes last_used
    with RoundTrips() as database:
        started = time.monotonic()
        result = call(PATH + "SlowRead", {}, headers={"Connect-Timeout-Ms": "300"})
        elapsed = time.monotonic() - started
    assert_error(result, "deadline_exceeded")
    assert elapsed < 2.5, f"the slow read was not cancelled: {elapsed:.1f}s"
    assert database.transactions == 0, database.sent or database.statements
    # Only the key lookup and the read itself: no round trip was spent on the deadline.
    assert len(database.statements) == 2, database.statements
    with connection.cursor() as cursor:  # the connection still works
        cursor.execute("SELECT 1")
        assert cursor.fetchone() == (1,)


@pytest.mark.django_db(transaction=True)
def test_a_read_within_its_deadline_is_not_cancelled(call, testing_service):
    result = call(GET, {"namespace": "team-a"}, headers={"Connect-Timeout-Ms": "5000"})
    assert result.status == 200, result
    time.sleep(0.05)
    with connection.cursor() as cursor:  # nothing cancels later statements on this connection
        cursor.execute("SELECT 1")
        assert cursor.fetchone() == (1,)


def test_no_query_starts_after_the_deadline(call, testing_service):
    result = call(PATH + "SlowHandler", {}, headers={"Connect-Timeout-Ms": "100"})
    assert_error(result, "deadline_exceeded")
    assert not Namespace.objects.filter(name="made-after-the-deadline").exists()


def test_a_call_answered_deadline_exceeded_commits_nothing(call, testing_service):
    result = call(PATH + "WriteThenSlow", {}, headers={"Connect-Timeout-Ms": "100"})
    assert_error(result, "deadline_exceeded")
    assert not Namespace.objects.filter(name="written-before-the-deadline").exists()


def test_generous_deadline_lets_the_call_finish(call, testing_service):
    assert call(PATH + "SlowHandler", {}, headers={"Connect-Timeout-Ms": "10000"}).status == 200
    assert Namespace.objects.filter(name="made-after-the-deadline").exists()


# ---- JSON mapping ---------------------------------------------------------------------------


@pytest.mark.parametrize(
    "data",
    [b"{", b"nope", b'{"namespace": "team-a",}', b"\xff\xfe{}", b"[]", b"42", b'"team-a"', b"null", b"true"],
)
def test_malformed_or_non_object_json_is_invalid_argument(call, data):
    assert_error(call(GET, data=data), "invalid_argument")


@pytest.mark.parametrize(
    "procedure, body, field",
    [
        ("GetNamespace", {"namespace": 5}, "namespace"),
        ("GetNamespace", {"namespace": ["team-a"]}, "namespace"),
        ("ListNamespaces", {"pageSize": "ten"}, "pageSize"),
        ("ListNamespaces", {"pageSize": 1.5}, "pageSize"),
        ("ListNamespaces", {"pageSize": 2**40}, "pageSize"),
        ("CreateNamespace", {"namespace": "x", "groups": "eng"}, "groups"),
        # Unknown enum names are dropped with the unknown fields (as protojson's DiscardUnknown does),
        # so the role is missing, and the service says so.
        ("CreateNamespace", {"namespace": "x", "groups": [{"oidcGroup": "g", "role": "ROLE_NOPE"}]}, "groups[0].role"),
        ("IssueApiKey", {"namespace": "team-a", "name": "x", "role": "ADMIN"}, "role"),
        ("CreateNamespace", {"namespace": "x", "quotas": {"maxSandboxes": -1}}, "maxSandboxes"),
        ("IssueApiKey", {"namespace": "team-a", "name": "x", "role": 1, "expiresAt": "yesterday"}, "expiresAt"),
    ],
)
def test_wrong_field_types_are_invalid_argument_naming_the_field(call, procedure, body, field):
    result = call(NS + procedure, body)
    assert_error(result, "invalid_argument")
    snake = "".join("_" + c.lower() if c.isupper() else c for c in field)
    assert field in result.body["message"] or snake in result.body["message"], result


def test_unknown_json_fields_are_ignored(call):
    result = call(GET, {"namespace": "team-a", "bogus": 1, "nested": {"deep": [1, {"x": None}]}})
    assert result.status == 200, result


def test_camel_and_snake_case_field_names(call):
    for n, name in enumerate(("imagePullSecrets", "image_pull_secrets")):
        registry = f"r{n}.example.com"
        body = {"namespace": "team-a", name: [{"registry": registry, "secretRef": "vault://kv/r"}]}
        result = call(NS + "UpdateNamespace", body)
        assert result.status == 200, result
        assert result.body["imagePullSecrets"] == [{"registry": registry, "secretRef": "vault://kv/r"}]
    snake = call(NS + "ListApiKeys", {"page_size": 1, "namespace": "team-a"})
    assert len(snake.body["keys"]) == 1


@pytest.mark.parametrize("role", ["ROLE_OPERATOR", 2])
def test_enums_by_name_and_by_number(call, role):
    result = call(NS + "IssueApiKey", {"namespace": "team-a", "name": "ci", "role": role})
    assert result.status == 200, result
    assert result.body["key"]["role"] == "ROLE_OPERATOR"


def test_unknown_enum_number_is_invalid_argument(call):
    result = call(NS + "IssueApiKey", {"namespace": "team-a", "name": "ci", "role": 99})
    assert_error(result, "invalid_argument")
    assert result.body["message"].startswith("role:")


@pytest.mark.parametrize(
    "procedure, body, field",
    [
        ("IssueApiKey", {"namespace": "team-a", "name": "a\x00b", "role": 1}, "name"),
        ("RevokeApiKey", {"keyId": "key_\x00"}, "keyId"),
        ("ListApiKeys", {"namespace": "team-a\x00"}, "namespace"),
        (
            "UpdateNamespace",
            {"namespace": "team-a", "groups": [{"oidcGroup": "g\x00", "role": 1}]},
            "groups[0].oidcGroup",
        ),
        (
            "UpdateNamespace",
            {"namespace": "team-a", "imagePullSecrets": [{"registry": "ghcr.io", "secretRef": "vault://\x00"}]},
            "imagePullSecrets[0].secretRef",
        ),
    ],
)
@pytest.mark.parametrize("codec", ["json", "proto"])
def test_nul_characters_are_invalid_argument_naming_the_field(call, procedure, body, field, codec):
    # PostgreSQL text cannot hold NUL: unchecked, these were 500s there (and stored as-is on SQLite).
    if codec == "json":
        result = call(NS + procedure, body)
    else:
        message = json_format.ParseDict(body, call.request_type(NS + procedure)())
        result = call(NS + procedure, data=message.SerializeToString(), content_type="application/proto")
    assert_error(result, "invalid_argument")
    assert result.body["message"] == f"{field}: must not contain NUL characters"


# ---- body limit -----------------------------------------------------------------------------


def _padded(size: int) -> bytes:
    """A valid GetNamespace body of exactly `size` bytes (padding in an unknown field)."""
    head = b'{"namespace":"team-a","pad":"'
    return head + b"x" * (size - len(head) - 2) + b'"}'


def test_body_at_the_limit_is_accepted(call, settings):
    settings.RPC_MAX_REQUEST_BYTES = 1024
    assert call(GET, data=_padded(1024)).status == 200


def test_body_over_the_limit_is_resource_exhausted(call, settings):
    settings.RPC_MAX_REQUEST_BYTES = 1024
    assert_error(call(GET, data=_padded(1025)), "resource_exhausted")


def test_default_limit_is_4_mib(call):
    assert call(GET, data=_padded(4 * 1024 * 1024)).status == 200
    assert_error(call(GET, data=_padded(4 * 1024 * 1024 + 1)), "resource_exhausted")


def test_gzip_bomb_past_the_limit_is_resource_exhausted(call, settings):
    settings.RPC_MAX_REQUEST_BYTES = 64 * 1024
    bomb = gzip.compress(_padded(50 * 1024 * 1024))
    assert len(bomb) < settings.RPC_MAX_REQUEST_BYTES
    assert_error(call(GET, data=bomb, headers={"Content-Encoding": "gzip"}), "resource_exhausted")


# ---- routing and methods --------------------------------------------------------------------


@pytest.mark.parametrize(
    "procedure", [NS + "DeleteEverything", "containers.api.v1.NoSuchService/GetNamespace", "containers.api.v2.X/Y"]
)
def test_unknown_procedure_is_404(call, procedure):
    # Connect clients map HTTP 404 to unimplemented (connectrpc.com/docs/protocol#http-to-error-code).
    assert call(procedure, {}).status == 404


@pytest.mark.parametrize("method", ["GET", "PUT", "PATCH", "DELETE", "OPTIONS"])
def test_methods_with_side_effects_take_only_post(call, method):
    result = call(NS + "CreateNamespace", {"namespace": "team-x"}, method=method)
    assert result.status == 405, result
    assert result.response["Allow"].upper() == "POST"
    assert not Namespace.objects.filter(name="team-x").exists()


@pytest.mark.parametrize("method", ["PUT", "PATCH", "DELETE", "OPTIONS"])
def test_methods_without_side_effects_take_get_and_post(call, method):
    result = call(GET, {"namespace": "team-a"}, method=method)
    assert result.status == 405, result
    assert {m.strip() for m in result.response["Allow"].upper().split(",")} == {"GET", "POST"}


# ---- unexpected errors ----------------------------------------------------------------------


def test_unexpected_exception_is_internal_logged_and_leaks_nothing(call, testing_service, caplog):
    with caplog.at_level(logging.ERROR, logger="controlplane.rpc"):
        result = call(PATH + "Crash", {})
    assert_error(result, "internal")
    text = result.raw.decode()
    for leak in (SECRET_IN_CRASH, "RuntimeError", "Traceback", "testing_service"):
        assert leak not in text
    logged = [r for r in caplog.records if r.name == "controlplane.rpc" and r.levelno == logging.ERROR]
    assert len(logged) == 1 and logged[0].exc_info[0] is RuntimeError
    assert "tests.v1.TestingService/Crash" in logged[0].getMessage()


def test_error_details_carry_type_value_and_debug(call):
    # Connect error bodies: {code, message, details: [{type, value, debug}]}; value is unpadded base64.
    result = call(GET, {"namespace": "Not_A_Label"})
    assert_error(result, "invalid_argument")
    (detail,) = result.body["details"]
    assert detail["type"] == "google.rpc.BadRequest"
    value = error_details_pb2.BadRequest.FromString(
        base64.b64decode(detail["value"] + "=" * (-len(detail["value"]) % 4))
    )
    assert [v.field for v in value.field_violations] == ["namespace"]
    assert "=" not in detail["value"]
    assert detail["debug"] == json_format.MessageToDict(value)
