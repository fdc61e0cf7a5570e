"""The process engine (development and tests only): the same interface, plain subprocesses."""

from __future__ import annotations

import time

import pytest
from cprunner.engines import ContainerSpec, EngineError
from cprunner.engines.process import ProcessEngine

LABELS = {"cp.runner": "process-test"}


def spec(command: list[str], **fields) -> ContainerSpec:
    return ContainerSpec(name="", image="ignored", command=command, labels=LABELS, **fields)


def test_exit_code_output_and_env(tmp_path):
    engine = ProcessEngine(str(tmp_path))
    process = engine.start(spec(["sh", "-c", 'echo "hi $WHO"; echo err >&2; exit 3'], env={"WHO": "you"}))
    status = engine.wait(process)
    assert (status.exit_code, status.signal) == (3, 0)
    assert b"".join(engine.logs(process)) == b"hi you\nerr\n"
    engine.remove(process)
    assert list(tmp_path.iterdir()) == []


def test_stop_sends_sigterm_then_sigkill(tmp_path):
    engine = ProcessEngine(str(tmp_path))
    polite = engine.start(spec(["sh", "-c", "trap 'exit 0' TERM; echo up; while :; do sleep 0.1; done"]))
    stubborn = engine.start(spec(["sh", "-c", "trap '' TERM; echo up; while :; do sleep 0.1; done"]))
    for process in (polite, stubborn):
        assert next(engine.logs(process)) == b"up\n"
    engine.stop(polite, grace=10)
    assert engine.wait(polite).exit_code == 0
    started = time.monotonic()
    engine.stop(stubborn, grace=0.5)
    assert time.monotonic() - started >= 0.5
    assert engine.wait(stubborn).signal == 9


def test_a_restarted_runner_finds_and_kills_what_the_last_one_left(tmp_path):
    before = ProcessEngine(str(tmp_path))
    process = before.start(spec(["sleep", "60"]))
    pid = before._alive(process)
    after = ProcessEngine(str(tmp_path))  # a new runner process: no Popen, only the records
    [found] = after.list(LABELS)
    assert found.id == process and found.labels == LABELS
    assert after.list({"cp.runner": "another"}) == []
    after.remove(process)
    before.wait(process)  # reaps it (the test's own child)
    assert after.list(LABELS) == []
    assert not (tmp_path / f"{process}.json").exists()
    assert before._alive(process) is None and pid is not None


def test_a_missing_command_is_a_clear_error(tmp_path):
    engine = ProcessEngine(str(tmp_path))
    with pytest.raises(EngineError, match=r"^the process engine runs no images: the work must give a command$"):
        engine.start(spec([]))
