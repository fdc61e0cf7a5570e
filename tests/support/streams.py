"""Calling a server stream through Django's test client, as a Connect client would."""

from __future__ import annotations

import json


def stream_call(client, procedure: str, body: dict, token: str, read_all: bool = True):
    """A Connect streaming JSON call of a server stream: (response, its bytes). Not read to the
    end (`read_all=False`): closed after the first chunk, as a client that goes away."""
    payload = json.dumps(body).encode()
    response = client.generic(
        "POST", "/" + procedure, b"\x00" + len(payload).to_bytes(4, "big") + payload,
        content_type="application/connect+json", HTTP_AUTHORIZATION=f"Bearer {token}",
    )  # fmt: skip
    received = b""
    try:
        for chunk in response.streaming_content:
            received += chunk
            if not read_all:
                break
    finally:
        response.close()
    return response, received
