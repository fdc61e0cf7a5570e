"""controlplane.lookups.looked_up: one load per call, shared by authorizer and handler."""

import pytest
from django.test import RequestFactory

from controlplane.errors import Error
from controlplane.lookups import looked_up
from controlplane.rpc.context import serving


def test_loads_once_per_call_and_again_in_the_next_call():
    loads = []

    def load():
        loads.append(1)
        return len(loads)

    with serving(RequestFactory().post("/")):
        assert looked_up(("job", "j1"), load) == 1
        assert looked_up(("job", "j1"), load) == 1
        assert looked_up(("job", "j2"), load) == 2
    with serving(RequestFactory().post("/")):
        assert looked_up(("job", "j1"), load) == 3


def test_outside_a_call_it_just_loads():
    assert looked_up("k", lambda: "row") == "row"
    assert looked_up("k", lambda: "other") == "other"


def test_a_failed_load_is_not_remembered():
    def missing():
        raise Error.not_found("job 'j1' not found")

    with serving(RequestFactory().post("/")):
        with pytest.raises(Error):
            looked_up("j1", missing)
        assert looked_up("j1", lambda: "found") == "found"


def test_reload_loads_again_and_later_lookups_share_the_new_row():
    with serving(RequestFactory().post("/")):
        assert looked_up("j1", lambda: "unlocked") == "unlocked"
        assert looked_up("j1", lambda: "locked", reload=True) == "locked"
        assert looked_up("j1", lambda: "never loaded") == "locked"
