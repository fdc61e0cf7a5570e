"""containers.api.v1 services: thin views over workloads.services and workloads.selectors."""
