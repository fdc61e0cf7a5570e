"""--bucket for the upload commands: a bucket id, or NAMESPACE/NAME."""

from django.core.management.base import CommandError

from controlplane.rpc import Error
from uploads.selectors import get_bucket


def bucket_argument(text: str):
    try:
        if "/" in text:
            namespace, _, name = text.partition("/")
            return get_bucket(namespace=namespace, name=name)
        return get_bucket(bucket_id=text)
    except Error as exc:
        raise CommandError(exc.message) from None
