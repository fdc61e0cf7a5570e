"""What the tests expect of the Connect protocol, written from connectrpc.com/docs/protocol.

Kept apart from controlplane.errors.Code on purpose: the tests check the code against the
spec, not against itself.
"""

from __future__ import annotations

from containers.api.v1 import namespace_pb2

NS = "containers.api.v1.NamespaceService/"
NAMESPACE_SERVICE = namespace_pb2.DESCRIPTOR.services_by_name["NamespaceService"]

# Connect error code → HTTP status (connectrpc.com/docs/protocol#error-codes).
HTTP_STATUS = {
    "canceled": 499,
    "unknown": 500,
    "invalid_argument": 400,
    "deadline_exceeded": 504,
    "not_found": 404,
    "already_exists": 409,
    "permission_denied": 403,
    "resource_exhausted": 429,
    "failed_precondition": 400,
    "aborted": 409,
    "out_of_range": 400,
    "unimplemented": 501,
    "internal": 500,
    "unavailable": 503,
    "data_loss": 500,
    "unauthenticated": 401,
}


def assert_error(result, code: str, status: int | None = None) -> None:
    """A well-formed Connect error: JSON {code, message, details?} with the expected code and status."""
    assert (result.status, result.code) == (status or HTTP_STATUS[code], code), result
    assert_error_shape(result)


def assert_error_shape(result) -> None:
    assert result.response["Content-Type"].split(";")[0] == "application/json", result
    body = result.body
    assert isinstance(body, dict), result
    assert set(body) <= {"code", "message", "details"}, body
    assert body["code"] in HTTP_STATUS, body
    assert isinstance(body.get("message", ""), str), body
    for detail in body.get("details", []):
        assert isinstance(detail["type"], str) and isinstance(detail["value"], str), detail


# gRPC status numbers → the Connect code names (connectrpc.com/docs/protocol#error-codes).
GRPC_CODES = ["ok", *HTTP_STATUS]  # canceled = 1 ... unauthenticated = 16, in gRPC's numbering
PROTOCOLS = ["connect", "grpc-web"]


def assert_outcome(result, code: str, status: int | None = None) -> None:
    """Like assert_error, for a result of either protocol (gRPC-Web carries the code in trailers)."""
    if result.protocol == "connect":
        assert_error(result, code, status)
        return
    assert result.code == code, result
    assert isinstance(result.message, str), result
