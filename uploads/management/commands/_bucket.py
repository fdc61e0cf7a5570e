"""--bucket for the upload commands: a bucket id, or NAMESPACE/NAME."""

from controlplane.commands import service_errors
from uploads.selectors import get_bucket


def bucket_argument(text: str):
    with service_errors():
        if "/" in text:
            namespace, _, name = text.partition("/")
            return get_bucket(namespace=namespace, name=name)
        return get_bucket(bucket_id=text)
