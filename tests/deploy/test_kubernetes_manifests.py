"""deploy/kubernetes/: every object deserializes into the official client's model (its pydantic
models refuse unknown fields and missing required ones), and the objects fit together."""

from __future__ import annotations

import pytest
import yaml
from cprunner.cli import run_parser
from kubernetes import client

from tests.support.live import ROOT

DIRECTORY = ROOT / "deploy" / "kubernetes"
MODELS = {
    "ConfigMap": client.V1ConfigMap,
    "Deployment": client.V1Deployment,
    "Job": client.V1Job,
    "Role": client.V1Role,
    "RoleBinding": client.V1RoleBinding,
    "Service": client.V1Service,
    "ServiceAccount": client.V1ServiceAccount,
}
SECRET_ENV = {"CP_RUNNER_KEY", "SECRET_KEY", "DATABASE_URL"}


def manifests() -> dict[str, list]:
    return {
        path.name: [doc for doc in yaml.safe_load_all(path.read_text()) if doc]
        for path in sorted(DIRECTORY.glob("*.yaml"))
        if path.name != "kustomization.yaml"
    }


def objects() -> list:
    return [MODELS[doc["kind"]].model_validate(doc) for docs in manifests().values() for doc in docs]


def of_kind(kind: str) -> list:
    return [obj for obj in objects() if obj.kind == kind]


def test_every_object_is_a_valid_kubernetes_object():
    found = objects()
    assert {obj.kind for obj in found} == set(MODELS)
    for obj in found:
        assert obj.metadata.name and obj.metadata.namespace is None  # applied into the operator's namespace


def test_a_typo_in_a_field_is_refused():
    (deployment, *_) = [doc for doc in manifests()["runner.yaml"] if doc["kind"] == "Deployment"]
    deployment["spec"]["template"]["spec"]["serviceAccount_Name"] = "cprunner"
    with pytest.raises(ValueError, match="serviceAccount_Name"):
        client.V1Deployment.model_validate(deployment)


def test_kustomization_lists_every_manifest():
    kustomization = yaml.safe_load((DIRECTORY / "kustomization.yaml").read_text())
    assert sorted(kustomization["resources"]) == sorted(manifests())


def test_selectors_match_their_pods_and_services_reach_a_deployment():
    deployments = of_kind("Deployment")
    for deployment in deployments:
        selector = deployment.spec.selector.match_labels
        assert selector.items() <= deployment.spec.template.metadata.labels.items(), deployment.metadata.name
    for service in of_kind("Service"):
        assert any(service.spec.selector.items() <= d.spec.template.metadata.labels.items() for d in deployments)


def test_the_runner_uses_its_service_account_bound_to_a_namespaced_role():
    (runner,) = [d for d in of_kind("Deployment") if d.metadata.name == "cprunner"]
    (binding,) = of_kind("RoleBinding")
    (role,) = of_kind("Role")
    (account,) = of_kind("ServiceAccount")
    assert runner.spec.template.spec.service_account_name == account.metadata.name
    assert (binding.role_ref.kind, binding.role_ref.name) == ("Role", role.metadata.name)  # not a ClusterRole
    assert [(s.kind, s.name) for s in binding.subjects] == [("ServiceAccount", account.metadata.name)]
    assert runner.spec.replicas == 1  # one name, one runner: a runner deletes the Jobs of its name it does not hold


def test_the_runner_arguments_are_cprunner_flags():
    (runner,) = [d for d in of_kind("Deployment") if d.metadata.name == "cprunner"]
    (container,) = runner.spec.template.spec.containers
    args = run_parser().parse_args(container.args)
    assert args.engine == "kubernetes"
    env = {e.name for e in container.env}
    assert {"CP_URL", "CP_RUNNER_KEY", "CP_K8S_NAMESPACE", "CP_RUNNER_NAME"} <= env


def test_secrets_come_from_secrets_never_from_the_manifests():
    for obj in objects():
        template = obj.spec.template if obj.kind in ("Deployment", "Job") else None
        for container in template.spec.containers if template else []:
            for env in container.env or []:
                if env.name in SECRET_ENV:
                    assert env.value is None and env.value_from.secret_key_ref is not None, env.name
    for config_map in of_kind("ConfigMap"):
        assert not SECRET_ENV & set(config_map.data)


def test_the_control_plane_runs_gunicorn_with_the_shipped_config_and_migrates_in_a_job():
    (api,) = [d for d in of_kind("Deployment") if d.metadata.name == "controlplane"]
    (gunicorn,) = api.spec.template.spec.containers
    config = gunicorn.command[gunicorn.command.index("-c") + 1]
    assert gunicorn.command[0] == "gunicorn" and (ROOT / config).is_file()
    assert gunicorn.command[-1] == "controlplane.wsgi" and (ROOT / "controlplane" / "wsgi.py").is_file()
    (migrate,) = of_kind("Job")
    (container,) = migrate.spec.template.spec.containers
    assert container.command[1:3] == ["manage.py", "migrate"] and (ROOT / "manage.py").is_file()
    assert container.image == gunicorn.image and container.env_from == gunicorn.env_from
