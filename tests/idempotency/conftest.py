from tests.containers.conftest import backends  # noqa: F401 - recording backends for CreateSandbox
