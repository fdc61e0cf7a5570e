#!/usr/bin/env python
"""Django's command-line utility for administrative tasks."""

import os
import sys


def main():
    os.environ.setdefault("DJANGO_SETTINGS_MODULE", "controlplane.settings")
    from django.conf import settings
    from django.core.management import execute_from_command_line

    from controlplane.config import SettingError, report_and_exit

    try:
        settings.INSTALLED_APPS  # noqa: B018 - read the settings now: a bad value is one line, not a traceback
    except SettingError as error:
        report_and_exit(error, "manage.py")
    execute_from_command_line(sys.argv)


if __name__ == "__main__":
    main()
