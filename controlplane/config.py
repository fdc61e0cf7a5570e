"""Strict reading of the environment for settings.py.

django-environ takes `DEBUG=maybe` as false, and a DATABASE_URL it cannot parse as an empty
dict that fails later with `KeyError: 'ENGINE'`. Here a bad value raises SettingError, whose
message names the setting and the fix; manage.py and gunicorn print it as one line.
"""

import os
import re
import warnings

import environ
from django.core.exceptions import ImproperlyConfigured

TRUE = {"true", "1", "yes", "on"}
FALSE = {"false", "0", "no", "off"}
DATABASE_URL_FORMS = "postgres://USER:PASSWORD@HOST:5432/NAME or sqlite:///PATH"
SUPPORTED_ENGINES = {"django.db.backends.postgresql", "django.db.backends.sqlite3"}


class SettingError(ImproperlyConfigured):
    """A setting is missing or malformed; the message says which and how to fix it."""


# USER:PASSWORD@ in a URL, however malformed the rest (`postgres//admin:S3cretPw@db`).
_PASSWORD = re.compile(r"(?P<user>[^\s:/@]*):(?P<password>[^\s@/]+)@")


def masked(value: str) -> str:
    """`value` with any URL password replaced by `***`: settings errors echo what was set."""
    return _PASSWORD.sub(lambda m: f"{m['user']}:***@", value)


def _boolean(text: str) -> bool:
    if text.lower() in TRUE:
        return True
    if text.lower() in FALSE:
        return False
    raise ValueError(text)


class StrictEnv(environ.Env):
    def bool(self, var, default=environ.Env.NOTSET):
        return self._parse(var, default, _boolean, "a boolean", "set it to true or false")

    def int(self, var, default=environ.Env.NOTSET):
        return self._parse(var, default, int, "a whole number", f"set it to a whole number, e.g. {var}=10")

    def _parse(self, var, default, parse, what: str, fix: str):
        value = self.str(var, default="").strip()
        if not value:
            if default is environ.Env.NOTSET:
                raise SettingError(f"{var} is not set: {fix}.")
            return default
        try:
            return parse(value)
        except ValueError:
            raise SettingError(f"{var}={masked(value)!r} is not {what}: {fix}.") from None

    def database(self, var: str, default: str) -> dict:
        url = self.str(var, default=default)
        with warnings.catch_warnings():
            warnings.simplefilter("ignore")  # environ warns about unknown schemes; we raise instead
            try:
                config = self.db_url_config(url)
            except Exception:
                config = {}
        engine = config.get("ENGINE")
        if engine not in SUPPORTED_ENGINES or not config.get("NAME"):
            raise SettingError(
                f"{var}={masked(url)!r} is not a database URL this service supports: use {DATABASE_URL_FORMS}."
            )
        return config


def require_secret_key(value: str) -> str:
    if not value:
        raise SettingError(
            "SECRET_KEY is not set and DEBUG is off: set SECRET_KEY to a long random string, e.g. "
            "export SECRET_KEY=$(python3 -c 'import secrets; print(secrets.token_urlsafe(50))'), or set DEBUG=true."
        )
    return value


def report_and_exit(error: SettingError, program: str):
    """Ends the process with the one-line message (no traceback): the fix is in the message."""
    raise SystemExit(f"{program}: configuration error: {error}")


def check_settings(program: str) -> None:
    """Reads the settings (a gunicorn master's on_starting), so that a bad one is one line and
    no worker starts."""
    os.environ.setdefault("DJANGO_SETTINGS_MODULE", "controlplane.settings")
    from django.conf import settings

    try:
        settings.INSTALLED_APPS  # noqa: B018 - reading them is the check
    except SettingError as error:
        report_and_exit(error, program)
