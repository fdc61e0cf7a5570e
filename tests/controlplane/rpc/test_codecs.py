"""controlplane.rpc.codecs.prepared: a response given as its proto3 JSON object."""

import json

from django.test import RequestFactory
from google.protobuf import json_format

from controlplane.rpc.codecs import CODECS, prepared, prepared_page
from controlplane.rpc.context import serving
from uploads.api.v1 import uploads_pb2 as pb

BINARY, JSON = CODECS
OBJ = {"uploads": [{"uploadId": "ü", "sizeBytes": "9223372036854775807", "createdAt": "2024-01-01T00:00:00.120Z"}]}


def test_inside_a_call_json_sends_the_object_and_binary_the_parsed_message():
    expected = json_format.ParseDict(OBJ, pb.ListUploadsResponse())
    with serving(RequestFactory().post("/")):
        message = prepared(pb.ListUploadsResponse, OBJ)
        assert json.loads(JSON.encode(message)) == OBJ == json_format.MessageToDict(expected)
        assert pb.ListUploadsResponse.FromString(BINARY.encode(message)) == expected
        # Any other message, even an equal one, is encoded from its own fields.
        assert json.loads(JSON.encode(pb.ListUploadsResponse())) == {}


def test_outside_a_call_it_is_the_real_message():
    assert prepared(pb.ListUploadsResponse, OBJ) == json_format.ParseDict(OBJ, pb.ListUploadsResponse())


def test_a_prepared_response_does_not_outlive_its_call():
    with serving(RequestFactory().post("/")):
        message = prepared(pb.ListUploadsResponse, OBJ)
    with serving(RequestFactory().post("/")):
        assert json.loads(JSON.encode(message)) == {}


def test_binary_clients_get_the_handlers_own_message_when_it_gives_a_builder():
    built = json_format.ParseDict(OBJ, pb.ListUploadsResponse())
    calls = []

    def build():
        calls.append(1)
        return built

    with serving(RequestFactory().post("/")):
        message = prepared(pb.ListUploadsResponse, OBJ, build)
        assert json.loads(JSON.encode(message)) == OBJ
        assert calls == []  # a JSON client: nothing built
        assert pb.ListUploadsResponse.FromString(BINARY.encode(message)) == built
        assert calls == [1]
    assert prepared(pb.ListUploadsResponse, OBJ, build) is built  # outside a call: the builder's message


def test_a_prepared_page_is_its_rows_and_token_in_both_codecs():
    from containers.api.v1 import namespace_pb2 as npb

    def to_json(name):
        return {"namespace": name}

    def to_proto(name):
        return npb.Namespace(namespace=name)

    with serving(RequestFactory().post("/")):
        full = prepared_page(npb.ListNamespacesResponse, "namespaces", ["a", "b"], "tok", to_json, to_proto)
        empty = prepared_page(npb.ListNamespacesResponse, "namespaces", [], "", to_json, to_proto)
        assert json.loads(JSON.encode(full)) == {
            "namespaces": [{"namespace": "a"}, {"namespace": "b"}],
            "nextPageToken": "tok",
        }
        assert json.loads(JSON.encode(empty)) == {}
        binary = npb.ListNamespacesResponse.FromString(BINARY.encode(full))
        assert [n.namespace for n in binary.namespaces] == ["a", "b"] and binary.next_page_token == "tok"
        assert npb.ListNamespacesResponse.FromString(BINARY.encode(empty)) == npb.ListNamespacesResponse()
