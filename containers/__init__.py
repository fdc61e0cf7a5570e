"""Generated code for the containers.api.v1 proto package (make proto); the Django app is `workloads`."""
