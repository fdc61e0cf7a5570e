"""containers.api.v1 services: thin views over containers.services and containers.selectors."""
