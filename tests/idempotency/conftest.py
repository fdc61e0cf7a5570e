from tests.containers.conftest import capabilities  # noqa: F401 - CreateSandbox served
